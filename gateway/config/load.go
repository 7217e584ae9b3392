package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxFileSize bounds what Load reads: a config is a few kilobytes, and a
// wrong path (a log, a database) should fail fast rather than fill memory.
const maxFileSize = 8 << 20

// Load reads and checks the file at path. env looks variables up for
// ${VAR} interpolation; nil means os.LookupEnv. The error is an [Errors]
// listing every problem when the file was read but is wrong.
func Load(path string, env func(string) (string, bool)) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("config: %s is larger than %d MiB; is it the right file?", path, maxFileSize>>20)
	}
	return Parse(data, path, env)
}

// Parse reads a config from data; filename names it in messages and picks
// the format (.yaml and .yml are YAML, .json and .jsonc JSON; otherwise a
// file that starts with '{' is JSON). On success the config is valid,
// defaults are applied, and Warnings lists what was tolerated.
func Parse(data []byte, filename string, env func(string) (string, bool)) (*Config, error) {
	if env == nil {
		env = os.LookupEnv
	}
	var loose []looseMark
	if b, ok := bytes.CutPrefix(data, []byte("\xef\xbb\xbf")); ok { // Windows editors' BOM
		data, loose = b, []looseMark{{0, "a byte order mark"}}
	}
	lines := newLineIndex(data)
	root, more, diag := parseTree(data, filename, lines)
	if diag != nil {
		diag.File = filename
		return nil, Errors{diag}
	}
	d := newDecoder(filename, env)
	c := d.config(root)
	if w := looseWarning(filename, root, append(loose, more...), lines); w != nil {
		d.warns = append(d.warns, w)
	}
	c.src = d.src
	errs := append(d.errs, c.validate()...)
	if len(errs) > 0 {
		sortDiags(errs)
		return nil, errs
	}
	sortDiags(d.warns)
	c.Warnings = d.warns
	c.ApplyDefaults()
	return c, nil
}

// parseTree reads the file's tree; loose is where JSON was not strict.
func parseTree(data []byte, filename string, lines *lineIndex) (root *yaml.Node, loose []looseMark, diag *Diagnostic) {
	switch strings.ToLower(filepath.Ext(filename)) {
	case ".json", ".jsonc":
		return parseJSON(data, lines)
	case ".yaml", ".yml":
		root, diag = parseYAML(data)
		return root, nil, diag
	}
	if clean, _ := stripJSONC(data); bytes.HasPrefix(bytes.TrimLeft(clean, " \t\r\n"), []byte("{")) {
		return parseJSON(data, lines)
	}
	root, diag = parseYAML(data)
	return root, nil, diag
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func parseYAML(data []byte) (root *yaml.Node, diag *Diagnostic) {
	// The parser is trusted not to panic, but a config file should never
	// take the gateway down if it does.
	defer func() {
		if r := recover(); r != nil {
			root, diag = nil, &Diagnostic{Msg: fmt.Sprintf("the YAML parser failed: %v", r)}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	err := dec.Decode(&doc)
	if err == io.EOF {
		return &yaml.Node{Kind: yaml.DocumentNode}, nil
	}
	if err == nil {
		var next yaml.Node
		if err = dec.Decode(&next); err == io.EOF {
			return &doc, nil
		} else if err == nil {
			return nil, &Diagnostic{Pos: Pos{next.Line, next.Column}, Msg: "a second YAML document",
				Hint: "a config is one document: remove the '---' and what follows, or merge them"}
		}
	}
	return nil, yamlError(err)
}

func yamlError(err error) *Diagnostic {
	d := &Diagnostic{Msg: "invalid YAML: " + strings.TrimPrefix(err.Error(), "yaml: "),
		Hint: "check the indentation and quoting on this line and the one before"}
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		d.Line, _ = strconv.Atoi(m[1])
		d.Msg = "invalid YAML: " + m[2]
	}
	if strings.Contains(d.Msg, "tab") {
		d.Hint = "YAML indents with spaces, never tabs"
	}
	return d
}

// ErrorList returns the diagnostics in err (nil when err is not from
// Parse), for callers that print them one to a line.
func ErrorList(err error) Errors {
	var es Errors
	if errors.As(err, &es) {
		return es
	}
	return nil
}
