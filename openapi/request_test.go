package openapi

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
)

// received is what the server got, as the test compares it.
type received struct {
	method, uri, contentType, body string
	header                         http.Header
}

// recorder is a real server that keeps the last request it received.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	last *received
}

func newRecorder(t *testing.T) *recorder {
	rec := &recorder{}
	rec.Server = serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := &received{method: r.Method, uri: r.RequestURI, header: r.Header.Clone()}
		got.contentType, _, _ = mime.ParseMediaType(r.Header.Get("Content-Type"))
		if got.contentType == "multipart/form-data" {
			got.body = summariseMultipart(t, r)
		} else {
			b, _ := io.ReadAll(r.Body)
			got.body = string(b)
		}
		rec.mu.Lock()
		rec.last = got
		rec.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	return rec
}

// summariseMultipart writes the parts of a multipart body on one line:
// name[filename; content type]=content, joined by " | ".
func summariseMultipart(t *testing.T, r *http.Request) string {
	mr, err := r.MultipartReader()
	if err != nil {
		t.Errorf("multipart: %v", err)
		return ""
	}
	var parts []string
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Errorf("multipart: %v", err)
			return ""
		}
		b, _ := io.ReadAll(p)
		meta := []string{}
		if p.FileName() != "" {
			meta = append(meta, p.FileName())
		}
		if ct := p.Header.Get("Content-Type"); ct != "" {
			meta = append(meta, ct)
		}
		label := p.FormName()
		if len(meta) > 0 {
			label += "[" + strings.Join(meta, "; ") + "]"
		}
		parts = append(parts, label+"="+string(b))
	}
	return strings.Join(parts, " | ")
}

// send builds the call's request and sends it to the recorder, returning
// what it received.
func (rec *recorder) send(t *testing.T, tool *Tool, args map[string]any) (*received, error) {
	t.Helper()
	base, _ := url.Parse(rec.URL + "/base")
	req, err := tool.BuildRequest(context.Background(), base, args)
	if err != nil {
		return nil, err
	}
	resp, err := rec.Client().Do(req)
	if err != nil {
		t.Fatalf("sending: %v", err)
	}
	resp.Body.Close()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.last, nil
}

// toolsOf maps a test description, failing on any skipped operation.
func toolsOf(t testing.TB, file string) map[string]*Tool {
	t.Helper()
	tools, skipped := Tools(mustLoad(t, file, LoadOptions{}), MapOptions{})
	if len(skipped) > 0 {
		t.Fatalf("%s: skipped %v", file, skipped)
	}
	out := map[string]*Tool{}
	for i := range tools {
		out[tools[i].Tool.Name] = &tools[i]
	}
	return out
}

