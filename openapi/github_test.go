package openapi

import (
	"cmp"
	"context"
	"maps"
	"os"
	"slices"
	"testing"
	"time"
)

// githubDescription is GitHub's description from the @octokit/openapi npm
// package (23.0.2), unpacked in /tmp/octokit-openapi, or where
// OPENAPI_GITHUB_JSON says.
func githubDescription(tb testing.TB) string {
	tb.Helper()
	p := cmp.Or(os.Getenv("OPENAPI_GITHUB_JSON"), "/tmp/octokit-openapi/package/generated/api.github.com.json")
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("GitHub's description is not at %s: `npm pack @octokit/openapi@23.0.2` and unpack it into /tmp/octokit-openapi, or set OPENAPI_GITHUB_JSON (%v)", p, err)
	}
	return p
}

func TestGitHubDescriptionMapsToTools(t *testing.T) {
	path := githubDescription(t)
	start := time.Now()
	doc := mustLoad(t, path, LoadOptions{})
	loaded := time.Since(start)
	start = time.Now()
	tools, skipped := Tools(doc, MapOptions{})
	mapped := time.Since(start)
	t.Logf("GitHub %s: %d operations, %d tools, %d skipped; loaded in %v, mapped in %v",
		doc.Version(), countOperations(doc), len(tools), len(skipped), loaded.Round(time.Millisecond), mapped.Round(time.Millisecond))
	reasons := map[SkipReason]int{}
	for _, s := range skipped {
		reasons[s.Reason]++
		t.Logf("skipped: %s", s)
	}
	for _, r := range slices.Sorted(maps.Keys(reasons)) {
		t.Logf("skipped for %s: %d", r, reasons[r])
	}
	if len(tools)+len(skipped) != countOperations(doc) || len(tools) < 1000 {
		t.Errorf("%d tools and %d skipped of %d operations", len(tools), len(skipped), countOperations(doc))
	}
	byName := map[string]*Tool{}
	for i := range tools {
		checkSchemas(t, tools[i].Tool.Name, &tools[i])
		byName[tools[i].Tool.Name] = &tools[i]
	}

	rec := newRecorder(t)
	got, err := rec.send(t, byName["issues_list-for-repo"], map[string]any{
		"owner": "mcpgate", "repo": "mcpgate", "labels": "bug,ui", "state": "open", "per_page": 50,
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "/base/repos/mcpgate/mcpgate/issues?state=open&labels=bug%2Cui&per_page=50"; got.method != "GET" || got.uri != want {
		t.Errorf("got %s %s, want GET %s", got.method, got.uri, want)
	}
}

func BenchmarkGitHubTools(b *testing.B) {
	doc := mustLoad(b, githubDescription(b), LoadOptions{})
	for b.Loop() {
		Tools(doc, MapOptions{})
	}
}

func BenchmarkGitHubLoad(b *testing.B) {
	path := githubDescription(b)
	for b.Loop() {
		if _, err := Load(context.Background(), path, LoadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
