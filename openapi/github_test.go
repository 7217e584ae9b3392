package openapi

import (
	"cmp"
	"context"
	"maps"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/toolsearch"
)

// githubDescription is GitHub's description from the @octokit/openapi npm
// package (23.0.2, pinned in testdata/npm), or where OPENAPI_GITHUB_JSON
// says.
func githubDescription(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("OPENAPI_GITHUB_JSON"); p != "" {
		if _, err := os.Stat(p); err != nil {
			tb.Fatalf("OPENAPI_GITHUB_JSON: %v", err)
		}
		return p
	}
	return npmInstalled(tb, "@octokit/openapi/generated/api.github.com.json")
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

// BenchmarkGitHubLoadAndMap is what a gateway does when it starts a
// server on GitHub's description: load it, then map it.
func BenchmarkGitHubLoadAndMap(b *testing.B) {
	path := githubDescription(b)
	for b.Loop() {
		doc, err := Load(context.Background(), path, LoadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		Tools(doc, MapOptions{})
	}
}

// TestGitHubToolsAreFoundByTheirTasks indexes GitHub's tools in
// toolsearch, as a gateway does for a large API, and checks that a task
// in a user's words finds its operation among the first five.
func TestGitHubToolsAreFoundByTheirTasks(t *testing.T) {
	tools, _ := Tools(mustLoad(t, githubDescription(t), LoadOptions{}), MapOptions{})
	ix := toolsearch.New(nil)
	operation := map[string]string{}
	for i := range tools {
		ix.Add(toolsearch.Entry{Server: "github", Tool: &tools[i].Tool})
		operation[tools[i].Tool.Name] = tools[i].OperationID
	}
	tests := []struct {
		task   string
		want   []string // operationIds, any of which answers the task
		within int      // the rank it must reach; zero means 5
	}{
		{task: "create an issue", want: []string{"issues/create"}},
		{task: "get the contents of a file in a repo", want: []string{"repos/get-content"}},
		{task: "star a repository", want: []string{"activity/star-repo-for-authenticated-user"}},
		{task: "list workflow runs", want: []string{"actions/list-workflow-runs-for-repo", "actions/list-workflow-runs"}},
		{task: "list the pull requests of a repository", want: []string{"pulls/list"}},
		{task: "merge a pull request", want: []string{"pulls/merge"}},
		{task: "add a comment to an issue", want: []string{"issues/create-comment"}},
		{task: "create a release", want: []string{"repos/create-release"}},
		{task: "fork a repository", want: []string{"repos/create-fork"}},
		{task: "search code", want: []string{"search/code"}},
		{task: "add labels to an issue", want: []string{"issues/add-labels"}},
		// Sixth: "open" also says create (pulls/create is third), and the
		// pull-request-creation-cap tools share "pull request" and
		// "repository".
		{task: "list the open pull requests of a repository", want: []string{"pulls/list"}, within: 10},
	}
	for _, tt := range tests {
		t.Run(tt.task, func(t *testing.T) {
			within := cmp.Or(tt.within, 5)
			hits := ix.Search(context.Background(), toolsearch.Query{Text: tt.task, K: within})
			var got []string
			for _, h := range hits {
				got = append(got, operation[h.Name])
			}
			if !slices.ContainsFunc(got, func(op string) bool { return slices.Contains(tt.want, op) }) {
				t.Errorf("the first %d for %q are %v, none of %v", within, tt.task, got, tt.want)
			}
		})
	}
}
