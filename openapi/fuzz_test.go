package openapi

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to Load and what loads to Tools: no
// panic, no hang, and every tool's schemas are objects that compile.
func FuzzLoad(f *testing.F) {
	for _, file := range []string{"testdata/api-3.0.yaml", "testdata/api-3.1.json", "testdata/swagger-2.0.yaml", "testdata/multi/api.yaml"} {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/{a}":{"get":{"parameters":[{"name":"a","in":"path","schema":{"type":["string","null","file"],"required":["x","x"],"multipleOf":0}}]}}}}`))
	f.Add([]byte(`{"swagger":"2.0","info":{"title":"t","version":"1"},"paths":{"/x":{"post":{"parameters":[{"name":"f","in":"formData","type":"file"}]}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		within(t, func() {
			doc, err := Load(context.Background(), "", LoadOptions{Data: data, MaxBytes: 1 << 20})
			if err != nil {
				return
			}
			tools, _ := Tools(doc, MapOptions{})
			for i := range tools {
				checkSchemas(t, tools[i].Tool.Name, &tools[i])
			}
		})
	})
}

// FuzzBuildRequest calls tools with arbitrary values: a request, when one
// is made, stays on its base URL with each value in its place.
func FuzzBuildRequest(f *testing.F) {
	tools := toolsOf(f, "testdata/api-3.0.yaml")
	base, _ := url.Parse("http://127.0.0.1:9/api?key=k")
	for _, v := range hostileValues {
		f.Add(v, v, v, 1.5)
	}
	f.Fuzz(func(t *testing.T, pathValue, queryValue, other string, n float64) {
		within(t, func() { callHostile(t, tools, base, pathValue, queryValue, other, n) })
	})
}

func callHostile(t *testing.T, tools map[string]*Tool, base *url.URL, pathValue, queryValue, other string, n float64) {
	{
		req, err := tools["getThing"].BuildRequest(context.Background(), base, map[string]any{"path_id": pathValue, "query_id": queryValue})
		if err == nil {
			rest, ok := strings.CutPrefix(req.URL.EscapedPath(), "/api/things/")
			if !sameOrigin(req.URL, base) || !ok || strings.Contains(rest, "/") {
				t.Fatalf("%q made the request %s", pathValue, req.URL)
			}
			if s, err := url.PathUnescape(rest); err != nil || s != pathValue {
				t.Errorf("the segment %q reads %q, not %q", rest, s, pathValue)
			}
			if q, err := url.ParseQuery(req.URL.RawQuery); err != nil || q.Get("id") != queryValue || len(q) != 2 {
				t.Errorf("%q made the query %q", queryValue, req.URL.RawQuery)
			}
		}
		args := map[string]any{
			"words": []any{pathValue, other}, "ids": []any{n}, "filter": map[string]any{pathValue: queryValue},
			"point": map[string]any{"x": n}, "redirect": other, "q": map[string]any{other: []any{n}},
			"X-Tags": []any{other}, "X-Point": map[string]any{"x": n}, "prefs": []any{queryValue},
		}
		if req, err := tools["search"].BuildRequest(context.Background(), base, args); err == nil {
			if !sameOrigin(req.URL, base) || req.URL.EscapedPath() != "/api/search" {
				t.Fatalf("the request went to %s", req.URL)
			}
		}
		body := map[string]any{"file": pathValue, "meta": map[string]any{"author": other}, "tags": []any{queryValue}, "note": other}
		if _, err := tools["upload"].BuildRequest(context.Background(), base, body); err != nil {
			t.Errorf("a valid multipart call failed: %v", err)
		}
	}
}
