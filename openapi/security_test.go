package openapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// hostileValues try to move a request off its base URL: another host,
// scheme or port, a path outside the base path, another segment, or more
// query parameters.
var hostileValues = []string{
	"../../admin", "..", ".", "./x", "a/b", "/etc/passwd", "%2F", "%2e%2e", "..%2F..%2Fadmin",
	"?admin=1", "#fragment", "@evil.example", "user:pass@evil.example", "http://evil.example/",
	"https://evil.example:8443/x", "//evil.example", "evil.example:80", `\\evil.example\share`,
	"a\r\nHost: evil.example", "a\x00b", "a b", "%", "%zz", ";x=1", ",", "&id=2", "=", "ünïcødé",
	strings.Repeat("../", 50) + "x",
}

// guard is a transport that sends only to its origin, and counts what it
// refuses: a request for another host must fail here, not on the network.
type guard struct {
	origin  *url.URL
	refused atomic.Int32
}

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	if !sameOrigin(req.URL, g.origin) {
		g.refused.Add(1)
		return nil, fmt.Errorf("guard: a request for %s", req.URL.Host)
	}
	return http.DefaultTransport.RoundTrip(req)
}

func TestNoArgumentMovesTheRequestOffItsBaseURL(t *testing.T) {
	rec := newRecorder(t)
	tools := toolsOf(t, "testdata/api-3.0.yaml")
	thing, search := tools["getThing"], tools["search"]
	g := &guard{}
	g.origin, _ = url.Parse(rec.URL)
	client := &http.Client{Transport: g, CheckRedirect: CheckRedirect}
	for _, basePath := range []string{"/api/v1", "/api/v1/", ""} {
		base, _ := url.Parse(rec.URL + basePath + "?key=k")
		prefix := strings.TrimSuffix(basePath, "/") + "/things/"
		for _, v := range hostileValues {
			t.Run(fmt.Sprintf("%s %q", basePath, v), func(t *testing.T) {
				args := map[string]any{"path_id": v, "query_id": v}
				req, err := thing.BuildRequest(context.Background(), base, args)
				if err != nil {
					var ae *ArgumentError
					if !errors.As(err, &ae) {
						t.Fatalf("refused with %v, not an ArgumentError", err)
					}
					return
				}
				if !sameOrigin(req.URL, base) || req.URL.User != nil {
					t.Fatalf("the request goes to %s, not to %s", req.URL.Redacted(), base.Host)
				}
				resp, err := client.Do(req)
				if err != nil {
					t.Fatalf("sending: %v", err)
				}
				resp.Body.Close()
				rec.mu.Lock()
				got := rec.last
				rec.mu.Unlock()
				path, query, _ := strings.Cut(got.uri, "?")
				segment, ok := strings.CutPrefix(path, prefix)
				if !ok || strings.Contains(segment, "/") || segment == "." || segment == ".." {
					// A dot segment is removed by whoever normalises the path.
					t.Fatalf("the server got the path %q, not one segment under %q", path, prefix)
				}
				if s, err := url.PathUnescape(segment); err != nil || s != v {
					t.Errorf("the segment %q reads %q, not the argument %q", segment, s, v)
				}
				q, err := url.ParseQuery(query)
				if err != nil || len(q) != 2 || q.Get("key") != "k" || len(q["id"]) != 1 || q.Get("id") != v {
					t.Errorf("the server got the query %q (%v), want key=k and id=%q only", query, q, v)
				}
			})
		}
	}
	t.Run("a query value allowed reserved characters", func(t *testing.T) {
		base, _ := url.Parse(rec.URL + "/api")
		for _, v := range hostileValues {
			req, err := search.BuildRequest(context.Background(), base, map[string]any{"redirect": v})
			if err != nil {
				t.Fatalf("%q: %v", v, err)
			}
			if q := req.URL.Query(); len(q) != 1 || q.Get("redirect") != v || !sameOrigin(req.URL, base) || req.URL.EscapedPath() != "/api/search" {
				t.Errorf("%q: the request is %s", v, req.URL)
			}
		}
	})
	if n := g.refused.Load(); n != 0 {
		t.Errorf("%d requests were for another origin", n)
	}
}

func TestCredentialsNeverFollowARedirectToAnotherOrigin(t *testing.T) {
	var leaked atomic.Int32
	other := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Add(1)
	}))
	api := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/same" {
			http.Redirect(w, r, "/items/1", http.StatusTemporaryRedirect)
			return
		}
		if r.URL.Path == "/away" {
			http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
			return
		}
		fmt.Fprint(w, r.Header.Get("Authorization"))
	}))
	client := &http.Client{CheckRedirect: CheckRedirect}
	get := func(path string) (*http.Response, error) {
		req, _ := http.NewRequest("GET", api.URL+path, nil)
		req.Header.Set("Authorization", "Bearer secret")
		return client.Do(req)
	}
	resp, err := get("/same")
	if err != nil {
		t.Fatalf("a redirect within the origin: %v", err)
	}
	resp.Body.Close()
	if _, err := get("/away"); err == nil || !strings.Contains(err.Error(), "another origin") {
		t.Fatalf("got %v, want a refused redirect", err)
	}
	if leaked.Load() != 0 {
		t.Fatal("the request went to the other origin")
	}
}
