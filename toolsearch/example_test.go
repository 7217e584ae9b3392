package toolsearch_test

import (
	"context"
	"fmt"

	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/toolsearch"
)

// Index a few servers' tools, then ask as people do: in their own words,
// with values in the request.
func ExampleIndex_Search() {
	ix := toolsearch.New(nil)
	for _, e := range []struct{ server, name, description string }{
		{"fs", "directory_size", "Total size of the files under a directory."},
		{"fs", "delete_file", "Delete a file."},
		{"notes", "create_note", "Create a note."},
		{"system", "list_processes", "List running processes with their CPU and memory use."},
		{"github", "create_issue", "Create an issue in a repository."},
	} {
		ix.Add(toolsearch.Entry{Server: e.server, Name: e.name, Tool: &mcp.Tool{Name: e.name, Description: e.description}})
	}
	for _, q := range []string{
		"how much room is my downloads folder taking up",
		"get rid of /tmp/old.log",
		"jot this down so I don't lose it",
		"my laptop fan is screaming, what's hogging it?",
		"file a bug on GitHub: login page is blank",
	} {
		hits := ix.Search(context.Background(), toolsearch.Query{Text: q, K: 1})
		fmt.Printf("%-48s %s/%s\n", q, hits[0].Server, hits[0].Name)
	}
	// Output:
	// how much room is my downloads folder taking up   fs/directory_size
	// get rid of /tmp/old.log                          fs/delete_file
	// jot this down so I don't lose it                 notes/create_note
	// my laptop fan is screaming, what's hogging it?   system/list_processes
	// file a bug on GitHub: login page is blank        github/create_issue
}
