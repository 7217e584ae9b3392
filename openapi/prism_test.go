//go:build unix

package openapi

// The mapping table of issue 26 checked by a tool we did not write: Prism
// (@stoplight/prism-cli, pinned in testdata/npm) serves each description
// of testdata/prism as a mock that validates every request against it
// and, with --errors, answers a request that breaks it with 4xx and the
// violations. Each request here is built by BuildRequest from realistic
// arguments; each row that can also has a broken variant, edited the way
// a wrong serialisation would be, that Prism must refuse, which shows
// that Prism checks what the row sends.
//
// What Prism 5.16 cannot check, and so request_test.go checks against a
// recorder instead: it crashes on path parameters in simple style that
// are arrays or objects, in label or matrix style without explode, and
// on a missing optional array header; it ignores cookies; it validates
// an absent optional exploded object in a query as {}; it reads no JSON
// part of a multipart body; and it applies form style to a form or
// multipart property only when the Encoding Object names it.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// prismStart bounds Prism's start: it reads the description and makes
// an example request of each operation before it listens.
const prismStart = 90 * time.Second // a bound on a hang

// prismAnswer bounds each request to Prism.
const prismAnswer = 30 * time.Second // a bound on a hang

// prism is a running `prism mock`.
type prism struct {
	base   *url.URL
	out    *syncBuffer
	exited chan struct{}
}

// syncBuffer is Prism's output, written by exec's copier while the test
// reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// tail is the last n bytes of the output.
func (s *syncBuffer) tail(n int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.b.Bytes()
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// startPrism runs Prism on description on a free loopback port and waits
// until it listens. Its cleanup kills Prism's process group and, when the
// test failed, logs the end of its output.
func startPrism(t *testing.T, description string) *prism {
	t.Helper()
	needNode(t)
	bin, err := filepath.Abs(npmInstalled(t, ".bin/prism"))
	if err != nil {
		t.Fatal(err)
	}
	var errs []error
	// A port free a moment ago may be taken before Prism binds it; Prism
	// then exits, and another port is tried.
	for range 3 {
		p, err := runPrism(t, bin, description, freeLoopbackPort(t))
		if err == nil {
			return p
		}
		errs = append(errs, err)
	}
	t.Fatalf("prism did not start: %v", errors.Join(errs...))
	return nil
}

func runPrism(t *testing.T, bin, description string, port int) (*prism, error) {
	p := &prism{out: &syncBuffer{}, exited: make(chan struct{})}
	cmd := exec.Command(bin, "mock", description, "--host", "127.0.0.1", "--port", strconv.Itoa(port), "--errors")
	cmd.Stdout, cmd.Stderr = p.out, p.out
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		cmd.Wait()
		close(p.exited)
	}()
	stop := func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(prismStart)
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			break
		}
		select {
		case <-p.exited:
			return nil, fmt.Errorf("prism exited before it listened on %s:\n%s", addr, p.out.tail(4<<10))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("prism did not listen on %s within %v:\n%s", addr, prismStart, p.out.tail(4<<10))
		}
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("the end of prism's output:\n%s", p.out.tail(16<<10))
		}
	})
	p.base = &url.URL{Scheme: "http", Host: addr}
	return p, nil
}

func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// prismVerdict is Prism's answer to one request.
type prismVerdict struct {
	status     int
	violations string // the sl-violations header, set when Prism found any
	body       string
}

// accepted says whether Prism took the request as the description says
// it may be: a 2xx answer without violations.
func (v prismVerdict) accepted() bool {
	return v.status >= 200 && v.status < 300 && v.violations == ""
}

func (v prismVerdict) String() string {
	s := fmt.Sprintf("%d %s", v.status, v.body)
	if v.violations != "" {
		s += " (sl-violations: " + v.violations + ")"
	}
	return s
}

