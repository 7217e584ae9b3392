package taskstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// seed fills a store with open and closed tasks, each title naming what
// it is, so that the order of titles in a text can be checked.
func seed(t *testing.T, st *Store) {
	t.Helper()
	ctx := context.Background()
	for _, n := range []NewTask{
		{Title: "low pending", Priority: PriorityLow},
		{Title: "high pending work", Priority: PriorityHigh, Tags: []string{"web"}, Description: "First line.\nSecond line."},
		{Title: "medium in progress", Status: StatusInProgress, Tags: []string{"web", "api"}},
		{Title: "finished", Status: StatusDone, Priority: PriorityHigh},
		{Title: "abandoned", Status: StatusCancelled, Priority: PriorityHigh},
		{Title: "medium pending"},
	} {
		if _, err := st.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
}

// inOrder reports whether every one of want occurs in s, in that order.
func inOrder(s string, want ...string) bool {
	for _, w := range want {
		i := strings.Index(s, w)
		if i < 0 {
			return false
		}
		s = s[i+len(w):]
	}
	return true
}

func testReviewPromptShowsTheOpenTasksInProgressFirstThenByPriority(t *testing.T, b backend) {
	st := openStore(t, b)
	seed(t, st)
	c := serve(t, st)
	c.initialize()

	var list struct {
		Prompts []struct {
			Name      string `json:"name"`
			Arguments []struct {
				Name     string `json:"name"`
				Required bool   `json:"required"`
			} `json:"arguments"`
		} `json:"prompts"`
	}
	json.Unmarshal(c.call("prompts/list", map[string]any{}), &list)
	if len(list.Prompts) != 1 || list.Prompts[0].Name != "review_tasks" ||
		len(list.Prompts[0].Arguments) != 1 || list.Prompts[0].Arguments[0].Name != "tag" || list.Prompts[0].Arguments[0].Required {
		t.Fatalf("prompts/list: %+v", list)
	}

	for _, tt := range []struct {
		name    string
		args    map[string]string
		inOrder []string
		absent  []string
	}{
		{"every open task", nil,
			[]string{"medium in progress", "in progress; tags: web, api", "high pending work", "  First line.\n", "medium pending", "low pending", "Review them with me", "only once I agree"},
			[]string{"finished", "abandoned", "Second line"}},
		{"one tag", map[string]string{"tag": "web"},
			[]string{`tagged "web"`, "medium in progress", "high pending work"},
			[]string{"low pending", "medium pending", "finished"}},
		{"a tag no task has", map[string]string{"tag": "garden"},
			[]string{`I have no open tasks tagged "garden". Help me plan`, "create_task"},
			[]string{"pending"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var res struct {
				Messages []struct {
					Role    string `json:"role"`
					Content struct {
						Type string `json:"type"`
						Text string `json:"text"`
					} `json:"content"`
				} `json:"messages"`
			}
			json.Unmarshal(c.call("prompts/get", map[string]any{"name": "review_tasks", "arguments": tt.args}), &res)
			if len(res.Messages) != 1 || res.Messages[0].Role != "user" || res.Messages[0].Content.Type != "text" {
				t.Fatalf("prompts/get: %+v", res)
			}
			text := res.Messages[0].Content.Text
			if !inOrder(text, tt.inOrder...) {
				t.Errorf("want %q in this order in:\n%s", tt.inOrder, text)
			}
			for _, a := range tt.absent {
				if strings.Contains(text, a) {
					t.Errorf("%q should not be in:\n%s", a, text)
				}
			}
		})
	}
}

func testOpenTasksResourceIsTheOpenTasksAsMarkdown(t *testing.T, b backend) {
	for _, tt := range []struct {
		name    string
		tasks   int // besides seed's, all pending
		inOrder []string
		absent  []string
	}{
		{"a few", 0, []string{"# Open tasks\n\n", "- medium in progress (medium priority, in progress; tags: web, api) `task_", "high pending work", "medium pending", "low pending"}, []string{"finished", "abandoned", "more"}},
		// 4 open from seed and 100 more: the first 100 shown, 4 counted.
		{"more than fit", maxOpenShown, []string{"medium in progress", "high pending work", "- … and 4 more (list_tasks finds them)\n"}, []string{"finished"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := openStore(t, b)
			seed(t, st)
			for i := range tt.tasks {
				if _, err := st.Create(context.Background(), NewTask{Title: fmt.Sprintf("extra %d", i)}); err != nil {
					t.Fatal(err)
				}
			}
			c := serve(t, st)
			c.initialize()
			var list struct {
				Resources []struct {
					URI      string `json:"uri"`
					Name     string `json:"name"`
					MIMEType string `json:"mimeType"`
				} `json:"resources"`
			}
			json.Unmarshal(c.call("resources/list", map[string]any{}), &list)
			if len(list.Resources) != 1 || list.Resources[0].URI != OpenTasksURI || list.Resources[0].MIMEType != "text/markdown" {
				t.Fatalf("resources/list: %+v", list)
			}
			var read struct {
				Contents []struct {
					URI      string `json:"uri"`
					MIMEType string `json:"mimeType"`
					Text     string `json:"text"`
				} `json:"contents"`
			}
			json.Unmarshal(c.call("resources/read", map[string]any{"uri": OpenTasksURI}), &read)
			if len(read.Contents) != 1 || read.Contents[0].URI != OpenTasksURI || read.Contents[0].MIMEType != "text/markdown" {
				t.Fatalf("resources/read: %+v", read)
			}
			text := read.Contents[0].Text
			if !inOrder(text, tt.inOrder...) {
				t.Errorf("want %q in this order in:\n%s", tt.inOrder, text)
			}
			for _, a := range tt.absent {
				if strings.Contains(text, a) {
					t.Errorf("%q should not be in:\n%s", a, text)
				}
			}
			if n := strings.Count(text, "\n- ") - strings.Count(text, "\n- … and"); n > maxOpenShown {
				t.Errorf("%d tasks listed, more than %d", n, maxOpenShown)
			}
		})
	}
}

func testOpenTasksResourceOfAnEmptyStore(t *testing.T, b backend) {
	c := serve(t, openStore(t, b))
	c.initialize()
	var read struct {
		Contents []struct {
			Text string `json:"text"`
		} `json:"contents"`
	}
	json.Unmarshal(c.call("resources/read", map[string]any{"uri": OpenTasksURI}), &read)
	if len(read.Contents) != 1 || read.Contents[0].Text != "# Open tasks\n\nThere are no open tasks.\n" {
		t.Fatalf("resources/read: %+v", read)
	}
}
