package wordvec

import (
	"context"
	"math"

	"github.com/kljensen/snowball/english"
)

// Embedder embeds texts as the weighted mean of their words' vectors,
// unit length, with no network: a toolsearch.Embedder that is always up.
// The zero value uses the embedded model.
type Embedder struct {
	// Model is the table of word vectors; nil means [Default].
	Model *Model
}

// Embed returns a vector per text, each of the model's [Model.Dims]. A
// text none of whose words the model knows gets a zero vector (a search
// index leaves such a text to its lexical ranking). It fails only when
// ctx ends or the model cannot be read.
func (e Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	m := e.Model
	if m == nil {
		var err error
		if m, err = Default(); err != nil {
			return nil, err
		}
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		// A text takes microseconds: checking ctx now and then is enough.
		if i%256 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		out[i] = m.Embed(t)
	}
	return out, nil
}

// Embed returns text's vector: the mean of its words' vectors, each
// weighted by how rare the word is, less the direction all texts share,
// unit length; a zero vector when the model knows none of its words.
// Text is split into words as tool search splits it: at case changes and
// at anything that is not a letter or a digit (get_fileContents is get,
// file, contents, unless the model knows the whole run, as it knows
// "youtube"), lower-cased, stop words dropped.
func (m *Model) Embed(text string) []float32 {
	v := make([]float32, m.dims)
	n := 0
	m.forEachWord(text, func(w []byte) {
		// The conversion in a map index does not allocate.
		row, ok := m.index[string(w)]
		if !ok || stopWord(string(w)) {
			return
		}
		m.addRow(v, row, m.weights[row])
		n++
	})
	if n == 0 {
		return v
	}
	normalize(v)
	var d float32
	for i, x := range v {
		d += x * m.common[i]
	}
	for i := range v {
		v[i] -= d * m.common[i]
	}
	normalize(v)
	return v
}

// sifA is the smoothing of the words' weights, a/(a+p(w)) for a word of
// probability p(w) ("smooth inverse frequency", Arora, Liang and Ma
// 2017): the commonest words count least, and past a few thousand words
// in rank all count about the same. Of 1e-2, 1e-3, 1e-4 and 1e-5, 1e-3
// ranked best on the development half of internal/evalsearch's set and
// on the Azure set together.
const sifA = 1e-3

// probability is the probability of row's word in running text, as
// Zipf's law estimates it from the word's frequency rank (the source has
// ranks, not counts).
func (m *Model) probability(row int32) float64 {
	harmonic := math.Log(float64(m.vocab)) + 0.5772
	return 1 / (float64(m.ranks[row]+1) * harmonic)
}

// commonDirection is the direction that every text's mean shares, which
// SIF removes from each so that what sets texts apart is what they are
// compared by: without it, any two tools' texts have a cosine of about
// 0.8. SIF takes the first principal component of a corpus's sentence
// vectors; lacking a corpus, this is the mean that texts would have,
// each word weighted by its probability and its weight in a text (the
// power method's first principal component of the same words ranked no
// better).
func (m *Model) commonDirection() []float32 {
	u := make([]float32, m.dims)
	for row, w := range m.words {
		if !stopWord(w) {
			m.addRow(u, int32(row), float32(m.probability(int32(row)))*m.weights[row])
		}
	}
	normalize(u)
	return u
}

func normalize(v []float32) {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(ss))
	for i := range v {
		v[i] *= inv
	}
}

// stopWord says whether a lower-case word says nothing of which tool is
// meant: an English function word, or the filler of a request to an
// assistant ("please", "can you", "I want to"), as tool search has them.
func stopWord(w string) bool {
	return fillerWords[w] || english.IsStopWord(w)
}

var fillerWords = map[string]bool{
	"please": true, "can": true, "could": true, "would": true, "want": true,
	"need": true, "like": true, "let": true, "help": true, "using": true,
	"via": true, "also": true, "etc": true, "eg": true, "ie": true,
	"will": true, "may": true, "might": true, "must": true, "shall": true,
	"us": true, "im": true,
}
