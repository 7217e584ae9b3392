// Command lexicongen writes the English lexicon that package
// toolsearch/lexicon embeds, from the WordNet 3.0 database as Debian
// packages it (wordnet-base 1:3.0-37). The database is not kept in the
// repository; to regenerate the data, from the repository root:
//
//	WN=$(mktemp -d) && (cd "$WN" && apt-get download wordnet-base=1:3.0-37 &&
//	  dpkg-deb -x wordnet-base_*.deb .) &&
//	  go run ./internal/lexicongen -dict "$WN/usr/share/wordnet" -out toolsearch/lexicon/wordnet.gz
//
// (or -dict /usr/share/wordnet after apt-get install wordnet-base). The
// same input gives byte-identical output with the same Go release (its
// compress/flate makes the bytes): every list is sorted or kept in
// WordNet's own order, and the gzip header carries no name or time. The
// output's first lines are WordNet's licence, as data.noun's header has
// it (so that the notice travels with every copy, in every binary), and
// the input files' SHA-256.
//
// What it keeps, for each lemma that is one word of lower-case letters
// and digits (a multi-word lemma such as "jot_down" is dropped: a ranker
// that splits text into words would turn it into "jot" and "down", and
// the particle matches everything):
//
//   - the parts of speech it is a lemma of, and whether it is a frequent
//     noun or verb (a sense of it is tagged in WordNet's concordance,
//     which morphology needs to keep "data" from becoming "datum");
//   - its irregular forms' bases from the exception lists (*.exc);
//   - synonyms: the other lemmas of its commonest senses (see
//     [maxSenses]);
//   - derivationally related forms ("+" pointers: delete, deletion), from
//     every sense, in sense order: they share the word's stem, so they
//     drift from its meaning far less than synonyms of rare senses do;
//   - for a verb, the lemmas one level above its first sense ("@"
//     hypernyms: delete is a kind of remove).
//
// Proper-noun uses are skipped: a sense counts only where WordNet writes
// the word in lower case ("java" the coffee, not "Java" the island), and
// so does a related word.
package main

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

func main() {
	dict := flag.String("dict", "/usr/share/wordnet", "directory of the WordNet 3.0 database (data.*, index.*, *.exc)")
	out := flag.String("out", "toolsearch/lexicon/wordnet.gz", "file to write")
	flag.Parse()
	if err := run(*dict, *out); err != nil {
		slog.Error("lexicongen", "err", err)
		os.Exit(1)
	}
}

