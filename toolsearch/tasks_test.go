package toolsearch

import (
	"bufio"
	"context"
	"os"
	"slices"
	"strings"
	"testing"
)

// task is a request of testdata/tasks.txt and the tools that serve it.
type task struct {
	line  int
	query string
	want  []string
}

func loadTasks(t *testing.T, path string) []task {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var tasks []task
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		query, want, ok := strings.Cut(line, " => ")
		if !ok || strings.TrimSpace(query) == "" || len(strings.Fields(want)) == 0 {
			t.Fatalf("%s:%d: want REQUEST => TOOL...", path, n)
		}
		tasks = append(tasks, task{n, strings.TrimSpace(query), strings.Fields(want)})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return tasks
}

// gatewayCatalog indexes the whole corpus as a gateway publishes it:
// every server's tools under server_tool.
func gatewayCatalog(t *testing.T) *Index {
	ix := New(nil)
	var es []Entry
	for _, e := range loadCorpus(t) {
		es = append(es, Entry{Server: e.Server, Name: e.Server + "_" + e.Tool.Name, Tool: e.Tool})
	}
	ix.Add(es...)
	return ix
}

// The floors of TestHandWrittenTasksFindTheirTools, a guard against
// regressions rather than a target: two tasks below what the ranker
// scored when they were set (43 and 51 of 55), and above what it scored
// before it took values out of the words (39 and 47). A change that
// trades a task or two for a gain elsewhere (the Azure set, say) passes;
// one that loses the handling of values does not.
const (
	tasksTop1Floor = 41
	tasksTop5Floor = 49
)

// TestHandWrittenTasksFindTheirTools searches the real catalog for
// requests written by hand, many with values in them (URLs, paths,
// numbers), and counts the requests whose tool comes first and among the
// first five.
func TestHandWrittenTasksFindTheirTools(t *testing.T) {
	ix := gatewayCatalog(t)
	tasks := loadTasks(t, "testdata/tasks.txt")
	var top1, top5 int
	for _, tk := range tasks {
		for _, w := range tk.want {
			if _, _, ok := ix.Tool(w); !ok {
				t.Errorf("tasks.txt:%d: no tool %q in the catalog", tk.line, w)
			}
		}
		hits := ix.Search(context.Background(), Query{Text: tk.query, K: 5})
		rank := slices.IndexFunc(hits, func(h Hit) bool { return slices.Contains(tk.want, h.Name) }) + 1
		switch {
		case rank == 1:
			top1++
		case rank == 0:
			t.Logf("tasks.txt:%d: %q: not in the first 5: %v", tk.line, tk.query, names(hits))
		default:
			t.Logf("tasks.txt:%d: %q: rank %d: %v", tk.line, tk.query, rank, names(hits))
		}
		if rank > 0 {
			top5++
		}
	}
	t.Logf("%d tasks: top-1 %d, top-5 %d", len(tasks), top1, top5)
	if top1 < tasksTop1Floor || top5 < tasksTop5Floor {
		t.Errorf("top-1 %d (floor %d), top-5 %d (floor %d) of %d tasks", top1, tasksTop1Floor, top5, tasksTop5Floor, len(tasks))
	}
}
