package wordvec

import (
	"bufio"
	"compress/gzip"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
)

//go:embed glove.gz
var embedded string

// Model is a table of word vectors, as [Read] reads them.
type Model struct {
	dims   int
	vocab  int              // words in the source, for the words' probabilities
	index  map[string]int32 // word → row
	words  []string         // by row, most frequent first
	ranks  []int32          // by row: 0-based frequency rank in the source
	scales []float32        // by row: the row's int8s times this are its vector
	vecs   []byte           // rows of dims int8s
	notice string
	// weights are the rows' weights in a text's mean (see weight).
	weights []float32
	// common is the direction all texts share (see commonDirection).
	common []float32
}

// Default returns the embedded model, reading it on first use (some tens
// of milliseconds). It fails only if the embedded data is broken, which
// the package's tests catch.
func Default() (*Model, error) { return defaultModel() }

var defaultModel = sync.OnceValues(func() (*Model, error) {
	m, err := Read(strings.NewReader(embedded))
	if err != nil {
		return nil, fmt.Errorf("toolsearch/wordvec: embedded glove.gz: %w", err)
	}
	return m, nil
})

// Limits on what [Read] accepts, far above the embedded model's.
const (
	maxWords = 1 << 20
	maxDims  = 1024
	maxWord  = 64
)

// Read reads a model in the format internal/wordvecgen writes: gzip'd,
// lines of # comments (the data's notice), a header line
// "wordvec 1 WORDS DIMS VOCABULARY", then the words, one per line, most
// frequent first; each word's 0-based frequency rank in the source as
// uvarint differences from the previous word's; each word's scale as a
// little-endian float32; and each word's DIMS int8s. Anything else, or
// anything more, is an error.
func Read(r io.Reader) (*Model, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("not gzip: %w", err)
	}
	br := bufio.NewReader(io.LimitReader(zr, 1<<30))
	m, err := readModel(br)
	if err != nil {
		return nil, err
	}
	if _, err := br.ReadByte(); err != io.EOF {
		if err != nil {
			return nil, fmt.Errorf("after the vectors: %w", err)
		}
		return nil, errors.New("trailing data after the vectors")
	}
	// Reaching EOF checked gzip's CRC and length.
	if err := zr.Close(); err != nil {
		return nil, err
	}
	return m, nil
}

func readModel(br *bufio.Reader) (*Model, error) {
	var notice strings.Builder
	var header string
	for header == "" {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("reading the header: %w", unexpected(err))
		}
		if strings.HasPrefix(line, "#") {
			notice.WriteString(line)
			continue
		}
		header = strings.TrimSuffix(line, "\n")
	}
	m := &Model{notice: notice.String()}
	var n int
	if _, err := fmt.Sscanf(header, "wordvec 1 %d %d %d", &n, &m.dims, &m.vocab); err != nil {
		return nil, fmt.Errorf("header %q: want \"wordvec 1 WORDS DIMS VOCABULARY\": %v", header, err)
	}
	if n < 1 || n > maxWords || m.dims < 1 || m.dims > maxDims || m.vocab < n {
		return nil, fmt.Errorf("header %q: sizes out of range", header)
	}
	// The words are read into one string, of which each is a slice: one
	// allocation rather than one a word.
	var block []byte
	ends := make([]int, n)
	for i := range n {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return nil, fmt.Errorf("word %d: %w", i+1, unexpected(err))
		}
		block = append(block, line[:len(line)-1]...)
		ends[i] = len(block)
	}
	all := string(block)
	m.index = make(map[string]int32, n)
	m.words = make([]string, n)
	start := 0
	for i, end := range ends {
		w := all[start:end]
		start = end
		if !validWord(w) {
			return nil, fmt.Errorf("word %d: %q is not a lower-case word of letters and digits", i+1, w)
		}
		if _, dup := m.index[w]; dup {
			return nil, fmt.Errorf("word %d: %q again", i+1, w)
		}
		m.index[w] = int32(i)
		m.words[i] = w
	}
	m.ranks = make([]int32, n)
	rank := int64(-1)
	for i := range n {
		d, err := binary.ReadUvarint(br)
		if err != nil {
			return nil, fmt.Errorf("rank of %q: %w", m.words[i], unexpected(err))
		}
		if i > 0 && d == 0 || d > uint64(m.vocab) {
			return nil, fmt.Errorf("rank of %q: not after the previous word's, within the vocabulary", m.words[i])
		}
		if i == 0 {
			rank = 0
		}
		rank += int64(d)
		if rank >= int64(m.vocab) {
			return nil, fmt.Errorf("rank of %q: %d is past the vocabulary of %d", m.words[i], rank, m.vocab)
		}
		m.ranks[i] = int32(rank)
	}
	raw := make([]byte, 4*n)
	if _, err := io.ReadFull(br, raw); err != nil {
		return nil, fmt.Errorf("scales: %w", unexpected(err))
	}
	m.scales = make([]float32, n)
	for i := range n {
		s := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		if !(s > 0) || math.IsInf(float64(s), 0) {
			return nil, fmt.Errorf("scale of %q: %v is not a positive number", m.words[i], s)
		}
		m.scales[i] = s
	}
	m.vecs = make([]byte, n*m.dims)
	if _, err := io.ReadFull(br, m.vecs); err != nil {
		return nil, fmt.Errorf("vectors: %w", unexpected(err))
	}
	m.weights = make([]float32, n)
	for row := range n {
		m.weights[row] = float32(sifA / (sifA + m.probability(int32(row))))
	}
	m.common = m.commonDirection()
	return m, nil
}

// unexpected turns the EOF of data that stops short into an error that
// says so.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func validWord(w string) bool {
	if w == "" || len(w) > maxWord {
		return false
	}
	for i := range len(w) {
		if c := w[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// Dims is the length of the model's vectors.
func (m *Model) Dims() int { return m.dims }

// Len is the number of words the model has.
func (m *Model) Len() int { return len(m.words) }

// Rank is word's 0-based frequency rank in the model's source (0 is the
// commonest word, "the"), and whether the model has the word.
func (m *Model) Rank(word string) (int, bool) {
	row, ok := m.index[word]
	if !ok {
		return 0, false
	}
	return int(m.ranks[row]), true
}

// Notice is the licence notice the data carries, as # lines.
func (m *Model) Notice() string { return m.notice }

// Vector returns the vector of a lower-case word, or nil when the model
// does not have it.
func (m *Model) Vector(word string) []float32 {
	row, ok := m.index[word]
	if !ok {
		return nil
	}
	v := make([]float32, m.dims)
	m.addRow(v, row, 1)
	return v
}

// addRow adds w times row's vector to v.
func (m *Model) addRow(v []float32, row int32, w float32) {
	w *= m.scales[row]
	q := m.vecs[int(row)*m.dims : int(row+1)*m.dims]
	for i, x := range q {
		v[i] += w * float32(int8(x))
	}
}

// Bytes is roughly the memory the model keeps: its vectors, scales,
// ranks, weights and words, and the index of words.
func (m *Model) Bytes() int {
	n := len(m.vecs) + 12*len(m.scales) + 4*len(m.common)
	for _, w := range m.words {
		// The word, its string header in words and in the index's key,
		// and the index's value and overhead.
		n += len(w) + 16 + 16 + 8
	}
	return n
}
