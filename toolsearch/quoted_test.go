package toolsearch

import (
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/mcp"
)

func TestSplitQuotedTakesOutWhatIsQuoted(t *testing.T) {
	tests := []struct {
		text, rest, quoted string
	}{
		{`file a bug "crash on upload"`, `file a bug                  `, `crash on upload `},
		{`post “ship it” and 'done' in #eng`, "post " + strings.Repeat(" ", len(`“ship it”`)) + " and        in     ", `ship it done eng `},
		{"run `npm test` now", "run            now", "npm test "},
		// Apostrophes are not quotes.
		{`what's in the users' files`, `what's in the users' files`, ``},
		{`read 'Bob's notes' please`, "read " + strings.Repeat(" ", len(`'Bob's notes'`)) + " please", `Bob's notes `},
		// A quote left open quotes nothing; an empty pair is not a span.
		{`say "hello to all`, `say "hello to all`, ``},
		{`an "" empty one`, `an "" empty one`, ``},
		// A #tag names a channel or an element; a number or C# is none.
		{`post in #deploys, then #eng-ops.`, `post in         , then         .`, `deploys eng-ops `},
		{`issue #77 in C# code`, `issue #77 in C# code`, ``},
		{`say"hi"`, `say    `, `hi `},
	}
	for _, tt := range tests {
		rest, quoted := splitQuoted(tt.text)
		if rest != tt.rest || quoted != tt.quoted {
			t.Errorf("splitQuoted(%q) = %q, %q; want %q, %q", tt.text, rest, quoted, tt.rest, tt.quoted)
		}
	}
}

// A title quoted in a request is what the tool is to be given: its words
// do not choose the tool. Read as words, "uploading" here finds the
// upload tool first.
func TestQuotedWordsCountLessThanTheRequest(t *testing.T) {
	ix := indexOf(nil,
		&mcp.Tool{Name: "create_issue", Description: "Create an issue in a project."},
		&mcp.Tool{Name: "upload_avatar", Description: "Upload an avatar image when a crash report needs one."},
	)
	wantFirst(t, ix, []firstHit{
		{`new issue "Crash when uploading avatar"`, "create_issue"},
		// All quotes: the quotes are the request.
		{`"upload avatar"`, "upload_avatar"},
		// A channel's name is not the request either.
		{`new issue from #avatar-crash`, "create_issue"},
	})
}

func FuzzSplitQuoted(f *testing.F) {
	for _, s := range []string{`a "b" c`, "x `y` ‘z’ «w»", `it's 'q'`, `"open`, "\xff\"\xfe\"", "#a #1 b#c #"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		rest, quoted := splitQuoted(text)
		if len(rest) != len(text) {
			t.Fatalf("rest %q is not as long as %q", rest, text)
		}
		for i := range len(text) {
			if rest[i] != text[i] && rest[i] != ' ' {
				t.Fatalf("rest %q changed %q at %d other than by a blank", rest, text, i)
			}
		}
		for span := range strings.SplitSeq(quoted, " ") {
			if !strings.Contains(text, span) {
				t.Fatalf("quoted %q has %q, which %q does not", quoted, span, text)
			}
		}
	})
}
