package toolsearch

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/mcp"
)

// Each bridge, alone, finds a tool through a word the query says and the
// tool does not; with no bridge, the tool is not found at all.
func TestBridgesFindToolsInOtherWords(t *testing.T) {
	tools := []*mcp.Tool{
		{Name: "delete_file", Description: "Remove a file from the workspace."},
		{Name: "write_note", Description: "Write a note to keep."},
		{Name: "list_pods", Description: "List the pods of a Kubernetes namespace."},
		{Name: "create_merge_request", Description: "Open a merge request between two branches."},
		{Name: "send_message", Description: "Post a message to a channel."},
		{Name: "start_job", Description: "Begin a job on the runner."},
		{Name: "directory_size", Description: "Total bytes under a path."},
		{Name: "process_error_logs", Description: "What a process wrote to its logs when it failed."},
		{Name: "count_rows", Description: "The number of rows of a table."},
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
		{"how big has it got", "directory_size", BridgeEveryday},
		// An everyday verb, inflected: ditch.
		{"ditched the lot", "delete_file", BridgeEveryday},
		// A question asks for what tools name its answer by.
		{"how many are there", "count_rows", BridgeDomain},
		// A negated verb is one word, with or without its apostrophe.
		{"my app won't start", "process_error_logs", BridgeEveryday},
		{"my app wont start", "process_error_logs", BridgeEveryday},
		{"my app won’t start", "process_error_logs", BridgeEveryday},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			const all = BridgeWordNet | BridgeDomain | BridgeEveryday
			for _, off := range []bool{false, true} {
				opts := Options{NoBridges: all &^ tt.bridge}
				if off {
					opts.NoBridges = all
				}
				hits := indexOf(&opts, tools...).Search(context.Background(), Query{Text: tt.query, K: 1})
				found := len(hits) > 0 && hits[0].Name == tt.want
				if found == off {
					t.Errorf("bridge off %v: hits %v, want %s found %v", off, names(hits), tt.want, !off)
				}
			}
		})
	}
}

func TestParseDomainReadsTermsAndSkipsComments(t *testing.T) {
	got := parseDomain("# comment\nPR: pull request\n\nno colon here\ncalendar  event : event # trailing\nto-do: todo node.js\n")
	if w := got["pr"]; len(w) != 2 || w[0] != "pull" || w[1] != "request" {
		t.Errorf("pr: %q", w)
	}
	if w := got["calendar event"]; len(w) != 1 || w[0] != "event" {
		t.Errorf("calendar event: %q", w)
	}
	// A query's words split at a hyphen or a dot, so a term's must too,
	// or "to-do" would never be met.
	if w := got["to do"]; !slices.Equal(w, []string{"todo", "node", "js"}) {
		t.Errorf("to-do: %q, want the words a query says for it", w)
	}
	if len(got) != 3 {
		t.Errorf("terms %v, want 3", got)
	}
}

// "file a", "log an", "raise a", "open a": a verb that, before an
// article, creates; the same word before a thing that exists keeps its
// own sense.
func TestAVerbBeforeAnArticleCreates(t *testing.T) {
	ix := indexOf(nil,
		&mcp.Tool{Name: "create_ticket", Description: "Start a new ticket in the queue."},
		&mcp.Tool{Name: "get_ticket_files", Description: "The files attached to a ticket, and their logs."},
	)
	create := ix.an.stem("create", false)
	for _, tt := range []struct {
		query   string
		creates bool
	}{
		{"file a ticket about the login page", true},
		{"log an urgent ticket for the login page", true},
		{"raise a ticket", true},
		{"the file of ticket 12", false},
		{"log of ticket 12", false},
	} {
		rest, values := queryValues(tt.query, nil)
		w, _ := ix.queryTerms(rest, values, nil)
		if got := w[create] >= domainWeight; got != tt.creates {
			t.Errorf("%q: create weighs %.2f; want create implied %v", tt.query, w[create], tt.creates)
		}
	}
}

// "Don't forget that..." asks to remember; the everyday list once sent
// forget to delete as well, and a memory's delete tool came first.
func TestDontForgetRemembers(t *testing.T) {
	ix := indexOf(nil,
		&mcp.Tool{Name: "delete_observations", Description: "Delete observations from the memory graph."},
		&mcp.Tool{Name: "add_observations", Description: "Remember new observations in the memory graph."},
	)
	wantFirst(t, ix, []firstHit{
		{"FYI the Henderson job is now due in May, don't forget that", "add_observations"},
		{"never forget it: Ana is allergic to nuts", "add_observations"},
	})
}

// The curated lists are data that people edit: each line must keep the
// form the ranker reads, a term of one or two words and the few words
// tools use for it, or the line is silently never matched.
func TestCuratedListsKeepTheirForm(t *testing.T) {
	word := regexp.MustCompile(`^[a-z0-9][a-z0-9.+#-]*$`)
	for name, text := range map[string]string{"domain.txt": domainText, "everyday.txt": everydayText} {
		for n, line := range slices.Collect(strings.Lines(text)) {
			body, _, _ := strings.Cut(line, "#")
			if strings.TrimSpace(body) == "" {
				continue
			}
			term, targets, ok := strings.Cut(body, ":")
			tf, wf := strings.Fields(term), strings.Fields(targets)
			// A term is met by the query's words, which a hyphen or a
			// dot splits: "to-do" is two, "text-to-speech" three.
			bad := !ok || len(tf) < 1 || len(words(term, nil)) > 2 || len(wf) < 1 || len(wf) > 8
			for _, x := range append(tf, wf...) {
				bad = bad || !word.MatchString(x)
			}
			if len(tf) == 1 && len(wf) == 1 && wf[0] == tf[0] {
				bad = true // a term that means itself adds nothing
			}
			if bad {
				t.Errorf("%s:%d: %q is not \"term (1-2 words): 1-8 lower-case words\"", name, n+1, strings.TrimSpace(line))
			}
		}
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
		got := names(indexOf(&Options{Feedback: on}, tools...).Search(context.Background(), Query{Text: "invoice", K: 5}))
		if found := slices.Contains(got, "ledger_balance"); found != on {
			t.Errorf("Feedback %v: hits %v; ledger_balance found %v", on, got, found)
		}
		if slices.Contains(got, "paint_fence") {
			t.Errorf("Feedback %v: hits %v include a tool with no shared word at all", on, got)
		}
	}
}
