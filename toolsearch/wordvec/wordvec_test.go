package wordvec

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
)

func loadModel(t testing.TB) *Model {
	t.Helper()
	m, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func cosine(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func norm(v []float32) float64 { return math.Sqrt(cosine(v, v)) }

func TestSimilarWordsAreCloserThanUnrelatedOnes(t *testing.T) {
	m := loadModel(t)
	for _, tc := range []struct{ word, similar, unrelated string }{
		{"picture", "image", "payment"}, // "invoice" is rarer than the 30,000 words kept
		{"picture", "photo", "receipt"},
		{"folder", "directory", "weather"},
		{"delete", "remove", "music"},
		{"search", "find", "banana"},
		{"email", "message", "volcano"},
		{"calendar", "schedule", "ocean"},
		{"make the picture smaller", "resize_image: scale a photo down", "create_payment: charge a customer"},
		{"how much room is this folder taking", "directory size: total bytes of files in a directory", "send an email message"},
		{"getFileContents", "read file", "delete a calendar event"},
	} {
		w, s, u := m.Embed(tc.word), m.Embed(tc.similar), m.Embed(tc.unrelated)
		for _, v := range []struct {
			text string
			vec  []float32
		}{{tc.word, w}, {tc.similar, s}, {tc.unrelated, u}} {
			if norm(v.vec) == 0 {
				t.Fatalf("%q: the model knows none of its words", v.text)
			}
		}
		if cs, cu := cosine(w, s), cosine(w, u); cs <= cu {
			t.Errorf("cos(%q, %q) = %.3f, not above cos(%q, %q) = %.3f", tc.word, tc.similar, cs, tc.word, tc.unrelated, cu)
		}
	}
}

func TestEmbeddingsAreUnitLengthAndDeterministic(t *testing.T) {
	texts := []string{
		"picture",
		"make the picture smaller",
		"tool: get_file_contents (get file contents)\nserver: filesystem\ndescription: Read the complete contents of a file.",
		"HTTPServer EC2Instance MySQL s3Bucket",
		"the picture, the picture, the picture", // repeated words
		strings.Repeat("list the files in a directory ", 2000),
	}
	e := Embedder{}
	first, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	// In another order, one at a time: a text's vector is its own.
	for i := len(texts) - 1; i >= 0; i-- {
		again, err := e.Embed(context.Background(), []string{texts[i]})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(first[i], again[0]) {
			t.Errorf("%.40q: a second embedding differs", texts[i])
		}
		if len(first[i]) != loadModel(t).Dims() {
			t.Errorf("%.40q: %d dimensions, want %d", texts[i], len(first[i]), loadModel(t).Dims())
		}
		if n := norm(first[i]); math.Abs(n-1) > 1e-5 {
			t.Errorf("%.40q: norm %v, want 1", texts[i], n)
		}
	}
}

func TestTextsWithNoKnownWordGetAZeroVector(t *testing.T) {
	m := loadModel(t)
	texts := []string{"", "   \n\t", "the of and to is", "zzqxv qqxyzz", "日本語のテキスト", "!!! ... ---", "please could you"}
	vecs, err := Embedder{Model: m}.Embed(context.Background(), texts)
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	if len(vecs) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(vecs), len(texts))
	}
	for i, v := range vecs {
		if len(v) != m.Dims() || norm(v) != 0 {
			t.Errorf("%q: %d dimensions of norm %v, want a zero vector of %d", texts[i], len(v), norm(v), m.Dims())
		}
	}
}

func TestEmbedStopsWhenTheContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (Embedder{}).Embed(ctx, []string{"picture"}); err != context.Canceled {
		t.Errorf("Embed after cancel: %v, want context.Canceled", err)
	}
}

func TestTextIsSplitIntoWordsAsToolSearchSplitsIt(t *testing.T) {
	m := loadModel(t)
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"getFileContents", []string{"get", "file", "contents"}},
		{"get_file-contents.now", []string{"get", "file", "contents", "now"}},
		{"HTTPServer", []string{"http", "server"}},
		{"EC2Instance", []string{"ec2", "instance"}},
		{"s3Bucket", []string{"s3", "bucket"}},
		{"YouTube", []string{"youtube"}},         // known whole
		{"PlayStation", []string{"playstation"}}, // known whole
		{"MySQL", []string{"my", "sql"}},         // not known whole
		{"GitHub", []string{"git", "hub"}},
		{"Café au lait", []string{"caf\xff", "au", "lait"}},
		{"", nil},
	} {
		var got []string
		m.forEachWord(tc.text, func(w []byte) { got = append(got, string(w)) })
		if !slices.Equal(got, tc.want) {
			t.Errorf("words of %q = %q, want %q", tc.text, got, tc.want)
		}
	}
}

