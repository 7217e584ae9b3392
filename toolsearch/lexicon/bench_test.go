package lexicon

import "testing"

// benchWords are words of tool queries: lemmas, inflected forms and words
// WordNet does not know.
var benchWords = []string{"delete", "files", "running", "picture", "kubernetes", "queries", "folder", "ran", "github", "update"}

// BenchmarkLoad is the first call's cost: decompressing and indexing the
// table. kept-bytes is what stays in memory.
func BenchmarkLoad(b *testing.B) {
	b.ReportAllocs()
	var t *table
	for b.Loop() {
		var err error
		if t, err = parse(compressed); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(t.text)+4*cap(t.lines)), "kept-bytes")
}

func BenchmarkBase(b *testing.B) {
	data()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		Base(benchWords[i%len(benchWords)])
	}
}

func BenchmarkRelated(b *testing.B) {
	data()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		Related(benchWords[i%len(benchWords)])
	}
}
