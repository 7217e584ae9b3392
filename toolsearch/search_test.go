package toolsearch

import (
	"context"
	"testing"

	"github.com/mcpgate/mcpgate/mcp"
)

// "closed PRs" asks for pull requests that are closed, not to close
// something; "created after" filters by a date.
func TestParticiplesThatFilterAreNotTheOperation(t *testing.T) {
	ix := New(nil)
	for _, tool := range []*mcp.Tool{
		{Name: "close_page", Description: "Close a browser page."},
		{Name: "list_pull_requests", Description: "List pull requests of a repository."},
		{Name: "create_ticket", Description: "Create a ticket."},
		{Name: "search_tickets", Description: "Search tickets by text, state and dates."},
	} {
		ix.Add(Entry{Server: "s", Name: tool.Name, Tool: tool})
	}
	for _, tt := range []struct{ query, want string }{
		{"closed PRs in acme/web", "list_pull_requests"},
		{"tickets created after 2025-01-01 with state open", "search_tickets"},
		// An imperative is the operation.
		{"close the page", "close_page"},
		{"create a ticket", "create_ticket"},
	} {
		hits := ix.Search(context.Background(), Query{Text: tt.query, K: 2})
		if len(hits) == 0 || hits[0].Name != tt.want {
			t.Errorf("%s: hits %v, want %s first", tt.query, names(hits), tt.want)
		}
	}
}
