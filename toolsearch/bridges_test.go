package toolsearch

import (
	"context"
	"slices"
	"testing"

	"github.com/mcpgate/mcpgate/mcp"
)

// Each bridge finds a tool through a word the query says and the tool
// does not; with the bridge left out, the tool is not found at all.
func TestBridgesFindToolsInOtherWords(t *testing.T) {
	tools := []*mcp.Tool{
		{Name: "delete_file", Description: "Remove a file from the workspace."},
		{Name: "write_note", Description: "Write a note to keep."},
		{Name: "list_pods", Description: "List the pods of a Kubernetes namespace."},
		{Name: "create_merge_request", Description: "Open a merge request between two branches."},
		{Name: "send_message", Description: "Post a message to a channel."},
		{Name: "start_job", Description: "Begin a job on the runner."},
	}
	tests := []struct {
		query, want string
		bridge      Bridge
	}{
		{"jot it", "write_note", BridgeWordNet}, // jot: a synonym of write
		{"what is running in k8s", "list_pods", BridgeDomain},
		{"an mr from feature into main", "create_merge_request", BridgeDomain},
		// A phrasal verb, inflected and split by a pronoun: kick off.
		{"kicked it off", "start_job", BridgeDomain},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			for _, off := range []bool{false, true} {
				var opts Options
				if off {
					opts.NoBridges = tt.bridge
				}
				ix := New(&opts)
				for _, tool := range tools {
					ix.Add(Entry{Server: "s", Name: tool.Name, Tool: tool})
				}
				hits := ix.Search(context.Background(), Query{Text: tt.query, K: 1})
				found := len(hits) > 0 && hits[0].Name == tt.want
				if found == off {
					t.Errorf("bridge off %v: hits %v, want %s found %v", off, names(hits), tt.want, !off)
				}
			}
		})
	}
}

func TestParseDomainReadsTermsAndSkipsComments(t *testing.T) {
	got := parseDomain("# comment\nPR: pull request\n\nno colon here\ncalendar  event : event # trailing\n")
	if w := got["pr"]; len(w) != 2 || w[0] != "pull" || w[1] != "request" {
		t.Errorf("pr: %q", w)
	}
	if w := got["calendar event"]; len(w) != 1 || w[0] != "event" {
		t.Errorf("calendar event: %q", w)
	}
	if len(got) != 2 {
		t.Errorf("terms %v, want 2", got)
	}
}

// Feedback finds, through the words the best tools share, a tool that
// shares no word with the query; without it that tool is not found.
func TestFeedbackAddsTheWordsTheBestToolsShare(t *testing.T) {
	tools := []*mcp.Tool{
		{Name: "archive_invoice", Description: "Archive an invoice in the ledger."},
		{Name: "export_invoice", Description: "Export an invoice from the ledger."},
		{Name: "ledger_balance", Description: "The ledger's balance."},
		{Name: "paint_fence", Description: "Paint a fence."},
	}
	for _, on := range []bool{false, true} {
		ix := New(&Options{Feedback: on})
		for _, tool := range tools {
			ix.Add(Entry{Server: "s", Name: tool.Name, Tool: tool})
		}
		got := names(ix.Search(context.Background(), Query{Text: "invoice", K: 5}))
		if found := slices.Contains(got, "ledger_balance"); found != on {
			t.Errorf("Feedback %v: hits %v; ledger_balance found %v", on, got, found)
		}
		if slices.Contains(got, "paint_fence") {
			t.Errorf("Feedback %v: hits %v include a tool with no shared word at all", on, got)
		}
	}
}
