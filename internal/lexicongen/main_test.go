package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testdata/dict is a few synsets in WordNet's format, with what the real
// database has: a licence header, multi-word lemmas, a proper noun beside
// a common one, a satellite adjective with its marker, derivation and
// hypernym pointers, exceptions whose base is not a lemma. want.txt is
// the output, read line by line against the input.
func TestGenerateWritesTheExpectedLexicon(t *testing.T) {
	var got strings.Builder
	if err := generate("testdata/dict", &got); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/want.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("generate wrote\n%s\nwant\n%s", got.String(), want)
	}
}

func TestRunIsByteForByteReproducible(t *testing.T) {
	dir := t.TempDir()
	var outs [2][]byte
	for i := range outs {
		out := filepath.Join(dir, "wordnet"+string(rune('a'+i))+".gz")
		if err := run("testdata/dict", out); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		outs[i] = b
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Fatal("two runs over the same input wrote different bytes")
	}
	zr, err := gzip.NewReader(bytes.NewReader(outs[0]))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() {
		t.Errorf("gzip header has name %q and time %v; want neither, as they would differ between runs", zr.Name, zr.ModTime)
	}
	text, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/want.txt")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(text, want) {
		t.Error("the gzip'd output is not generate's text")
	}
}

func TestBrokenDatabasesAreReportedWithFileAndLine(t *testing.T) {
	tests := []struct {
		name, file, content, want string
	}{
		{"missing file", "data.adv", "", "data.adv: no such file"},
		{"word count past the line", "data.adv", "00200001 02 r 09 quickly 0 000 | x\n", "data.adv:1: bad word count"},
		{"pointer count past the line", "data.adv", "00200001 02 r 01 quickly 0 004 | x\n", "data.adv:1: bad pointer count"},
		{"index counts that disagree", "index.adv", "  header\nquickly r 2 0 1 0 00200001\n", "index.adv:2: bad counts"},
		{"exception without a base", "verb.exc", "ran\n", "verb.exc:1: short exception line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			entries, err := os.ReadDir("testdata/dict")
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				b, err := os.ReadFile(filepath.Join("testdata/dict", e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				if e.Name() == tt.file {
					if tt.content == "" {
						continue
					}
					b = []byte(tt.content)
				}
				if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err = generate(dir, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("generate: %v; want an error with %q", err, tt.want)
			}
		})
	}
}
