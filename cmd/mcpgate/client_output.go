package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpgate/mcpgate/mcp"
)

// printJSON writes v as indented JSON, object members of maps sorted.
func printJSON(w io.Writer, v any) error {
	b, err := jsonv2.Marshal(v, jsontext.WithIndent("  "), jsonv2.Deterministic(true))
	if err != nil {
		return fmt.Errorf("encoding the result as JSON: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// table prints aligned columns; the last one is cut to fit the width of
// the terminal (or $COLUMNS, or 80 columns).
type table struct {
	header []string
	rows   [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// minLastColumn is the least room the last column gets, however wide the
// others are.
const minLastColumn = 20

func (t *table) print(w io.Writer, empty string) {
	if len(t.rows) == 0 {
		if empty != "" {
			fmt.Fprintf(w, "(%s)\n", empty)
		}
		return
	}
	const pad = 2
	n := len(t.header)
	widths := make([]int, n)
	for _, r := range append([][]string{t.header}, t.rows...) {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	used := 0
	for _, wd := range widths[:n-1] {
		used += wd + pad
	}
	room := max(termWidth(w)-used, minLastColumn)
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, pad, ' ', 0)
	for _, r := range append([][]string{t.header}, t.rows...) {
		cells := make([]string, n)
		copy(cells, r)
		for i := range cells {
			cells[i] = strings.ReplaceAll(cells[i], "\t", " ")
		}
		cells[n-1] = truncate(cells[n-1], room)
		// Every row has every cell, empty ones too, or tabwriter stops
		// aligning the column there; the padding of empty last cells is
		// trimmed below.
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
	for line := range strings.Lines(buf.String()) {
		fmt.Fprintln(w, strings.TrimRight(line, " \n"))
	}
}

// termWidth is the width of the terminal w writes to, else $COLUMNS,
// else 80.
func termWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok {
		if n := terminalColumns(f); n > 0 {
			return n
		}
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 80
}

// describe is the one-line text of a list entry: its description, or its
// title when it has none.
func describe(title, description string) string {
	if d := oneLine(description); d != "" {
		return d
	}
	return oneLine(title)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// truncate cuts s to n runes, marking the cut with an ellipsis.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// printToolResult prints a tool result for a person: text blocks as they
// are (JSON text indented), a note for each other block, and the
// structured content, indented, when no block is text.
func printToolResult(w io.Writer, res *mcp.CallToolResult) {
	hasText := false
	for _, c := range res.Content {
		if _, ok := c.(*mcp.TextContent); ok {
			hasText = true
		}
		printContent(w, c)
	}
	if !hasText && res.StructuredContent != nil {
		printJSON(w, res.StructuredContent)
	}
}

func printContent(w io.Writer, c mcp.Content) {
	switch c := c.(type) {
	case *mcp.TextContent:
		writeLine(w, indentJSONText(c.Text))
	case *mcp.ImageContent:
		fmt.Fprintf(w, "[image: %s, %s]\n", orUnknown(c.MIMEType), byteSize(len(c.Data)))
	case *mcp.AudioContent:
		fmt.Fprintf(w, "[audio: %s, %s]\n", orUnknown(c.MIMEType), byteSize(len(c.Data)))
	case *mcp.ResourceLink:
		var details []string
		for _, d := range []string{c.Name, c.MIMEType} {
			if d != "" {
				details = append(details, d)
			}
		}
		if c.Size != nil {
			details = append(details, byteSize(int(*c.Size)))
		}
		if d := oneLine(c.Description); d != "" {
			details = append(details, truncate(d, 60))
		}
		fmt.Fprintf(w, "[resource link: %s%s]\n", c.URI, parenthesize(details))
	case *mcp.EmbeddedResource:
		fmt.Fprintf(w, "[resource: %s]\n", summarizeContents(c.Resource))
	default:
		fmt.Fprintf(w, "[%T]\n", c)
	}
}

func summarizeContents(r *mcp.ResourceContents) string {
	if r == nil {
		return "empty"
	}
	if r.Blob != nil {
		return fmt.Sprintf("%s, %s, %s", r.URI, orUnknown(r.MIMEType), byteSize(len(r.Blob)))
	}
	mime := r.MIMEType
	if mime == "" {
		mime = "text"
	}
	return fmt.Sprintf("%s, %s, %s", r.URI, mime, byteSize(len(r.Text)))
}

// printResourceContents prints what resources/read returned: text as it
// is, binary contents summarised; several contents each under its URI.
func printResourceContents(w io.Writer, cs []*mcp.ResourceContents) {
	for i, c := range cs {
		if len(cs) > 1 {
			if i > 0 {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "--- %s%s\n", c.URI, parenthesize(nonEmpty(c.MIMEType)))
		}
		if c.Blob != nil {
			fmt.Fprintf(w, "[binary: %s, %s; use --json for the base64 data]\n", orUnknown(c.MIMEType), byteSize(len(c.Blob)))
			continue
		}
		writeLine(w, c.Text)
	}
}

// printPrompt prints a prompt's description and messages.
func printPrompt(w io.Writer, res *mcp.GetPromptResult) {
	if d := strings.TrimSpace(res.Description); d != "" {
		fmt.Fprintf(w, "%s\n\n", d)
	}
	for i, m := range res.Messages {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "[%s]\n", m.Role)
		printContent(w, m.Content)
	}
}

// writeLine writes s and a newline unless s ends with one.
func writeLine(w io.Writer, s string) {
	io.WriteString(w, s)
	if !strings.HasSuffix(s, "\n") {
		io.WriteString(w, "\n")
	}
}

// indentJSONText indents text that is a JSON object or array, as tools
// often return their structured result as text; other text is returned
// unchanged.
func indentJSONText(s string) string {
	t := strings.TrimSpace(s)
	if t == "" || (t[0] != '{' && t[0] != '[') || !json.Valid([]byte(t)) {
		return s
	}
	var buf bytes.Buffer
	if json.Indent(&buf, []byte(t), "", "  ") != nil {
		return s
	}
	return buf.String()
}

func byteSize(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d bytes", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1000)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func parenthesize(details []string) string {
	if len(details) == 0 {
		return ""
	}
	return " (" + strings.Join(details, ", ") + ")"
}