func run(dict, out string) error {
	var buf strings.Builder
	if err := generate(dict, &buf); err != nil {
		return err
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

// posFiles are WordNet's parts of speech: the letter its files use and
// the name of its files.
var posFiles = []struct{ letter, name string }{
	{"n", "noun"}, {"v", "verb"}, {"a", "adj"}, {"r", "adv"},
}

// generate reads the database in dict and writes the lexicon's text (see
// package toolsearch/lexicon for its format).
func generate(dict string, w io.Writer) error {
	db := &database{synsets: map[string]*synset{}, lemmas: map[string]*lemma{}}
	sums := &strings.Builder{}
	for _, p := range posFiles {
		for _, kind := range []string{"data", "index"} {
			if err := db.read(dict, kind+"."+p.name, p.letter, sums, db.parseLine(kind)); err != nil {
				return err
			}
		}
	}
	for _, p := range posFiles {
		if err := db.read(dict, p.name+".exc", p.letter, sums, db.exception); err != nil {
			return err
		}
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# toolsearch/lexicon data, written by internal/lexicongen from WordNet 3.0.\n%s", db.licence)
	fmt.Fprintf(bw, "%s", sums)
	fmt.Fprintf(bw, "# word\tparts of speech\texceptions\tsynonyms\tderivations\thypernyms\n")
	words := make([]string, 0, len(db.lemmas))
	for word := range db.lemmas {
		words = append(words, word)
	}
	slices.Sort(words)
	for _, word := range words {
		if line := db.line(word); line != "" {
			bw.WriteString(line)
			bw.WriteByte('\n')
		}
	}
	return bw.Flush()
}

type database struct {
	synsets map[string]*synset // by part of speech and offset, "n00001740"
	lemmas  map[string]*lemma
	licence string // the header of the first file read, as # lines
}

type synset struct {
	words []string // as WordNet writes them: "Java", "jot_down"
	ptrs  []pointer
}

type pointer struct {
	symbol string
	target string // a synsets key
	src    int    // 1-based word in this synset, 0 for the whole synset
	dst    int    // 1-based word in the target
}

// lemma is what the index and the exception lists say of one word.
type lemma struct {
	pos        string              // letters of the parts of speech it is a lemma of, in posFiles order
	frequent   string              // of those, "n" and "v" where a sense is tagged
	senses     map[string][]string // synset keys by part of speech, most frequent first
	tagged     map[string]int      // tagged senses by part of speech
	exceptions []string            // "v:run", in posFiles order, then file order
}

func (db *database) lemma(word string) *lemma {
	l := db.lemmas[word]
	if l == nil {
		l = &lemma{senses: map[string][]string{}, tagged: map[string]int{}}
		db.lemmas[word] = l
	}
	return l
}

// read hashes the file into sums and calls parse for each line outside
// the licence header (lines that start with a space).
func (db *database) read(dict, name, pos string, sums io.Writer, parse func(pos string, f []string) error) error {
	data, err := os.ReadFile(filepath.Join(dict, name))
	if err != nil {
		return err
	}
	fmt.Fprintf(sums, "# %s sha256 %x\n", name, sha256.Sum256(data))
	header := db.licence == ""
	for i, line := range strings.Split(string(data), "\n") {
		if line == "" {
			continue
		}
		if line[0] == ' ' {
			if header { // "  1 This software and database is ...  "
				_, text, _ := strings.Cut(strings.TrimSpace(line), " ")
				db.licence += strings.TrimRight("# "+strings.TrimSpace(text), " ") + "\n"
			}
			continue
		}
		header = false
		if err := parse(pos, strings.Fields(line)); err != nil {
			return fmt.Errorf("%s:%d: %w", name, i+1, err)
		}
	}
	return nil
}

func (db *database) parseLine(kind string) func(string, []string) error {
	if kind == "data" {
		return db.data
	}
	return db.index
}

// data parses a synset: offset lex_filenum ss_type w_cnt (word lex_id)...
// p_cnt (symbol offset pos source/target)... [frames] | gloss.
func (db *database) data(pos string, f []string) error {
	if len(f) < 4 {
		return errors.New("short synset line")
	}
	n, err := strconv.ParseUint(f[3], 16, 8)
	if err != nil || len(f) < 5+2*int(n) {
		return fmt.Errorf("bad word count %q", f[3])
	}
	s := &synset{}
	for i := range int(n) {
		w := f[4+2*i]
		if j := strings.IndexByte(w, '('); j > 0 { // adjective markers: "galore(ip)"
			w = w[:j]
		}
		s.words = append(s.words, w)
	}
	rest := f[4+2*n:]
	np, err := strconv.Atoi(rest[0])
	if err != nil || len(rest) < 1+4*np {
		return fmt.Errorf("bad pointer count %q", rest[0])
	}
	for i := range np {
		p := rest[1+4*i : 5+4*i]
		st, err := strconv.ParseUint(p[3], 16, 16)
		if err != nil {
			return fmt.Errorf("bad source/target %q", p[3])
		}
		s.ptrs = append(s.ptrs, pointer{symbol: p[0], target: key(p[2], p[1]), src: int(st >> 8), dst: int(st & 0xff)})
	}
	db.synsets[key(pos, f[0])] = s
	return nil
}

// key names a synset; satellite adjectives ("s") live in data.adj.
func key(pos, offset string) string {
	if pos == "s" {
		pos = "a"
	}
	return pos + offset
}

// index parses a lemma: lemma pos synset_cnt p_cnt symbol... sense_cnt
// tagsense_cnt offset...
func (db *database) index(pos string, f []string) error {
	if len(f) < 4 {
		return errors.New("short index line")
	}
	if !oneWord(f[0]) {
		return nil
	}
	nsyn, err1 := strconv.Atoi(f[2])
	np, err2 := strconv.Atoi(f[3])
	if err := errors.Join(err1, err2); err != nil || len(f) != 6+np+nsyn {
		return fmt.Errorf("bad counts in index line %q", strings.Join(f, " "))
	}
	tagged, err := strconv.Atoi(f[5+np])
	if err != nil {
		return err
	}
	l := db.lemma(f[0])
	l.pos += pos
	if tagged > 0 && (pos == "n" || pos == "v") {
		l.frequent += pos
	}
	l.tagged[pos] = tagged
	for _, off := range f[6+np:] {
		l.senses[pos] = append(l.senses[pos], key(pos, off))
	}
	return nil
}

// exception parses an exception: inflected base...
func (db *database) exception(pos string, f []string) error {
	if len(f) < 2 {
		return errors.New("short exception line")
	}
	if !oneWord(f[0]) {
		return nil
	}
	var bases []string
	for _, b := range f[1:] {
		if l := db.lemmas[b]; l != nil && strings.Contains(l.pos, pos) {
			bases = append(bases, pos+":"+b)
		}
	}
	if len(bases) > 0 {
		l := db.lemma(f[0])
		l.exceptions = append(l.exceptions, bases...)
	}
	return nil
}

// oneWord reports whether w is one word as a ranker's tokens are: ASCII
// lower-case letters and digits.
func oneWord(w string) bool {
	for i := range len(w) {
		if c := w[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return w != ""
}

// maxSenses is how many of a word's senses per part of speech give
// synonyms. WordNet orders senses by how often they were tagged in its
// concordance; beyond the tagged ones the order means nothing. The first
// sense always counts; the second and third only where tagged, since an
// untagged second sense is as likely the rarest as the next most common.
const maxSenses = 3

// sense is one of a lemma's synsets.
type sense struct {
	key  string
	kept bool // gives synonyms
}

// sensesInOrder returns l's senses by rank, interleaving the parts of speech
// (the first noun sense, the first verb sense, ..., then the second of
// each): WordNet ranks senses within a part of speech only, and its
// counts that could rank them across (cntlist.rev) disagree with the
// index on a thousand senses. Kept senses give synonyms; all give
// derivations.
func (l *lemma) sensesInOrder() []sense {
	var out []sense
	for rank := 0; ; rank++ {
		more := false
		for _, p := range posFiles {
			s := l.senses[p.letter]
			if rank < len(s) {
				more = true
				out = append(out, sense{key: s[rank], kept: rank < max(1, min(maxSenses, l.tagged[p.letter]))})
			}
		}
		if !more {
			return out
		}
	}
}

// MaxRelated bounds the related words kept per word, as
// toolsearch/lexicon documents: beyond it, words come from ever rarer
// senses.
const MaxRelated = 24

// line writes a word's entry, or "" for a word with nothing to say.
func (db *database) line(word string) string {
	l := db.lemmas[word]
	rel := related{seen: map[string]bool{word: true}}
	senses := l.sensesInOrder()
	for _, sn := range senses {
		if s := db.synsets[sn.key]; sn.kept && s != nil && lowerIn(s.words, word) {
			for _, w := range s.words {
				rel.add(&rel.synonyms, w)
			}
		}
	}
	for _, sn := range senses {
		s := db.synsets[sn.key]
		if s == nil {
			continue
		}
		for _, ptr := range s.ptrs {
			if ptr.symbol != "+" || ptr.src == 0 || ptr.src > len(s.words) || s.words[ptr.src-1] != word {
				continue
			}
			if t := db.synsets[ptr.target]; t != nil && ptr.dst >= 1 && ptr.dst <= len(t.words) {
				rel.add(&rel.derivations, t.words[ptr.dst-1])
			}
		}
	}
	if v := l.senses["v"]; len(v) > 0 {
		if s := db.synsets[v[0]]; s != nil && lowerIn(s.words, word) {
			for _, ptr := range s.ptrs {
				if ptr.symbol == "@" && db.synsets[ptr.target] != nil {
					for _, w := range db.synsets[ptr.target].words {
						rel.add(&rel.hypernyms, w)
					}
				}
			}
		}
	}
	fields := []string{word, l.pos + strings.ToUpper(l.frequent), strings.Join(l.exceptions, ","),
		strings.Join(rel.synonyms, ","), strings.Join(rel.derivations, ","), strings.Join(rel.hypernyms, ",")}
	for len(fields) > 2 && fields[len(fields)-1] == "" {
		fields = fields[:len(fields)-1]
	}
	if l.pos == "" && len(fields) == 2 {
		return ""
	}
	return strings.Join(fields, "\t")
}

// lowerIn reports whether word is among words in lower case: a common
// noun's or a verb's sense, not a name's.
func lowerIn(words []string, word string) bool {
	return slices.Contains(words, word)
}

// related gathers a word's related words, each once, in order, up to
// MaxRelated.
type related struct {
	seen                             map[string]bool
	n                                int
	synonyms, derivations, hypernyms []string
}

func (r *related) add(list *[]string, w string) {
	if r.n >= MaxRelated || r.seen[w] || !oneWord(w) {
		return
	}
	r.seen[w] = true
	r.n++
	*list = append(*list, w)
}