// send sends req to Prism. Prism crashing on it fails the test with
// Prism's output.
func (p *prism) send(t *testing.T, req *http.Request) prismVerdict {
	t.Helper()
	client := &http.Client{Timeout: prismAnswer}
	select {
	case <-p.exited:
		t.Fatalf("prism exited before %s %s, on an earlier request", req.Method, req.URL)
	default:
	}
	resp, err := client.Do(req)
	if err != nil {
		// A crash shows first as a reset connection; the exit follows.
		select {
		case <-p.exited:
			t.Fatalf("prism exited on %s %s:\n%s", req.Method, req.URL, p.out.tail(4<<10))
		case <-time.After(time.Second):
		}
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return prismVerdict{status: resp.StatusCode, violations: resp.Header.Get("sl-violations"), body: string(body)}
}

// breakage edits a built request into one the description forbids.
type breakage func(t *testing.T, req *http.Request)

// inQuery replaces old with new in the raw query.
func inQuery(old, new string) breakage {
	return func(t *testing.T, req *http.Request) {
		t.Helper()
		if !strings.Contains(req.URL.RawQuery, old) {
			t.Fatalf("the query %q has no %q", req.URL.RawQuery, old)
		}
		req.URL.RawQuery = strings.Replace(req.URL.RawQuery, old, new, 1)
	}
}

// inPath replaces old with new in the escaped path.
func inPath(old, new string) breakage {
	return func(t *testing.T, req *http.Request) {
		t.Helper()
		p := req.URL.EscapedPath()
		if !strings.Contains(p, old) {
			t.Fatalf("the path %q has no %q", p, old)
		}
		u, err := url.Parse(strings.Replace(p, old, new, 1))
		if err != nil {
			t.Fatal(err)
		}
		req.URL.Path, req.URL.RawPath = u.Path, u.RawPath
	}
}

// inBody replaces old with new in the body.
func inBody(old, new string) breakage {
	return func(t *testing.T, req *http.Request) {
		t.Helper()
		b, err := io.ReadAll(req.Body)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(old)) {
			t.Fatalf("the body %q has no %q", b, old)
		}
		b = bytes.Replace(b, []byte(old), []byte(new), 1)
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		req.GetBody = nil
	}
}

// withHeader sets a header.
func withHeader(name, value string) breakage {
	return func(t *testing.T, req *http.Request) { req.Header.Set(name, value) }
}

// prismRow is one call of the mapping table.
type prismRow struct {
	name string
	tool string
	args map[string]any
	// breaks, when set, edits the built request into one the description
	// forbids, as a wrong serialisation would; Prism must refuse it.
	breaks breakage
}

// A session token, a trace id and a file's bytes, as a client sends them.
const (
	prismRequestID = "0b7e6f1e-6f2a-4c3e-9b1a-2f6d3c4b5a69"
	prismPNG       = "\x89PNG\r\n\x1a\n fake image"
)

