package pins

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpgate/mcpgate/mcp"
)

// evalTools is the corpus of real tool definitions beside the repository
// (74 published servers, 2,331 tools).
const evalTools = "../../../shared/eval/tools"

// The scanner flags none of the real tools of 74 published servers: a
// tripwire that fires on ordinary tools would be ignored, or would
// withhold them under pins: approve.
func TestScanFlagsNoRealTool(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(evalTools, "*.json"))
	if len(files) == 0 {
		t.Skipf("no evaluation corpus at %s (it lies in shared/ beside the repository)", evalTools)
	}
	tools, flagged := 0, 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cat struct {
			Server string      `json:"server"`
			Tools  []*mcp.Tool `json:"tools"`
		}
		if err := json.Unmarshal(b, &cat); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, tool := range cat.Tools {
			tools++
			d, err := Of(tool)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if fs := Scan(d); len(fs) > 0 {
				flagged++
				t.Errorf("%s/%s: %v", cat.Server, tool.Name, fs)
			}
		}
	}
	t.Logf("%d of %d real tools flagged (%d servers)", flagged, tools, len(files))
}
