package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
)

func readRecords(path string) ([]record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var recs []record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		recs = append(recs, r)
	}
	return recs, sc.Err()
}

// A column of the results table: a figure of one phase, the median over
// the repetitions. Two-figure columns (p50/p99) have get2.
type column struct {
	title  string
	phase  string
	get    func(*record) float64
	get2   func(*record) float64
	format string
	higher bool // higher is better
}

func rps(r *record) float64    { return r.RPS }
func cpu(r *record) float64    { return r.CPUUsPer }
func p50(r *record) float64    { return r.P50Ms }
func p99(r *record) float64    { return r.P99Ms }
func rssMiB(r *record) float64 { return float64(r.RSSPeakKB) / 1024 }

var columns = []column{
	// The columns.
	{"stdio seq req/s", "stdio_seq", rps, nil, "%.0f", true},
	{"stdio 64 in flight req/s", "stdio_pipe64", rps, nil, "%.0f", true},
	{"HTTP 1 client req/s", "http_json_c1", rps, nil, "%.0f", true},
	{"HTTP 32 clients req/s", "http_json_c32", rps, nil, "%.0f", true},
	{"CPU µs/stdio echo", "stdio_seq", cpu, nil, "%.0f", false},
	{"CPU µs/HTTP echo (32 clients)", "http_json_c32", cpu, nil, "%.0f", false},
	{"peak RSS MiB", "stdio_pipe64", rssMiB, nil, "%.1f", false},
	{"start-up ms", "startup", func(r *record) float64 { return r.StartupMs }, nil, "%.1f", false},
	// More.
	{"SSE 1 client req/s", "http_sse_c1", rps, nil, "%.0f", true},
	{"SSE 32 clients req/s", "http_sse_c32", rps, nil, "%.0f", true},
	{"2026-07-28 1 client req/s", "http_perrequest_c1", rps, nil, "%.0f", true},
	{"2026-07-28 32 clients req/s", "http_perrequest_c32", rps, nil, "%.0f", true},
	{"CPU µs/SSE echo (32 clients)", "http_sse_c32", cpu, nil, "%.0f", false},
	{"CPU µs/2026-07-28 echo (32 clients)", "http_perrequest_c32", cpu, nil, "%.0f", false},
	{"stdio seq p50/p99 ms", "stdio_seq", p50, p99, "%.3f", false},
	{"stdio 64 in flight p50/p99 ms", "stdio_pipe64", p50, p99, "%.2f", false},
	{"HTTP 1 client p50/p99 ms", "http_json_c1", p50, p99, "%.3f", false},
	{"HTTP 32 clients p50/p99 ms", "http_json_c32", p50, p99, "%.2f", false},
	{"KiB per idle session", "idle_sessions", func(r *record) float64 { return r.SessionKB }, nil, "%.1f", false},
	{"tools/list of 1,000 p50 ms", "toolslist", p50, nil, "%.2f", false},
	{"CPU µs/tools/list of 1,000", "toolslist", cpu, nil, "%.0f", false},
}

var serverOrder = []string{"mcpgate", "baseline", "go-sdk", "mcp-go", "ts", "limit"}

// cell is the median of a column for one server: ok false when there is
// no figure (na says why, if it does not apply), flagged when a
// repetition had errors or stopped early.
type cell struct {
	v, v2   float64
	ok      bool
	na      string
	flagged bool
}

func cellOf(recs []record, server string, col column) cell {
	var vs, vs2 []float64
	c := cell{}
	for i := range recs {
		r := &recs[i]
		if r.Server != server || r.Phase != col.phase {
			continue
		}
		if r.NA != "" {
			c.na = r.NA
			continue
		}
		if r.errorCount() > 0 || r.Failed != "" {
			c.flagged = true
		}
		if v := col.get(r); v > 0 {
			vs = append(vs, v)
			if col.get2 != nil {
				vs2 = append(vs2, col.get2(r))
			}
		}
	}
	if len(vs) > 0 {
		c.ok, c.v = true, median(vs)
		if col.get2 != nil {
			c.v2 = median(vs2)
		}
	}
	return c
}

