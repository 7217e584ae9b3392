package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse: any input gives a config or an error, never both or neither
// and never a panic; a config passes Validate again after its defaults,
// and no message shows the value of a variable.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.*")
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data, strings.HasSuffix(name, ".yaml"))
		}
	}
	for _, tc := range errorCases {
		src, _ := markers(tc.src)
		f.Add([]byte(src), tc.file == "c.yaml")
	}
	f.Add([]byte("a: &a [*a]\nmcpServers: {s: {command: x, tools: {meta: {t: {v: *a}}}}}"), true)
	f.Add([]byte(`{"mcpServers": {"s": {"command": "${SECRET}", "start": "${SECRET}"}}}`), false)

	const secret = "s3cr3t-value"
	lookup := env("SECRET", secret, "SCRATCH", "/tmp", "PORT", "1")
	f.Fuzz(func(t *testing.T, data []byte, yaml bool) {
		name := "f.json"
		if yaml {
			name = "f.yaml"
		}
		c, err := Parse(data, name, lookup)
		if (c == nil) == (err == nil) {
			t.Fatalf("config %v and error %v", c, err)
		}
		if err != nil {
			var es Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error %T %v is not a list of diagnostics", err, err)
			}
			for _, d := range es {
				if d.Msg == "" || d.File != name {
					t.Fatalf("diagnostic %+v", d)
				}
				if strings.Contains(d.Error(), secret) && !strings.Contains(string(data), secret) {
					t.Fatalf("message shows a variable's value: %v", d)
				}
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("a loaded config does not validate: %v", err)
		}
		r := c.Redacted()
		for _, s := range r.Servers {
			for _, v := range s.Env {
				if v != Redaction {
					t.Fatalf("env value %q not redacted", v)
				}
			}
		}
	})
}
