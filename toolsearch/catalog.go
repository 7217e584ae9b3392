package toolsearch

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/mcpgate/mcpgate/mcp"
)

// LoadCatalog reads tools for an offline index. A file is either
// {"server": NAME, "tools": [...]} or a plain tools/list result
// {"tools": [...]}, whose server is named after the file; a directory is
// read whole (its *.json files, in name order).
func LoadCatalog(path string) ([]Entry, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return loadCatalogFile(path)
	}
	files, err := filepath.Glob(filepath.Join(path, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no *.json catalog files in this directory", path)
	}
	slices.Sort(files)
	var all []Entry
	for _, f := range files {
		es, err := loadCatalogFile(f)
		if err != nil {
			return nil, err
		}
		all = append(all, es...)
	}
	return all, nil
}

func loadCatalogFile(path string) ([]Entry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c struct {
		Server string      `json:"server"`
		Tools  []*mcp.Tool `json:"tools"`
	}
	if err := jsonv2.Unmarshal(data, &c, jsonv2.RejectUnknownMembers(false)); err != nil {
		return nil, fmt.Errorf("%s: not a catalog ({\"server\", \"tools\"} or a tools/list result): %v", path, err)
	}
	if c.Tools == nil {
		return nil, fmt.Errorf("%s: no \"tools\" array: a catalog is {\"server\": NAME, \"tools\": [...]} or a tools/list result", path)
	}
	if c.Server == "" {
		c.Server = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	out := make([]Entry, 0, len(c.Tools))
	for i, t := range c.Tools {
		if t == nil || t.Name == "" {
			return nil, fmt.Errorf("%s: tools[%d] has no name", path, i)
		}
		out = append(out, Entry{Server: c.Server, Name: c.Server + "/" + t.Name, Tool: t})
	}
	return out, nil
}