// gunzip returns the embedded data, uncompressed.
func gunzip(t *testing.T) []byte {
	t.Helper()
	zr, err := gzip.NewReader(strings.NewReader(embedded))
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func gz(data []byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	return b.Bytes()
}

func TestCorruptDataFailsWithAnError(t *testing.T) {
	raw := gunzip(t)
	header := bytes.Index(raw, []byte("\nwordvec 1 ")) + 1
	firstWord := bytes.IndexByte(raw[header:], '\n') + header + 1
	replace := func(old, new string) []byte {
		return gz(bytes.Replace(raw, []byte(old), []byte(new), 1))
	}
	flipped := []byte(embedded)
	flipped[len(flipped)/2] ^= 0x40
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"not gzip", raw[:100], "not gzip"},
		{"empty", nil, "not gzip"},
		{"a flipped bit", flipped, ""},
		{"truncated gzip", []byte(embedded[:len(embedded)/2]), "unexpected EOF"},
		{"truncated vectors", gz(raw[:len(raw)-1]), "vectors: unexpected EOF"},
		{"trailing data", gz(append(slices.Clip(raw), 0)), "trailing data"},
		{"no header", gz(raw[:header]), "header: unexpected EOF"},
		{"a bad header", replace("wordvec 1 ", "wordvec 2 "), "want \"wordvec 1 WORDS DIMS VOCABULARY\""},
		{"too many dimensions", replace("wordvec 1 30000 100 ", "wordvec 1 30000 100000 "), "out of range"},
		{"a repeated word", gz(slices.Concat(raw[:firstWord], []byte("the\nthe\n"), raw[firstWord+len("the\nof\n"):])), `"the" again`},
		{"a capital in a word", gz(slices.Concat(raw[:firstWord], []byte("The\n"), raw[firstWord+len("the\n"):])), `"The" is not a lower-case word`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Read(bytes.NewReader(tc.data))
			if err == nil {
				t.Fatalf("Read succeeded (%d words), want an error", m.Len())
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Read: %v, want it to say %q", err, tc.want)
			}
		})
	}
}

func TestTheEmbeddedDataCarriesTheNotice(t *testing.T) {
	m := loadModel(t)
	notice, err := os.ReadFile("NOTICE")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(notice)) {
		if want := strings.TrimRight("# "+line, " \n") + "\n"; !strings.Contains(m.Notice(), want) {
			t.Errorf("the data's notice lacks NOTICE's line %q", want)
		}
	}
	for _, want := range []string{"GloVe", "Pennington", "Public Domain Dedication and License (PDDL)", "GRAYPE Systems", "sha256 2d1bea7fa5525661598829da929d628e5c76e6206a4923c6b464f30c1a5d647c"} {
		if !strings.Contains(m.Notice(), want) {
			t.Errorf("the notice does not say %q", want)
		}
	}
	if m.Len() != 30000 || m.Dims() != 100 {
		t.Errorf("the model has %d words of %d dimensions, want 30000 of 100", m.Len(), m.Dims())
	}
}

func TestVectorIsNilForAnUnknownWord(t *testing.T) {
	m := loadModel(t)
	if v := m.Vector("zzqxv"); v != nil {
		t.Errorf("Vector(zzqxv) = %v, want nil", v[:3])
	}
	if v := m.Vector("picture"); len(v) != m.Dims() || norm(v) == 0 {
		t.Errorf("Vector(picture) has %d dimensions of norm %v", len(v), norm(v))
	}
}

// FuzzRead feeds the reader arbitrary models (gzip'd, so that the parser
// past gzip's checks is what is fuzzed): it must answer with a model or
// an error, never panic or hang.
func FuzzRead(f *testing.F) {
	f.Add([]byte("# notice\nwordvec 1 2 3 5\nab\ncd\n\x00\x02" +
		"\x00\x00\x80\x3f\x00\x00\x00\x3f" + "\x01\x02\x03\xff\xfe\xfd"))
	f.Add([]byte("wordvec 1 1 1 1\na1\n\x00\x00\x00\x80\x3f\x7f"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Read(bytes.NewReader(gz(data)))
		if err != nil {
			return
		}
		for _, w := range m.words {
			if v := m.Vector(w); len(v) != m.Dims() {
				t.Fatalf("Vector(%q) has %d dimensions, want %d", w, len(v), m.Dims())
			}
			m.Embed(w + " " + w)
		}
	})
}