func (c cell) String(col column) string {
	switch {
	case c.ok:
		s := fmt.Sprintf(col.format, c.v)
		if col.get2 != nil {
			s += " / " + fmt.Sprintf(col.format, c.v2)
		}
		if c.flagged {
			s += " !"
		}
		return s
	case c.na != "":
		return "n/a"
	case c.flagged:
		return "failed"
	}
	return "–"
}

func ratio(a, b float64) string {
	if b == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func renderTables(recs []record, env string) string {
	var b strings.Builder
	labels := map[string]string{}
	var servers []string
	for _, r := range recs {
		if r.Label != "" && labels[r.Server] == "" {
			labels[r.Server] = r.Label
		}
	}
	for _, s := range serverOrder {
		if labels[s] != "" {
			servers = append(servers, s)
		}
	}
	b.WriteString("## Results\n\n")
	for _, line := range strings.Split(strings.TrimSpace(env), "\n") {
		fmt.Fprintf(&b, "    %s\n", line)
	}
	b.WriteString("\nMedians over the repetitions. ↑: higher is better, ↓: lower is better. `!`: a repetition had errors (see the list below), n/a: the server has no such mode.\n\n")
	head := func(first string) {
		b.WriteString("| " + first + " |")
		for _, col := range columns {
			arrow := " ↓"
			if col.higher {
				arrow = " ↑"
			}
			b.WriteString(" " + col.title + arrow + " |")
		}
		b.WriteString("\n|---|")
		for range columns {
			b.WriteString("---:|")
		}
		b.WriteString("\n")
	}
	head("server")
	cells := map[string][]cell{}
	for _, s := range servers {
		fmt.Fprintf(&b, "| %s |", labels[s])
		for _, col := range columns {
			c := cellOf(recs, s, col)
			cells[s] = append(cells[s], c)
			b.WriteString(" " + c.String(col) + " |")
		}
		b.WriteString("\n")
	}

	if len(cells["mcpgate"]) > 0 && len(servers) > 1 {
		b.WriteString("\n## mcpgate compared\n\nmcpgate's figure divided by the other's, per column: above 1× is better for ↑ columns (req/s), below 1× for ↓ columns (CPU, memory, time).\n\n")
		head("ratio")
		for _, s := range servers {
			if s == "mcpgate" {
				continue
			}
			name := s
			if s == "baseline" {
				name += " (" + labels[s] + ")"
			}
			fmt.Fprintf(&b, "| mcpgate ÷ %s |", name)
			for i, col := range columns {
				m, o := cells["mcpgate"][i], cells[s][i]
				switch {
				case !m.ok || !o.ok:
					b.WriteString(" – |")
				case col.get2 != nil:
					b.WriteString(" " + ratio(m.v, o.v) + " / " + ratio(m.v2, o.v2) + " |")
				default:
					b.WriteString(" " + ratio(m.v, o.v) + " |")
				}
			}
			b.WriteString("\n")
		}
	}

	gw := gatewayTable(recs)
	if gw != "" {
		b.WriteString("\n## The gateway hop\n\ntools/call echo one at a time, directly to mcpgate's echo server and through `mcpgate serve --config` with that server as its upstream (`echo_echo`). The limitproxy row is a net/http forwarder doing no MCP work in the gateway's place: what one HTTP hop adds on this machine. Medians over the repetitions; gateway CPU is the gateway process's (or the proxy's) own per call. Rows marked baseline ran the same phases on the baseline's echo server and gateway.\n\n")
		b.WriteString(gw)
	}

	var bad []string
	for _, r := range recs {
		if r.NA == "" && (r.errorCount() > 0 || r.Failed != "") {
			bad = append(bad, fmt.Sprintf("- rep %d %s %s: errors %v %s", r.Rep, r.Server, r.Phase, r.Errors, r.Failed))
		}
	}
	if len(bad) > 0 {
		b.WriteString("\n## Errors\n\n")
		if len(bad) > 30 {
			bad = append(bad[:30], fmt.Sprintf("- … and %d more (raw.jsonl)", len(bad)-30))
		}
		b.WriteString(strings.Join(bad, "\n") + "\n")
	}
	var notes []string
	seen := map[string]bool{}
	for _, r := range recs {
		if r.NA != "" && !seen[r.Server+r.NA] {
			seen[r.Server+r.NA] = true
			notes = append(notes, fmt.Sprintf("- %s, %s: %s", r.Server, strings.TrimSuffix(strings.TrimSuffix(r.Phase, "_c1"), "_c32"), r.NA))
		}
	}
	if len(notes) > 0 {
		slices.Sort(notes)
		notes = slices.Compact(notes)
		b.WriteString("\nn/a:\n\n" + strings.Join(notes, "\n") + "\n")
	}
	return b.String()
}

// gatewayTable is the gateway hop's table: a row per path, each followed
// by the baseline's where the run had one.
func gatewayTable(recs []record) string {
	rows := []struct{ name, direct, via string }{
		{"stdio upstream, client over HTTP", "gw_stdio_direct", "gw_http_via_stdio"},
		{"HTTP upstream, client over HTTP", "gw_http_direct", "gw_http_via_http"},
		{"HTTP upstream through limitproxy (no MCP work)", "gw_http_direct", "gw_http_via_limit"},
		{"stdio upstream, client over stdio", "gw_stdio_direct", "gw_stdio_via_stdio"},
	}
	baseline := ""
	for _, r := range recs {
		if r.Server == gatewayBaseline {
			baseline = strings.TrimSuffix(r.Label, " serve --config")
			break
		}
	}
	var b strings.Builder
	any := false
	b.WriteString("| path | direct p50 ms | direct p99 ms | via gateway p50 ms | via gateway p99 ms | added p50 ms | added p99 ms | via gateway req/s | gateway CPU µs/call |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, row := range rows {
		for _, server := range []string{"gateway", gatewayTraced, gatewayBaseline} {
			d, v := gatewayCell(recs, server, row.direct), gatewayCell(recs, server, row.via)
			// A path without its via phase is shown only when the
			// direct phase failed first (the baseline has no limitproxy).
			if !v.seen && !d.flagged {
				continue
			}
			any = true
			name := row.name
			switch server {
			case gatewayBaseline:
				name += ", baseline " + baseline
			case gatewayTraced:
				name += ", traced (sampler 1.0, OTLP)"
			}
			b.WriteString(gatewayRow(name, d, v))
		}
	}
	if !any {
		return ""
	}
	return b.String()
}

// A gwCell is the medians of one gateway phase of one build; seen says
// whether the run has records of it at all.
type gwCell struct {
	cell
	rps, cpuUs float64
	seen       bool
}

func gatewayCell(recs []record, server, phase string) (c gwCell) {
	var p50s, p99s, rs, cs []float64
	for i := range recs {
		r := &recs[i]
		if r.Server != server || r.Phase != phase {
			continue
		}
		c.seen = true
		if r.errorCount() > 0 || r.Failed != "" {
			c.flagged = true
		}
		if r.P50Ms > 0 {
			p50s = append(p50s, r.P50Ms)
			p99s = append(p99s, r.P99Ms)
			rs = append(rs, r.RPS)
			cs = append(cs, r.CPUUsPer)
		}
	}
	if len(p50s) > 0 {
		c.ok, c.v, c.v2 = true, median(p50s), median(p99s)
		c.rps, c.cpuUs = median(rs), median(cs)
	}
	return c
}

func gatewayRow(name string, d, v gwCell) string {
	fnum := func(c gwCell, x float64, format string) string {
		s := "–"
		if c.ok {
			s = fmt.Sprintf(format, x)
		}
		if c.flagged {
			s += " !"
		}
		return s
	}
	f := func(c gwCell, x float64) string { return fnum(c, x, "%.3f") }
	added := func(a, b float64) string {
		if !d.ok || !v.ok {
			return "–"
		}
		return fmt.Sprintf("%+.3f", a-b)
	}
	return fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", name,
		f(d, d.v), f(d, d.v2), f(v, v.v), f(v, v.v2), added(v.v, d.v), added(v.v2, d.v2), fnum(v, v.rps, "%.0f"), fnum(v, v.cpuUs, "%.0f"))
}
