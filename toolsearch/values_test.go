package toolsearch

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate/mcp"
)

func TestQueryValuesAreTakenOutOfTheWords(t *testing.T) {
	const (
		U, P, E, N, D, I = valueURL, valuePath, valueEmail, valueNumber, valueDate, valueID
	)
	for _, tc := range []struct {
		query string
		words string // what is left, as words
		kinds []valueKind
	}{
		{"fetch http://127.0.0.1:43685/ and return the markdown", "fetch and return the markdown", []valueKind{U}},
		{`open ("https://example.com/a?b=1").`, "open", []valueKind{U}},
		{"open <https://example.com/a> and www.example.org", "open and", []valueKind{U, U}},
		{"add 2 and 3", "add and", []valueKind{N, N}},
		{"pay $1,250.50 or 15% or -3 or #42", "pay or or or", []valueKind{N, N, N, N}},
		{"read /tmp/notes.txt", "read txt", []valueKind{P}},
		{`extract C:\docs\manual.pdf, ~/a/b and ./c`, "extract pdf and", []valueKind{P, P, P}},
		{"lint src/app.tsx and /var/log/syslog.1", "lint tsx and", []valueKind{P, P}},
		{"mail alice@example.com.", "mail", []valueKind{E}},
		{"install lodash@4.17.21", "install", []valueKind{I}},
		{"meet on 2025-03-14 at 10:00 or 14/03/2025T9:30", "meet on at or", []valueKind{D, D, D}},
		{"set session:42 for PROJ-123", "set for", []valueKind{I, I}},
		{"refund pi_3MtwBwLkdIwHu7ix28a3tqPa and show 3f2a9c1 in C024BE91L", "refund and show in", []valueKind{I, I, I}},
		// Names with one run of digits are words that tools use too.
		{"list r2 buckets, s3, ec2, k8s pods, mp4 and base64 on gpt4o", "list r2 buckets s3 ec2 k8s pods mp4 and base64 on gpt4o", nil},
		// Words joined by punctuation, without digits, are words.
		{"read/write and/or CI/CD in acme/web on kube-system", "read write and or ci cd in acme web on kube system", nil},
		// A repository or a branch marked as one (a dash, a dot, a
		// digit) is a value.
		{"merge feature/login-form into release/2.3 of octo-org/payments-api", "merge into of", []valueKind{I, I, I}},
		// A placeholder names in words the value that goes there.
		{"send email to <email-address-1> on <server_name>", "send email to email address 1 on server name", nil},
		{"the ratio 1:2 and version 1.2.3", "the ratio and version", []valueKind{I, N}},
		{"lire /tmp/été.txt à 9:05", "lire txt à", []valueKind{P, D}},
		{"", "", nil},
	} {
		rest, vals := queryValues(tc.query, nil)
		var kinds []valueKind
		for _, v := range vals {
			kinds = append(kinds, v.kind)
		}
		if got := strings.Join(words(rest, nil), " "); got != tc.words || !slices.Equal(kinds, tc.kinds) {
			t.Errorf("%q: words %q, kinds %v; want %q, %v", tc.query, got, kinds, tc.words, tc.kinds)
		}
	}
}

func TestIdentifiersOfAShapeAreAlike(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"PROJ-123", "ABC-4", true},
		{"session:42", "user:7", true},
		{"3f2a9c1", "C024BE91L", true},
		{"PROJ-123", "proj-123", false},
		{"PROJ-123", "PROJ_123", false},
		{"PROJ-123", "session:42", false},
		{"PROJ-123-4", "PROJ-123", false},
	} {
		if got := shapeOf(tc.a) == shapeOf(tc.b); got != tc.same {
			t.Errorf("shapeOf(%q) == shapeOf(%q) is %v", tc.a, tc.b, got)
		}
	}
}

