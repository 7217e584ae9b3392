package pins

import "github.com/mcpgate/mcpgate/gateway/config"

// Rank orders the policies by strictness: warn (and unset) 0, block 1,
// approve 2.
func Rank(policy string) int {
	switch policy {
	case config.PinsBlock:
		return 1
	case config.PinsApprove:
		return 2
	}
	return 0
}

// Stricter returns the stricter of two policies ("" is warn).
func Stricter(a, b string) string {
	if Rank(b) > Rank(a) {
		return b
	}
	if a == "" {
		return config.PinsWarn
	}
	return a
}

// Outcome is what the gateway publishes of a tool.
type Outcome int

const (
	// Publish the definition the upstream offers now.
	Publish Outcome = iota
	// PublishPinned: publish the approved definition instead (block).
	PublishPinned
	// Withhold the tool.
	Withhold
)

// Decision is what to do with one tool after a listing.
type Decision struct {
	Outcome Outcome
	// Unapproved: what is published is not an approved definition
	// vouched for (warn's changes and new tools, block's pinned
	// definition standing in for a change, a definition the scanner
	// flags that nobody approved by name). A tenant whose policy is
	// stricter than the server's does not see the tool.
	Unapproved bool
	// Blocked: calls are refused until the change is approved (block).
	Blocked bool
	// Change is what to record; nil when the store is up to date.
	Change *Change
	// Event is "new" or "changed" when the definition is recorded for
	// the first time, to be logged and audited once; "" otherwise.
	Event string
}

// Decide says what to publish of a tool of server whose upstream offers
// d (with hash h), given its pin (nil for a tool never seen) and the server's
// policy. record is the strictest policy of the server and of the
// tenants that see it: a tool first seen is approved on first use only
// when that is warn, so that a stricter tenant never sees a definition
// nobody approved. flagged says whether the scanner flags d.
//
// Under approve a flagged definition is withheld until an operator
// approves it by name, even one pinned on first use.
func Decide(server, policy, record string, pin *Pin, d Definition, h string, flagged bool) Decision {
	switch {
	case pin == nil || pin.Hash == "": // new: nothing approved yet
		if Rank(record) == 0 {
			dec := Decision{Outcome: Publish, Unapproved: flagged, Change: &Change{Kind: ChangePin, Server: server, Tool: d.Name, Def: d}}
			if pin == nil {
				dec.Event = "new"
			}
			return dec
		}
		var dec Decision
		if pin == nil || pin.SeenHash != h {
			dec.Change = &Change{Kind: ChangeSeen, Server: server, Tool: d.Name, Def: d}
			dec.Event = "new"
		}
		if Rank(policy) == 0 {
			dec.Outcome, dec.Unapproved = Publish, true
		} else {
			dec.Outcome = Withhold
		}
		return dec
	case pin.Hash == h: // the approved definition
		var dec Decision
		if pin.SeenHash != "" {
			dec.Change = &Change{Kind: ChangeSettle, Server: server, Tool: d.Name, Expect: h}
		}
		vouched := !flagged || pin.ApprovedBy == ByOperator
		if !vouched && Rank(policy) == 2 {
			dec.Outcome = Withhold
			return dec
		}
		dec.Outcome, dec.Unapproved = Publish, !vouched
		return dec
	default: // changed
		var dec Decision
		if pin.SeenHash != h {
			dec.Change = &Change{Kind: ChangeSeen, Server: server, Tool: d.Name, Def: d, Expect: pin.Hash}
			dec.Event = "changed"
		}
		switch Rank(policy) {
		case 0:
			dec.Outcome, dec.Unapproved = Publish, true
		case 1:
			dec.Outcome, dec.Unapproved, dec.Blocked = PublishPinned, true, true
		default:
			dec.Outcome = Withhold
		}
		return dec
	}
}
