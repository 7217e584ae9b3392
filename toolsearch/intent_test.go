package toolsearch

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/mcp"
)

// firstHit is a query and the tool it must rank first.
type firstHit struct{ query, want string }

// indexOf indexes tools as one server's ("s").
func indexOf(opts *Options, tools ...*mcp.Tool) *Index {
	ix := New(opts)
	for _, tool := range tools {
		ix.Add(Entry{Server: "s", Name: tool.Name, Tool: tool})
	}
	return ix
}

// indexOfServers indexes one tool for each server, given as {server,
// tool, description}.
func indexOfServers(tools ...[3]string) *Index {
	ix := New(nil)
	for _, t := range tools {
		ix.SetServer(t[0], []Entry{{Name: t[1], Tool: &mcp.Tool{Name: t[1], Description: t[2]}}})
	}
	return ix
}

// wantFirst fails t for each query whose first hit is not its tool.
func wantFirst(t *testing.T, ix *Index, tests []firstHit) {
	t.Helper()
	for _, tt := range tests {
		hits := ix.Search(context.Background(), Query{Text: tt.query, K: 3})
		if len(hits) == 0 || hits[0].Name != tt.want {
			t.Errorf("%s: hits %v, want %s first", tt.query, names(hits), tt.want)
		}
	}
}

// "closed PRs" asks for pull requests that are closed, not to close
// something; "created after" filters by a date.
func TestParticiplesThatFilterAreNotTheOperation(t *testing.T) {
	ix := indexOf(nil,
		&mcp.Tool{Name: "close_page", Description: "Close a browser page."},
		&mcp.Tool{Name: "list_pull_requests", Description: "List pull requests of a repository."},
		&mcp.Tool{Name: "create_ticket", Description: "Create a ticket."},
		&mcp.Tool{Name: "search_tickets", Description: "Search tickets by text, state and dates."},
	)
	wantFirst(t, ix, []firstHit{
		{"closed PRs in acme/web", "list_pull_requests"},
		{"tickets created after 2025-01-01 with state open", "search_tickets"},
		// An imperative is the operation.
		{"close the page", "close_page"},
		{"create a ticket", "create_ticket"},
	})
}

// A query that names a server means its tools, though another server's
// tool says the query's other words more often.
func TestNamedServerIsPreferred(t *testing.T) {
	ix := indexOfServers(
		[3]string{"github", "merge_pull_request", "Merge a pull request."},
		[3]string{"gitlab-zereight", "merge_merge_request", "Merge a merge request: squash and merge, or merge when the pipeline succeeds."},
	)
	wantFirst(t, ix, []firstHit{
		{"squash and merge #77 on GitHub once the pipeline is green", "merge_pull_request"},
		{"squash and merge !77 on gitlab", "merge_merge_request"},
	})
}

// A value is not a word: "dev" in a path does not name shopify-dev.
func TestAValueNamesNoServer(t *testing.T) {
	ix := indexOfServers(
		[3]string{"shopify-dev", "validate_theme", "Start npm test for a theme."},
		[3]string{"desktop-commander", "start_process", "Start npm test in a folder."},
	)
	wantFirst(t, ix, []firstHit{
		{"in /home/dev/webapp kick off npm test", "start_process"},
	})
}

// A curated word is held back for naming other servers than the query
// names only when it is the product a server is named after ("gitlab"
// of gitlab-zereight), not a word of what a server does ("chart" of
// antv-chart: "plot this as a line" names line-bot and still wants a
// chart).
func TestOnlyAProductNameIsHeldBack(t *testing.T) {
	ix := New(nil)
	for _, server := range []string{"gitlab-zereight", "antv-chart", "line-bot"} {
		ix.SetServer(server, []Entry{{Name: server + "_t", Tool: &mcp.Tool{Name: "t", Description: "A tool."}}})
	}
	named := map[string]bool{"line-bot": true}
	for word, want := range map[string]bool{"gitlab": true, "antv": true, "chart": false, "line": false, "bot": false, "issue": false} {
		if got := ix.namesOnlyOthers(word, named); got != want {
			t.Errorf("namesOnlyOthers(%q, line-bot named) = %v, want %v", word, got, want)
		}
	}
}