// prismTable is the mapping table, by description.
var prismTable = []struct {
	file string
	rows []prismRow
}{
	{"testdata/prism/table-3.0.yaml", []prismRow{
		{
			name: "path parameter from a path-level $ref; query form arrays with and without explode; header; cookie",
			tool: "getPet",
			args: map[string]any{"petId": 7, "fields": []any{"name", "kind"}, "tag": []any{"x", "y"}, "X-Request-Id": prismRequestID, "session": "s3ss10n-token"},
			// fields is form without explode: a '|' between items makes one
			// item, which is not in the enum.
			breaks: inQuery("fields=name,kind", "fields=name%7Ckind"),
		},
		{
			name:   "3.0 nullable: null for a nullable property and a nullable allOf",
			tool:   "replacePet",
			args:   map[string]any{"petId": 7, "name": "Rex", "kind": "dog", "note": nil, "owner": nil, "tags": []any{"good"}},
			breaks: inBody(`"tags":["good"]`, `"tags":null`),
		},
		{name: "no body, an integer path parameter", tool: "deletePet", args: map[string]any{"petId": 7}, breaks: inPath("/pets/7", "/pets/0")},
		{name: "3.0's boolean exclusiveMaximum, an enum", tool: "listPets", args: map[string]any{"limit": 99, "kind": "cat"}, breaks: inQuery("limit=99", "limit=100")},
		{name: "a null parameter is not sent", tool: "listPets", args: map[string]any{"limit": 10, "kind": nil}, breaks: inQuery("limit=10", "limit=10&kind=null")},
		{
			name:   "a JSON body beside a query parameter of the same name, a nested $ref",
			tool:   "createPet",
			args:   map[string]any{"query_name": "rex", "body_name": "Rex", "kind": "dog", "owner": map[string]any{"name": "Ann", "email": "ann@example.com"}},
			breaks: inQuery("name=rex", "name=Rex"),
		},
		{
			name:   "oneOf of allOfs: a cat",
			tool:   "adopt",
			args:   map[string]any{"body": map[string]any{"kind": "cat", "name": "Tom", "indoor": true}},
			breaks: inBody(`"indoor":true`, `"indoor":"yes"`),
		},
		{
			name:   "oneOf of allOfs: a dog",
			tool:   "adopt",
			args:   map[string]any{"body": map[string]any{"kind": "dog", "name": "Rex", "owner": map[string]any{"name": "Ann"}}},
			breaks: inBody(`"owner":{"name":"Ann"}`, `"owner":null`),
		},
		{
			name:   "an array body",
			tool:   "createPets",
			args:   map[string]any{"body": []any{map[string]any{"name": "Tom", "kind": "cat"}, map[string]any{"name": "Rex", "kind": "dog"}}},
			breaks: inBody(`"kind":"dog"`, `"kind":"cow"`),
		},
		{
			name:   "a name in the path and the query, each with its prefix",
			tool:   "getOwnersPet",
			args:   map[string]any{"ownerId": "o-1", "path_petId": 2, "query_petId": true},
			breaks: inQuery("petId=true", "petId=2"),
		},
		{name: "path label exploded", tool: "labelExploded", args: map[string]any{"colors": []any{"blue", "black"}}, breaks: inPath(".blue.black", ".blue;black")},
		{name: "path matrix exploded", tool: "matrixExploded", args: map[string]any{"point": map[string]any{"x": 1, "y": 2}}, breaks: inPath(";x=1;y=2", ";x=1;z=2")},
		{name: "a parameter within a segment", tool: "getFile", args: map[string]any{"name": "report"}, breaks: inPath("/report.json", "/Report.json")},
		{
			name: "query spaceDelimited, pipeDelimited, deepObject, form object, allowReserved; header array and object",
			tool: "search",
			args: map[string]any{
				"words": []any{"big", "red"}, "ids": []any{1, 2}, "filter": map[string]any{"color": "red", "size": 3},
				"point": map[string]any{"x": 1, "y": 2}, "next": "/pets?page=2", "X-Tags": []any{"t1", "t2"},
				"X-Point": map[string]any{"x": 1, "y": 2}, "prefs": []any{"p1", "p2"},
			},
			breaks: inQuery("ids=1|2", "ids=1,2"),
		},
		{
			name:   "a header object exploded",
			tool:   "search",
			args:   map[string]any{"point": map[string]any{"x": 1, "y": 2}, "X-Tags": []any{"t1"}, "X-Point": map[string]any{"x": 1, "y": 2}},
			breaks: withHeader("X-Point", "x,1,y,2"),
		},
		{
			name:   "a form body: an exploded array, a pipeDelimited array",
			tool:   "submitForm",
			args:   map[string]any{"name": "Ann Lee", "colors": []any{"red", "green"}, "sizes": []any{1, 2}, "age": 3},
			breaks: inBody("colors=red&colors=green", "colors=red,green"),
		},
		{
			name:   "a multipart body: a file, text, an array, a number",
			tool:   "upload",
			args:   map[string]any{"file": prismPNG, "title": "A cat", "tags": []any{"cat", "cute"}, "pages": 3},
			breaks: inBody("name=\"pages\"\r\n\r\n3", "name=\"pages\"\r\n\r\nthree"),
		},
		{name: "a text body", tool: "replaceNote", args: map[string]any{"id": 3, "body": "hello"}, breaks: withHeader("Content-Type", "text/html")},
	}},
	{"testdata/prism/table-3.1.json", []prismRow{
		{
			name: "3.1: null in a type array, const, a numeric exclusiveMinimum, a recursive $ref with a sibling",
			tool: "createNote",
			args: map[string]any{
				"X-Api-Version": "2024-01-01", "title": "Groceries", "body": nil, "kind": "note", "priority": 2.5,
				"folder": map[string]any{"name": "home", "parent": map[string]any{"name": "root"}},
			},
			breaks: withHeader("X-Api-Version", "2023-01-01"),
		},
		{
			name:   "3.1: numeric exclusive bounds in the query, a date-time, pipeDelimited",
			tool:   "listNotes",
			args:   map[string]any{"limit": 49, "since": "2024-05-01T10:00:00Z", "tags": []any{"home", "work"}},
			breaks: inQuery("limit=49", "limit=50"),
		},
		{
			name:   "3.1: null for each nullable property, anyOf with null",
			tool:   "updateNote",
			args:   map[string]any{"id": 1, "title": "Groceries", "body": nil, "pinned": nil, "folder": nil},
			breaks: inBody(`"title":"Groceries"`, `"title":""`),
		},
		{
			name:   "3.1: oneOf with a discriminator, one branch",
			tool:   "sendEvent",
			args:   map[string]any{"body": map[string]any{"type": "closed", "reason": "done"}},
			breaks: inBody(`"reason":"done"`, `"reason":"lost"`),
		},
		{
			name:   "3.1: oneOf with a discriminator, the other branch",
			tool:   "sendEvent",
			args:   map[string]any{"body": map[string]any{"type": "opened", "at": "2024-05-01T10:00:00Z"}},
			breaks: inBody(`"type":"opened"`, `"type":"closed"`),
		},
	}},
	{"testdata/prism/table-2.0.yaml", []prismRow{
		{
			name: "Swagger 2.0: collectionFormat csv, multi, pipes and ssv; a header; a $ref parameter",
			tool: "getOrder",
			args: map[string]any{
				"orderId": 5, "fields": []any{"item", "quantity"}, "status": []any{"placed", "shipped"},
				"ids": []any{1, 2}, "words": []any{"big", "red"}, "X-Trace-Id": "t-42",
			},
			breaks: inQuery("status=placed&status=shipped", "status=placed,shipped"),
		},
		{name: "Swagger 2.0: no body", tool: "cancelOrder", args: map[string]any{"orderId": 5}, breaks: inPath("/orders/5", "/orders/0")},
		{
			name:   "Swagger 2.0: a body parameter with a nested $ref",
			tool:   "placeOrder",
			args:   map[string]any{"item": "book", "quantity": 2, "address": map[string]any{"city": "Oslo", "zip": "01234"}},
			breaks: inBody(`"zip":"01234"`, `"zip":"0123"`),
		},
		{
			name:   "Swagger 2.0: formData, urlencoded",
			tool:   "addNote",
			args:   map[string]any{"orderId": 5, "text": "leave it at the door", "stars": 4},
			breaks: inBody("stars=4", "stars=9"),
		},
		{
			name: "Swagger 2.0: formData with a file, multipart",
			tool: "uploadReceipt",
			args: map[string]any{"orderId": 5, "file": "%PDF-1.4 receipt", "caption": "the receipt"},
			// Prism 5.16 checks no part of a Swagger 2.0 multipart body, only
			// its media type.
			breaks: withHeader("Content-Type", "application/x-www-form-urlencoded"),
		},
	}},
}

