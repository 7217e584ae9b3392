package jsonschema

// This file is mcpgate's, not upstream's: it tests the one change this
// copy makes (README.md).

import (
	"os"
	"os/exec"
	"testing"
)

// The metaschemas are compiled by the first Compile, not at init. Run in
// a process of its own, where no other test has compiled anything yet.
func TestMetaschemasLazy(t *testing.T) {
	if os.Getenv("JSONSCHEMA_LAZY_CHILD") == "1" {
		for _, d := range []*Draft{Draft4, Draft6, Draft7, Draft2019, Draft2020} {
			if d.sch != nil {
				t.Fatalf("draft %d's metaschema was compiled before any Compile", d.version)
			}
		}
		c := NewCompiler()
		if err := c.AddResource("urn:x", map[string]any{"type": "integer"}); err != nil {
			t.Fatal(err)
		}
		sch, err := c.Compile("urn:x")
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []*Draft{Draft4, Draft6, Draft7, Draft2019, Draft2020} {
			if d.sch == nil {
				t.Fatalf("draft %d's metaschema is still not compiled after Compile", d.version)
			}
			for name, v := range d.allVocabs {
				if v == nil {
					t.Fatalf("draft %d's vocabulary %s is not compiled", d.version, name)
				}
			}
		}
		if sch.Validate(1) != nil || sch.Validate("x") == nil {
			t.Fatal("the compiled schema does not validate")
		}
		// A schema that breaks its metaschema is refused, as upstream.
		c = NewCompiler()
		c.AddResource("urn:y", map[string]any{"type": "nonsense"})
		if _, err := c.Compile("urn:y"); err == nil {
			t.Fatal("an invalid schema compiled")
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMetaschemasLazy$", "-test.count=1")
	cmd.Env = append(os.Environ(), "JSONSCHEMA_LAZY_CHILD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// Compiles on many goroutines at once, the first of them loading the
// metaschemas, under the race detector in CI.
func TestConcurrentFirstCompile(t *testing.T) {
	if os.Getenv("JSONSCHEMA_LAZY_CHILD") == "2" {
		done := make(chan error, 8)
		for range 8 {
			go func() {
				c := NewCompiler()
				c.AddResource("urn:x", map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}})
				_, err := c.Compile("urn:x")
				done <- err
			}()
		}
		for range 8 {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestConcurrentFirstCompile$", "-test.count=1")
	cmd.Env = append(os.Environ(), "JSONSCHEMA_LAZY_CHILD=2")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