// A query that does not name its service names its kind ("in chat",
// "the feature toggle"): the everyday list gives the products of that
// kind, so their servers' tools come first. A query that names a server
// keeps it (TestNamedServerIsPreferred).
func TestAKindOfServiceFindsItsProducts(t *testing.T) {
	ix := indexOfServers(
		[3]string{"slack", "get_channel_history", "Get recent messages from a channel."},
		[3]string{"gmail", "search_emails", "Search emails with a query; returns the messages found."},
		[3]string{"launchdarkly", "update_feature_flag", "Update a feature flag's settings."},
		[3]string{"shopify", "update_checkout_settings", "Update the store's checkout settings."},
	)
	wantFirst(t, ix, []firstHit{
		{"someone posted the VPN setup steps in chat a while back, find the messages", "get_channel_history"},
		{"anything in my inbox from the landlord?", "search_emails"},
		{"switch off the new checkout's feature toggle", "update_feature_flag"},
	})
}

func TestNamedServers(t *testing.T) {
	ix := New(nil)
	ix.SetServer("brave-search", []Entry{{Name: "web", Tool: &mcp.Tool{Name: "web", Description: "Search the web."}}})
	ix.SetServer("google-calendar", []Entry{{Name: "list_events", Tool: &mcp.Tool{Name: "list_events", Description: "List events."}}})
	ix.SetServer("mcp-atlassian", []Entry{{Name: "get_page", Tool: &mcp.Tool{Name: "get_page", Description: "Get a Confluence page."}}})
	for i, server := range []string{"docs", "code", "mail"} {
		// Other servers search too: "search" is a word of the catalog,
		// and names no server.
		ix.SetServer(server, []Entry{{Name: "search_" + server, Tool: &mcp.Tool{Name: "search_" + server, Description: "Search " + []string{"documents", "code", "mail"}[i] + "."}}})
	}
	for _, tt := range []struct {
		query string
		want  []string
	}{
		{"search the web with Brave", []string{"brave-search"}},
		{"search the web", nil},
		{"what's on my GoogleCalendar", []string{"google-calendar"}},
		{"what's on google's calendar", []string{"google-calendar"}},
		// A later word of a name that the dictionary knows says what the
		// server does: any calendar will do. One it does not know is the
		// product (mcp-atlassian).
		{"what's on my calendar", nil},
		{"the atlassian wiki page", []string{"mcp-atlassian"}},
		{"docs and mail", []string{"docs", "mail"}},
	} {
		got := slices.Sorted(maps.Keys(ix.namedServers(tt.query)))
		if !slices.Equal(got, tt.want) {
			t.Errorf("namedServers(%q) = %v, want %v", tt.query, got, tt.want)
		}
	}
	ix.SetServer("brave-search", nil)
	if got := ix.namedServers("brave"); got != nil {
		t.Errorf("after brave-search is gone, namedServers(brave) = %v", got)
	}
}

func TestQuestionAsksRatherThanTells(t *testing.T) {
	for _, tt := range []struct {
		text string
		want bool
	}{
		{"What's stored under session:98231", true},
		{"any unread emails? show me the newest", true},
		{"did many customers sign up last week?", true},
		{"vscode crashes at launch. has anyone reported it?", true},
		{"Can you open a ticket for this?", false},
		{"create a ticket", false},
		{"", false},
	} {
		if got := question(tt.text); got != tt.want {
			t.Errorf("question(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

// A question wants to be told: a tool that writes ranks below one that
// reads, unless the question says the write ("who can delete it?").
func TestQuestionsPreferToolsThatRead(t *testing.T) {
	ix := New(nil)
	ix.SetServer("kv", []Entry{
		{Name: "set", Tool: &mcp.Tool{Name: "set", Description: "Set a key: the value is stored under it until it expires."}},
		{Name: "get", Tool: &mcp.Tool{Name: "get", Description: "Get the value stored under a key."}},
		{Name: "delete_key", Tool: &mcp.Tool{Name: "delete_key", Description: "Delete a key and its stored value."}},
	})
	wantFirst(t, ix, []firstHit{
		{"what's stored under key session:98231?", "get"},
		{"store the value under key session:98231", "set"},
		{"who may delete the stored key?", "delete_key"},
	})
}

// Questions search under the index's read lock like any query: what they
// look up must not teach the analyzer words (go test -race).
func TestQuestionsSearchConcurrently(t *testing.T) {
	ix := New(nil)
	ix.SetServer("kv", []Entry{
		{Name: "get", Tool: &mcp.Tool{Name: "get", Description: "Get a value."}},
		{Name: "set", Tool: &mcp.Tool{Name: "set", Description: "Set a value."}},
	})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				ix.Search(context.Background(), Query{Text: "what is the value on kv?"})
			}
		})
	}
	wg.Wait()
}
