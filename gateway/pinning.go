package gateway

import (
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/gateway/pins"
	"github.com/mcpgate/mcpgate/internal/redact"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// Tool-definition pins. An upstream may change a tool's description or
// schema at any time, and a model reads the new text as if the user had
// written it. Each listing of an upstream passes through applyPins
// before it is published: every tool's definition (as the upstream
// defines it, before the configuration's renames and descriptions) is
// compared with the one pinned for it (gateway/pins), and the server's
// policy decides what is published:
//
//   - warn: the tool as the upstream offers it; a change is logged and
//     audited with its diff. A tool first seen is pinned as it is.
//   - block: the pinned definition, whose calls are refused
//     (CodeDefinitionChanged) until an operator approves the change. A
//     tool with no approved definition is withheld.
//   - approve: a changed or new tool is withheld until approved, and so
//     is one the scanner flags that nobody approved by name.
//
// The registry serves one definition to everyone, so a tenant whose
// policy is stricter than the server's is kept from what the server's
// policy publishes unapproved (filter): for that tenant block acts as
// approve.
//
// The store is read once and written once per listing, outside the
// gateway's lock. Approvals made elsewhere (mcpgate pins approve, in
// another process, or another replica sharing a Postgres store) are
// noticed by polling the store's version (watchPins); those made
// through the gateway republish at once.

// pinView is what the pins decided of one upstream's listing, by
// published tool name.
type pinView struct {
	unapproved map[string]bool // published, not approved: hidden from stricter tenants
	blocked    map[string]bool // the pinned definition is published; calls are refused
	withheld   int
	flagged    int
}

// pinPollInterval is how often the store is asked whether another
// process changed it: a CLI approval shows within about this long.
const pinPollInterval = time.Second

// recordPolicy is the strictest pin policy of the server and of the
// tenants that see it: what decides whether a tool first seen is pinned
// on first use.
func (g *Gateway) recordPolicy(server, policy string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, t := range g.cfg.Tenants {
		if t != nil && t.Pins != "" && (len(t.Servers) == 0 || slices.Contains(t.Servers, server)) {
			policy = pins.Stricter(policy, t.Pins)
		}
	}
	return policy
}

// applyPins is the listing the pins let through: a new catalog and tool
// list (raw is kept as it is, to be decided on again later). It runs
// under u.pubMu.
func (g *Gateway) applyPins(u *upstream, raw *listing) *listing {
	cat := *raw.cat
	cat.tools, cat.tasks = maps.Clone(raw.cat.tools), maps.Clone(raw.cat.tasks)
	cat.pins = pinView{}
	l := *raw
	l.cat, l.tools = &cat, nil
	if u.local != nil {
		l.tools = raw.tools // the built-ins are the gateway's own code
		return &l
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	server := u.cfg.Name
	policy := cmp.Or(u.cfg.Pins, config.PinsWarn)
	record := g.recordPolicy(server, policy)
	stored, err := g.pins.Server(ctx, server)
	if err != nil {
		// Without the pins nothing can be compared: warn publishes (to
		// no stricter tenant), the stricter policies withhold until the
		// store answers again.
		u.logger.Error("gateway: could not read the tool pins", "error", err, "policy", policy)
		if pins.Rank(policy) == 0 {
			l.tools = raw.tools
			for _, t := range raw.tools {
				if pins.Rank(record) > 0 { // nothing is known approved: hidden from stricter tenants
					cat.pins.unapproved = setKey(cat.pins.unapproved, t.Name)
				}
			}
		} else {
			cat.tools, cat.tasks, cat.pins.withheld = map[string]string{}, map[string]string{}, len(raw.tools)
			cat.sum = sha256.Sum256(append(raw.cat.sum[:], "unread pins"...))
		}
		return &l
	}
	sum := sha256.New()
	sum.Write(raw.cat.sum[:])
	flagged := make(map[string][]pins.Finding, len(raw.sources))
	var changes []pins.Change
	var events []pinEvent
	for i := range raw.sources {
		src := &raw.sources[i]
		pub := raw.tools[i].Name
		if err := u.pinSource(src); err != nil {
			u.logger.Error("gateway: could not pin a tool; withheld", "tool", src.tool.Name, "error", err)
			delete(cat.tools, pub)
			delete(cat.tasks, pub)
			fmt.Fprintf(sum, "%s\x00unpinned\x00", pub)
			continue
		}
		flagged[src.hash] = src.flagged
		pin := stored[src.tool.Name]
		dec := pins.Decide(server, policy, record, pin, src.def, src.hash, len(src.flagged) > 0)
		if dec.Change != nil {
			changes = append(changes, *dec.Change)
			if dec.Event != "" || len(src.flagged) > 0 && dec.Change.Kind != pins.ChangeSettle {
				events = append(events, pinEvent{pub: pub, src: src, pin: pin, dec: dec})
			}
		}
		if t := u.pinOutcome(&cat, &dec, raw.tools[i], src, pin); t != nil {
			l.tools = append(l.tools, t)
		}
		fmt.Fprintf(sum, "%s\x00%d\x00%v\x00%v\x00", pub, dec.Outcome, dec.Unapproved, dec.Blocked)
		if dec.Outcome == pins.PublishPinned {
			sum.Write([]byte(pin.Hash))
		}
	}
	u.flagged = flagged
	copy(cat.sum[:], sum.Sum(nil))
	if err := g.pins.Write(ctx, changes); err != nil {
		u.logger.Error("gateway: could not record the tool pins; they are decided again at the next listing", "error", err)
	}
	g.pinEvents(u, policy, len(stored) == 0, events)
	return &l
}

// pinSource works out, once per listing, the definition of a source
// tool, its hash and what the scanner flags in it (scanned once per
// definition, for as long as the upstream offers it).
func (u *upstream) pinSource(src *toolSource) error {
	if src.hash != "" {
		return nil
	}
	d, err := pins.Of(src.tool)
	if err != nil {
		return err
	}
	src.def, src.hash = d, d.Hash()
	fs, ok := u.flagged[src.hash]
	if !ok {
		fs = pins.Scan(d)
	}
	src.flagged = fs
	return nil
}

// pinOutcome applies a decision to the catalog and returns the tool to
// publish, or nil when it is withheld.
func (u *upstream) pinOutcome(cat *catalog, dec *pins.Decision, t *mcp.Tool, src *toolSource, pin *pins.Pin) *mcp.Tool {
	pub := t.Name
	if len(src.flagged) > 0 {
		cat.pins.flagged++
	}
	if dec.Outcome == pins.PublishPinned {
		var err error
		if t, err = pinnedTool(u, src, pin, pub); err != nil {
			u.logger.Error("gateway: the pinned definition does not decode; withheld", "tool", src.tool.Name, "error", err)
			dec.Outcome = pins.Withhold
		}
	}
	switch dec.Outcome {
	case pins.Withhold:
		delete(cat.tools, pub)
		delete(cat.tasks, pub)
		cat.pins.withheld++
		return nil
	case pins.PublishPinned:
		cat.pins.blocked = setKey(cat.pins.blocked, pub)
	}
	if dec.Unapproved {
		cat.pins.unapproved = setKey(cat.pins.unapproved, pub)
	}
	return t
}

func setKey(m map[string]bool, k string) map[string]bool {
	if m == nil {
		m = map[string]bool{}
	}
	m[k] = true
	return m
}

// pinnedTool is the tool as its pin approved it, published as the
// configuration shapes it.
func pinnedTool(u *upstream, src *toolSource, pin *pins.Pin, pub string) (*mcp.Tool, error) {
	d, err := pins.Parse(pin.Definition)
	if err != nil {
		return nil, err
	}
	t, err := d.Apply(src.tool)
	if err != nil {
		return nil, err
	}
	return u.shapeTool(t, pub, src.tasks), nil
}

// pinEvent is a definition recorded for the first time, to log and audit.
type pinEvent struct {
	pub string
	src *toolSource
	pin *pins.Pin
	dec pins.Decision
}

// maxPinDetail bounds an audit record's diff.
const maxPinDetail = 4096

// pinEvents logs and audits what a listing's pins recorded: on a
// server's first listing one line (and, where tools are withheld, one
// record) for all its tools; later, one per new or changed tool. A
// definition the scanner flags is always audited on its own.
func (g *Gateway) pinEvents(u *upstream, policy string, first bool, events []pinEvent) {
	server := u.cfg.Name
	now := time.Now()
	var firstNames []string
	withheld := 0
	for _, e := range events {
		outcome := pinOutcome(e.dec)
		approve := fmt.Sprintf("mcpgate pins approve %s/%s", server, e.src.tool.Name)
		if len(e.src.flagged) > 0 {
			var rules []string
			for _, f := range e.src.flagged {
				rules = append(rules, f.String())
			}
			detail := clip(strings.Join(rules, "\n"))
			u.logger.Warn("gateway: the scanner flags a tool's definition as suspicious", "tool", e.pub, "policy", policy, "outcome", outcome, "findings", detail, "approve", approve)
			g.auditPin(AuditRecord{Method: "pins/suspicious", Tool: e.pub, Upstream: server, Outcome: outcome, Detail: detail, Time: now})
		}
		switch {
		case e.dec.Event == "":
		case first:
			firstNames = append(firstNames, e.pub)
			if e.dec.Outcome == pins.Withhold {
				withheld++
			}
		case e.dec.Event == "new":
			u.logger.Warn("gateway: the upstream offers a new tool", "tool", e.pub, "policy", policy, "outcome", outcome, "approve", approve)
			g.auditPin(AuditRecord{Method: "pins/new", Tool: e.pub, Upstream: server, Outcome: outcome, Detail: clip(pins.Diff(pins.Definition{}, e.src.def)), Time: now})
		case e.dec.Event == "changed":
			old, _ := pins.Parse(e.pin.Definition)
			diff := clip(pins.Diff(old, e.src.def))
			u.logger.Warn("gateway: the upstream changed a tool's definition", "tool", e.pub, "policy", policy, "outcome", outcome, "diff", diff, "approve", approve)
			g.auditPin(AuditRecord{Method: "pins/changed", Tool: e.pub, Upstream: server, Outcome: outcome, Detail: diff, Time: now})
		}
	}
	if len(firstNames) == 0 {
		return
	}
	if withheld == 0 {
		u.logger.Info("gateway: recorded the definitions of a server's tools on first sight", "tools", len(firstNames), "policy", policy)
		return
	}
	u.logger.Warn("gateway: withholding the tools of a server seen for the first time until an operator approves them", "tools", withheld, "policy", policy, "approve", "mcpgate pins approve "+server)
	g.auditPin(AuditRecord{Method: "pins/new", Upstream: server, Outcome: "withheld", Detail: fmt.Sprintf("first listing: %d tools withheld until approved (mcpgate pins approve %s): %s", withheld, server, strings.Join(firstNames, ", ")), Time: now})
}

func pinOutcome(d pins.Decision) string {
	switch d.Outcome {
	case pins.Withhold:
		return "withheld"
	case pins.PublishPinned:
		return "blocked"
	}
	return "published"
}

// clip bounds a diff or a list of findings for the log and the audit
// log: an upstream's definition may be megabytes.
func clip(s string) string {
	if len(s) <= maxPinDetail {
		return s
	}
	cut := maxPinDetail
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "… (mcpgate pins diff shows all of it)"
}

// auditPin writes one pin event (its Time, Method, Tool, Upstream,
// Outcome and Detail) to the audit log, when there is one.
func (g *Gateway) auditPin(rec AuditRecord) {
	if g.audit == nil {
		return
	}
	rec.Detail = redact.String(rec.Detail)
	g.audit.Record(rec)
}

// watchPins republishes every upstream when another process changes
// the pin store (an approval, a reset). A store that stops answering (a
// Postgres server restarting) is logged once, and again when it
// answers: approvals made meanwhile are noticed then.
func (g *Gateway) watchPins(ctx context.Context) {
	last, err := g.pins.Version(ctx)
	failing := err != nil
	if failing {
		g.logger.Warn("gateway: cannot watch the pin store for approvals made elsewhere", "error", err)
	}
	tick := time.NewTicker(pinPollInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		v, err := g.pins.Version(ctx)
		switch {
		case err != nil:
			if !failing && ctx.Err() == nil {
				g.logger.Warn("gateway: the pin store does not answer; approvals made elsewhere are noticed once it does", "error", err)
			}
			failing = true
			continue
		case failing:
			g.logger.Info("gateway: the pin store answers again")
			failing = false
		}
		if v == last {
			continue
		}
		last = v
		g.republishAll()
	}
}

// republishAll lets the pins decide again on every upstream's listing.
func (g *Gateway) republishAll() {
	g.mu.Lock()
	ups := slices.Collect(maps.Values(g.upstreams))
	g.mu.Unlock()
	for _, u := range ups {
		g.republish(u)
	}
}

// ApprovePins approves what the pins of server hold back (tool "" for
// every tool the scanner does not flag; see pins.Store.Approve) and
// publishes the approved definitions at once. by names who approved,
// for the audit log.
func (g *Gateway) ApprovePins(ctx context.Context, server, tool, hash, by string) ([]pins.Approval, error) {
	as, err := g.pins.Approve(ctx, server, tool, hash)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	for _, a := range as {
		if a.Skipped == "" {
			g.auditPin(AuditRecord{Method: "pins/approved", Tool: a.Pin.Tool, Upstream: server, Outcome: "approved", Detail: "approved by " + by + ": " + a.Pin.Hash, Time: now})
		}
	}
	g.republishServer(server)
	return as, nil
}

// ResetPins forgets the pins of server (tool "" for all of them): the
// upstream's tools are met again as new, under the server's policy.
func (g *Gateway) ResetPins(ctx context.Context, server, tool, by string) (int, error) {
	n, err := g.pins.Reset(ctx, server, tool)
	if err != nil {
		return 0, err
	}
	g.auditPin(AuditRecord{Method: "pins/reset", Tool: tool, Upstream: server, Outcome: "reset", Detail: fmt.Sprintf("reset by %s: %d pins", by, n), Time: time.Now()})
	g.republishServer(server)
	return n, nil
}

func (g *Gateway) republishServer(server string) {
	g.mu.Lock()
	u := g.upstreams[server]
	g.mu.Unlock()
	if u != nil {
		g.republish(u)
	}
}

// pinBlocked refuses a call of a tool whose definition changed under
// pins: block, until an operator approves the change.
func (g *Gateway) pinBlocked(rt *route) error {
	if !rt.blocked {
		return nil
	}
	return jsonrpc.Errorf(CodeDefinitionChanged, "Tool %q is blocked: its server changed the tool's definition, and the gateway serves the approved one and refuses calls until an operator reviews the change (mcpgate pins diff %s/%s) and approves it (mcpgate pins approve %s/%s)",
		rt.name, rt.server, rt.orig, rt.server, rt.orig).WithData(map[string]any{"server": rt.server, "tool": rt.orig})
}

// pinHidden reports whether a tenant's pin policy, stricter than the
// server's, keeps it from a published tool (g.mu held).
func (g *Gateway) pinHidden(t *config.Tenant, name string) bool {
	if t.Pins == "" {
		return false
	}
	u := g.toolOwner[name]
	if u == nil || u.catalog == nil || !u.catalog.pins.unapproved[name] {
		return false
	}
	return pins.Rank(t.Pins) > pins.Rank(u.cfg.Pins)
}

// pinCounts adds up the pins' decisions over the upstreams, for metrics.
func (g *Gateway) pinCounts() (withheld, blocked, unapproved, flagged int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, u := range g.upstreams {
		if c := u.catalog; c != nil {
			withheld += c.pins.withheld
			blocked += len(c.pins.blocked)
			unapproved += len(c.pins.unapproved) - len(c.pins.blocked)
			flagged += c.pins.flagged
		}
	}
	return
}