func TestParamsTakeValuesByTypeNameAndExample(t *testing.T) {
	v := func(k valueKind) value { return value{kind: k} }
	id := func(s string) value { return value{kind: valueID, shape: shapeOf(s)} }
	for _, tc := range []struct {
		name        string
		schema      map[string]any
		takes, not_ []value
	}{
		{"count", map[string]any{"type": "integer"}, []value{v(valueNumber)}, []value{v(valueURL), v(valuePath)}},
		{"limit", map[string]any{"type": []any{"number", "null"}}, []value{v(valueNumber)}, nil},
		{"size", map[string]any{"anyOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}}}, []value{v(valueNumber)}, nil},
		{"target", map[string]any{"type": "string", "format": "uri"}, []value{v(valueURL)}, []value{v(valueNumber)}},
		{"urls", map[string]any{"type": "array", "items": map[string]any{"type": "string"}}, []value{v(valueURL)}, nil},
		{"filePath", map[string]any{"type": "string"}, []value{v(valuePath)}, []value{v(valueURL)}},
		{"to", map[string]any{"type": "string", "format": "email"}, []value{v(valueEmail)}, nil},
		{"start", map[string]any{"type": "string", "description": "Start, e.g. '2025-01-01T10:00:00'"}, []value{v(valueDate)}, []value{v(valueNumber)}},
		{"issueKey", map[string]any{"type": "string", "description": `The issue key (e.g., "ABC-123").`}, []value{id("PROJ-9")}, []value{id("session:42"), id("3f2a9c1")}},
		// A link in the documentation is not an example of the value.
		{"query", map[string]any{"type": "string", "description": "See https://example.com/syntax and /docs/a.md"}, nil, []value{v(valueURL), v(valuePath)}},
	} {
		p := paramOf(words(tc.name, nil), tc.schema)
		for _, x := range tc.takes {
			if !p.takes(x) {
				t.Errorf("%s %v does not take a %v", tc.name, tc.schema, x)
			}
		}
		for _, x := range tc.not_ {
			if p.takes(x) {
				t.Errorf("%s %v takes a %v", tc.name, tc.schema, x)
			}
		}
	}
}

func TestFitPrefersToolsThatTakeEveryValue(t *testing.T) {
	num, url := value{kind: valueNumber}, value{kind: valueURL}
	n, nr := param{kinds: 1 << valueNumber}, param{kinds: 1 << valueNumber, required: true}
	u, ur := param{kinds: 1 << valueURL}, param{kinds: 1 << valueURL, required: true}
	for _, tc := range []struct {
		name     string
		values   []value
		params   []param
		required int
		want     float64
	}{
		{"two numbers fill two required numbers", []value{num, num}, []param{nr, nr}, 2, 1},
		{"one of two numbers fills one of four required", []value{num, num}, []param{nr}, 4, 0.5 * 2 / 5},
		{"a required parameter is filled first", []value{num}, []param{n, nr}, 1, 1},
		{"an optional parameter takes what it can", []value{url}, []param{u}, 0, 1},
		{"a URL in one of two required", []value{url}, []param{ur}, 2, 2.0 / 3},
		{"nothing taken", []value{url}, []param{n}, 0, 0},
		{"no values", nil, []param{n}, 0, 0},
		{"no parameters", []value{num}, nil, 0, 0},
	} {
		if got := fit(tc.values, tc.params, tc.required); got != tc.want {
			t.Errorf("%s: fit %v, want %v", tc.name, got, tc.want)
		}
	}
}

// FuzzQueryValues: values are blanked in place, what is left is the
// query's own text, and holds no value any more.
func FuzzQueryValues(f *testing.F) {
	for _, s := range []string{
		"fetch http://127.0.0.1:43685/ and return the markdown", "read /tmp/notes.txt", "add 2 and 3",
		"mail <bob@x.io>, see PROJ-123 on 2025-03-14T10:00", `C:\a\b.pdf ~/x ./y ../z \\srv\share`,
		"\xff/\xfe.txt «https://é.fr» 1:2 1.2.3 $-5% #", "<<>> <a> ://x www. a@ @b.c",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, query string) {
		rest, vals := queryValues(query, nil)
		if len(rest) != len(query) {
			t.Fatalf("%q left %q, of another length", query, rest)
		}
		for i := range len(rest) {
			if rest[i] != query[i] && rest[i] != ' ' {
				t.Fatalf("%q left %q: byte %d is new", query, rest, i)
			}
		}
		if len(vals) == 0 && rest != query {
			t.Fatalf("%q left %q without a value", query, rest)
		}
		if again, more := queryValues(rest, nil); len(more) > 0 || again != rest {
			t.Fatalf("%q left %q, which has values still: %v", query, rest, more)
		}
		if utf8.ValidString(query) && !utf8.ValidString(rest) {
			t.Fatalf("%q left %q, not UTF-8", query, rest)
		}
	})
}

// TestValuesFindToolsThatTakeThem searches small catalogs with requests
// that carry values: the values' parts are not words of tool names, and
// the tools that take such values come first.
func TestValuesFindToolsThatTakeThem(t *testing.T) {
	withSchema := func(tl *mcp.Tool, props map[string]any, required ...string) *mcp.Tool {
		tl.InputSchema = map[string]any{"type": "object", "properties": props, "required": required}
		return tl
	}
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	num := map[string]any{"type": "number"}
	for _, tc := range []struct {
		name  string
		tools []*mcp.Tool
		query string
		want  string
	}{{
		name: "the numbers of a query are not version numbers",
		tools: []*mcp.Tool{
			withSchema(tool("create_spec", "Create an API specification: OpenAPI 2.0, 3.0 or 3.1."), map[string]any{"content": str("The spec")}),
			withSchema(tool("get_sum", "Add two numbers."), map[string]any{"a": num, "b": num}, "a", "b"),
		},
		query: "add 2 and 3",
		want:  "get_sum",
	}, {
		name: "a URL's parts are not words",
		tools: []*mcp.Tool{
			withSchema(tool("http_server_start", "Start a local HTTP server on 127.0.0.1."), map[string]any{"port": num}),
			withSchema(tool("page_markdown", "Fetch a web page as markdown."), map[string]any{"url": str("The page")}, "url"),
		},
		query: "fetch http://127.0.0.1:43685/ and return the markdown",
		want:  "page_markdown",
	}, {
		name: "a path's folders are not words",
		tools: []*mcp.Tool{
			withSchema(tool("list_notes", "List the notes of a merge request."), map[string]any{"mr": num}),
			withSchema(tool("read_text_file", "Read a text file."), map[string]any{"path": str("Where it is")}, "path"),
		},
		query: "read /tmp/notes.txt",
		want:  "read_text_file",
	}, {
		name: "a URL favours a tool that takes one",
		tools: []*mcp.Tool{
			withSchema(tool("open_tab", "Open a new tab in the browser."), map[string]any{"background": map[string]any{"type": "boolean"}}),
			withSchema(tool("open_page", "Open a web page at an address in the browser."), map[string]any{"target": map[string]any{"type": "string", "format": "uri"}}, "target"),
		},
		query: "open https://example.com/pricing in the browser",
		want:  "open_page",
	}, {
		name: "a URL's path is not words",
		tools: []*mcp.Tool{
			withSchema(tool("login", "Log in to your account."), nil),
			withSchema(tool("navigate", "Navigate the browser to a page."), map[string]any{"url": str("The page")}, "url"),
		},
		query: "open http://localhost:3000/login in the browser",
		want:  "navigate",
	}, {
		name: "an identifier favours a parameter documented with one of its shape",
		tools: []*mcp.Tool{
			withSchema(tool("search_issues", "Search issues."), map[string]any{"jql": str("The query")}, "jql"),
			withSchema(tool("read_issue", "Read an issue with its fields, status and comments."), map[string]any{"key": str(`The issue key (e.g., "ABC-123").`)}, "key"),
		},
		query: "show me issue PROJ-7",
		want:  "read_issue",
	}, {
		name: "a name with a run of digits is a word",
		tools: []*mcp.Tool{
			withSchema(tool("create_bucket", "Create a bucket."), map[string]any{"name": str("The bucket")}, "name"),
			withSchema(tool("r2_create_bucket", "Create a bucket."), map[string]any{"name": str("The bucket")}, "name"),
		},
		query: "create an R2 bucket called assets-2024",
		want:  "r2_create_bucket",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			ix := New(nil)
			ix.SetServer("s", entriesOf(tc.tools...))
			if got := search(ix, tc.query); len(got) == 0 || got[0] != tc.want {
				t.Errorf("%q found %v, want %s first", tc.query, got, tc.want)
			}
		})
	}
}

// TestAQueryOfManyValuesDoesNotHang: a query's values are placed
// into the parameters of every tool scored, so a hostile query of many
// values must not cost their number times the tools times the params.
func TestAQueryOfManyValuesDoesNotHang(t *testing.T) {
	const waitFor = 10 * time.Second // a bound on a hang
	props := map[string]any{}
	for i := range maxParams {
		props[fmt.Sprintf("n%d", i)] = map[string]any{"type": "number", "description": "A number."}
	}
	var tools []*mcp.Tool
	for i := range 1000 {
		tools = append(tools, &mcp.Tool{Name: fmt.Sprintf("sum_%d", i), Description: "Add numbers.", InputSchema: map[string]any{"type": "object", "properties": props}})
	}
	ix := New(nil)
	ix.SetServer("s", entriesOf(tools...))
	query := "add " + strings.Repeat("1 ", 200_000)
	done := make(chan []Hit, 1)
	go func() { done <- ix.Search(context.Background(), Query{Text: query, K: 3}) }()
	select {
	case hits := <-done:
		if len(hits) != 3 {
			t.Errorf("%d hits, want 3", len(hits))
		}
	case <-time.After(waitFor):
		t.Fatalf("no answer in %v", waitFor)
	}
}