func TestRequestsAreBuiltAsTheDescriptionSays(t *testing.T) {
	rec := newRecorder(t)
	docs := map[string]map[string]*Tool{}
	for _, f := range []string{"testdata/api-3.0.yaml", "testdata/api-3.1.json", "testdata/swagger-2.0.yaml"} {
		docs[f] = toolsOf(t, f)
	}
	const v30, v31, v20 = "testdata/api-3.0.yaml", "testdata/api-3.1.json", "testdata/swagger-2.0.yaml"
	tests := []struct {
		name, doc, tool string
		args            map[string]any
		method, uri     string
		header          map[string]string
		contentType     string
		body            string
	}{
		{
			name: "path simple, query form with and without explode, header, cookie, a path-level parameter",
			doc:  v30, tool: "getItem",
			args:   map[string]any{"id": 7, "fields": []any{"a", "b"}, "tag": []any{"x", "y"}, "X-Request-Id": "r1", "session": "s1"},
			method: "GET", uri: "/base/items/7?fields=a,b&tag=x&tag=y",
			header: map[string]string{"X-Request-Id": "r1", "Cookie": "session=s1", "Accept": "application/json"},
		},
		{name: "path label", doc: v30, tool: "labelArray", args: map[string]any{"color": []any{"blue", "black", "brown"}}, method: "GET", uri: "/base/label/.blue,black,brown"},
		{name: "path label exploded", doc: v30, tool: "labelArrayExplode", args: map[string]any{"color": []any{"blue", "black", "brown"}}, method: "GET", uri: "/base/label-explode/.blue.black.brown"},
		{name: "path matrix object", doc: v30, tool: "matrixObject", args: map[string]any{"point": map[string]any{"x": 1, "y": 2}}, method: "GET", uri: "/base/matrix/;point=x,1,y,2"},
		{name: "path matrix object exploded", doc: v30, tool: "matrixObjectExplode", args: map[string]any{"point": map[string]any{"x": 1, "y": 2}}, method: "GET", uri: "/base/matrix-explode/;x=1;y=2"},
		{name: "path simple object exploded", doc: v30, tool: "simpleObjectExplode", args: map[string]any{"point": map[string]any{"x": 1, "y": 2}}, method: "GET", uri: "/base/simple/x=1,y=2"},
		{name: "a parameter within a segment", doc: v30, tool: "getFile", args: map[string]any{"name": "report"}, method: "GET", uri: "/base/files/report.json"},
		{
			name: "query spaceDelimited, pipeDelimited, deepObject, form object, allowReserved, JSON content; header array and object; cookie without explode",
			doc:  v30, tool: "search",
			args: map[string]any{
				"words": []any{"a", "b"}, "ids": []any{1, 2, 3}, "filter": map[string]any{"color": "red", "size": "L"},
				"point": map[string]any{"x": 1, "y": 2}, "redirect": "https://x.test/a?b", "q": map[string]any{"k": "v"},
				"X-Tags": []any{"t1", "t2"}, "X-Point": map[string]any{"x": 1, "y": 2}, "prefs": []any{"p1", "p2"},
			},
			method: "GET",
			uri:    "/base/search?words=a%20b&ids=1|2|3&filter[color]=red&filter[size]=L&x=1&y=2&redirect=https://x.test/a?b&q=%7B%22k%22%3A%22v%22%7D",
			header: map[string]string{"X-Tags": "t1,t2", "X-Point": "x=1,y=2", "Cookie": "prefs=p1,p2"},
		},
		{name: "a name in two locations gets their prefixes", doc: v30, tool: "getThing", args: map[string]any{"path_id": "a", "query_id": "b"}, method: "GET", uri: "/base/things/a?id=b"},
		{
			name: "a JSON body merged into the arguments, beside a query parameter of the same name",
			doc:  v30, tool: "createItem",
			args:   map[string]any{"body_name": "spoon", "query_name": "q", "note": nil, "tags": []any{"t"}},
			method: "POST", uri: "/base/items?name=q", contentType: "application/json",
			body: `{"name":"spoon","note":null,"tags":["t"]}`,
		},
		{
			name: "a form body, a property with its encoding",
			doc:  v30, tool: "submitForm",
			args:   map[string]any{"name": "Ann Lee", "colors": []any{"red", "green"}, "sizes": []any{1, 2}},
			method: "POST", uri: "/base/forms", contentType: "application/x-www-form-urlencoded",
			body: "colors=red&colors=green&name=Ann%20Lee&sizes=1|2",
		},
		{
			name: "a multipart body: a file, a JSON part, an array, text",
			doc:  v30, tool: "upload",
			args:   map[string]any{"file": "PNGDATA", "meta": map[string]any{"author": "ann"}, "tags": []any{"a", "b"}, "note": "hi"},
			method: "POST", uri: "/base/upload", contentType: "multipart/form-data",
			body: `file[file; image/png]=PNGDATA | meta[application/json]={"author":"ann"} | note=hi | tags=a | tags=b`,
		},
		{name: "a text body", doc: v30, tool: "replaceItemText", args: map[string]any{"id": 3, "body": "hello"}, method: "PUT", uri: "/base/items/3", contentType: "text/plain", body: "hello"},
		{name: "no body", doc: v30, tool: "deleteItem", args: map[string]any{"id": 3}, method: "DELETE", uri: "/base/items/3"},
		{name: "a oneOf body under body", doc: v30, tool: "addPet", args: map[string]any{"body": map[string]any{"kind": "cat", "indoor": true}}, method: "POST", uri: "/base/pets", contentType: "application/json", body: `{"indoor":true,"kind":"cat"}`},
		{name: "an array body under body", doc: v30, tool: "batch", args: map[string]any{"body": []any{map[string]any{"name": "a"}}}, method: "POST", uri: "/base/batch", contentType: "application/json", body: `[{"name":"a"}]`},
		{name: "a null parameter is not sent", doc: v30, tool: "listItems", args: map[string]any{"limit": 5, "note": nil}, method: "GET", uri: "/base/items?limit=5"},
		{name: "3.1: null where the type array allows it", doc: v31, tool: "createItem", args: map[string]any{"name": "spoon", "note": nil, "kind": "item"}, method: "POST", uri: "/base/items", contentType: "application/json", body: `{"kind":"item","name":"spoon","note":null}`},
		{name: "3.1: a numeric exclusiveMinimum", doc: v31, tool: "getItem", args: map[string]any{"id": 5}, method: "GET", uri: "/base/items/5"},
		{name: "Swagger 2.0: collectionFormat csv and multi", doc: v20, tool: "getPet", args: map[string]any{"petId": 1, "tags": []any{"a", "b"}, "status": []any{"x", "y"}}, method: "GET", uri: "/base/pets/1?tags=a,b&status=x&status=y"},
		{name: "Swagger 2.0: a body parameter", doc: v20, tool: "addPet", args: map[string]any{"name": "rex", "tag": nil}, method: "POST", uri: "/base/pets", contentType: "application/json", body: `{"name":"rex","tag":null}`},
		{name: "Swagger 2.0: formData", doc: v20, tool: "updatePetWithForm", args: map[string]any{"petId": 1, "name": "rex", "status": "sold"}, method: "POST", uri: "/base/pets/1/form", contentType: "application/x-www-form-urlencoded", body: "name=rex&status=sold"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := docs[tt.doc][tt.tool]
			if tool == nil {
				t.Fatalf("no tool %s in %s", tt.tool, tt.doc)
			}
			got, err := rec.send(t, tool, tt.args)
			if err != nil {
				t.Fatalf("BuildRequest: %v", err)
			}
			if got.method != tt.method || got.uri != tt.uri {
				t.Errorf("got %s %s\nwant %s %s", got.method, got.uri, tt.method, tt.uri)
			}
			for k, v := range tt.header {
				if got.header.Get(k) != v {
					t.Errorf("header %s: %q, want %q", k, got.header.Get(k), v)
				}
			}
			if got.contentType != tt.contentType || got.body != tt.body {
				t.Errorf("body (%s) %s\nwant (%s) %s", got.contentType, got.body, tt.contentType, tt.body)
			}
		})
	}
}