func TestPrismAcceptsEveryRequestBuilt(t *testing.T) {
	for _, desc := range prismTable {
		t.Run(filepath.Base(desc.file), func(t *testing.T) {
			t.Parallel()
			tools := toolsOf(t, desc.file)
			var untested []string
			for name := range tools {
				if !slices.ContainsFunc(desc.rows, func(r prismRow) bool { return r.tool == name }) {
					untested = append(untested, name)
				}
			}
			if len(untested) > 0 {
				slices.Sort(untested)
				t.Errorf("no row calls %v: every operation of the description is to be checked", untested)
			}
			p := startPrism(t, desc.file)
			for _, row := range desc.rows {
				t.Run(row.name, func(t *testing.T) {
					tool := tools[row.tool]
					if tool == nil {
						t.Fatalf("no tool %s in %s", row.tool, desc.file)
					}
					build := func() *http.Request {
						req, err := tool.BuildRequest(context.Background(), p.base, row.args)
						if err != nil {
							t.Fatalf("BuildRequest: %v", err)
						}
						return req
					}
					req := build()
					if v := p.send(t, req); !v.accepted() {
						t.Errorf("prism refused %s %s: %v", req.Method, req.URL.RequestURI(), v)
					}
					if row.breaks == nil {
						return
					}
					req = build()
					row.breaks(t, req)
					if v := p.send(t, req); v.accepted() || v.status >= 500 {
						t.Errorf("prism did not refuse the broken %s %s: %v", req.Method, req.URL.RequestURI(), v)
					}
				})
			}
		})
	}
}