func TestArgumentsAreCheckedBeforeTheRequest(t *testing.T) {
	v30, v31 := toolsOf(t, "testdata/api-3.0.yaml"), toolsOf(t, "testdata/api-3.1.json")
	tests := []struct {
		name  string
		tool  *Tool
		args  map[string]any
		wants []string // each in one of the problems
	}{
		{"a required parameter missing", v30["getItem"], map[string]any{}, []string{"id: required"}},
		{"a wrong type", v30["getItem"], map[string]any{"id": "seven"}, []string{"id: "}},
		{"an unknown argument", v30["getItem"], map[string]any{"id": 1, "bogus": 1}, []string{"bogus: not an argument of this tool"}},
		{"3.0's boolean exclusiveMaximum", v30["listItems"], map[string]any{"limit": 100}, []string{"limit: "}},
		{"a body property's minLength", v30["createItem"], map[string]any{"body_name": ""}, []string{"body_name: "}},
		{"two bad fields, both named", v30["createItem"], map[string]any{"body_name": "", "tags": "x"}, []string{"body_name: ", "tags: "}},
		{"3.0: null where not nullable", v30["createItem"], map[string]any{"body_name": "a", "tags": nil}, []string{"tags: "}},
		{"3.0: a nullable property's other types", v30["createItem"], map[string]any{"body_name": "a", "note": 5}, []string{"note: "}},
		{"3.1: a type array's other types", v31["createItem"], map[string]any{"name": "a", "note": 5}, []string{"note: "}},
		{"3.1: const", v31["createItem"], map[string]any{"name": "a", "kind": "other"}, []string{"kind: "}},
		{"3.1: a numeric exclusiveMinimum", v31["getItem"], map[string]any{"id": 0}, []string{"id: "}},
		{"oneOf", v30["addPet"], map[string]any{"body": map[string]any{"kind": "cow"}}, []string{"body/kind: "}},
		{"an empty path value", v30["getThing"], map[string]any{"path_id": ""}, []string{"path_id: a path parameter cannot be empty"}},
		{"a line break in a header", v30["getItem"], map[string]any{"id": 1, "X-Request-Id": "a\r\nX-Admin: yes"}, []string{"X-Request-Id: a header value cannot hold control characters"}},
	}
	base, _ := url.Parse("http://127.0.0.1:1/base")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := tt.tool.BuildRequest(context.Background(), base, tt.args)
			var ae *ArgumentError
			if !errors.As(err, &ae) {
				t.Fatalf("got request %v and error %v, want an ArgumentError", req, err)
			}
			for _, want := range tt.wants {
				if !slices.ContainsFunc(ae.Problems, func(p string) bool { return strings.HasPrefix(p, want) }) {
					t.Errorf("problems %q have none starting %q", ae.Problems, want)
				}
			}
		})
	}
}

func TestBuildRequestNeedsAnAbsoluteBaseURL(t *testing.T) {
	tool := toolsOf(t, "testdata/api-3.0.yaml")["deleteItem"]
	for _, raw := range []string{"", "/relative", "ftp://example.invalid/", "file:///etc"} {
		base, _ := url.Parse(raw)
		if _, err := tool.BuildRequest(context.Background(), base, map[string]any{"id": 1}); err == nil {
			t.Errorf("base %q: built a request", raw)
		}
	}
	var zero Tool
	if _, err := zero.BuildRequest(context.Background(), &url.URL{Scheme: "http", Host: "h"}, nil); err == nil {
		t.Error("a zero Tool built a request")
	}
}
