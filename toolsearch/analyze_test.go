package toolsearch

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"getFileContents", []string{"get", "file", "contents", "getfilecontents"}},
		{"get_file_contents", []string{"get", "file", "contents"}},
		{"get-file-contents", []string{"get", "file", "contents"}},
		{"get.file/contents", []string{"get", "file", "contents"}},
		{"HTTPServer", []string{"http", "server", "httpserver"}},
		{"XMLHttpRequest", []string{"xml", "http", "request", "xmlhttprequest"}},
		{"MySQL", []string{"my", "sql", "mysql"}},
		{"GitHub", []string{"git", "hub", "github"}},
		{"userID", []string{"user", "id", "userid"}},
		{"ID", []string{"id"}},
		{"s3", []string{"s3"}},
		{"ec2", []string{"ec2"}},
		{"list_s3_buckets", []string{"list", "s3", "buckets"}},
		{"K8sCluster", []string{"k8s", "cluster", "k8scluster"}},
		{"3D", []string{"3d"}},
		{"ÉCOLE Über", []string{"école", "über"}},
		{"", nil},
		{"__--..", nil},
	} {
		if got := words(tc.in, nil); !slices.Equal(got, tc.want) {
			t.Errorf("words(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// wordsReference is words as it was first written, a rune at a time into
// a new string a word: wordsASCII and wordsUnicode must split as it does.
func wordsReference(s string) []string {
	var out []string
	var b, run strings.Builder
	parts := 0
	flush := func() {
		if b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
			parts++
		}
	}
	endRun := func() {
		flush()
		if parts > 1 {
			out = append(out, run.String())
		}
		run.Reset()
		parts = 0
	}
	var prev rune
	for i, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && b.Len() > 0 {
				next, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(r):])
				if unicode.IsLower(prev) || (unicode.IsUpper(prev) || unicode.IsDigit(prev)) && unicode.IsLower(next) {
					flush()
				}
			}
			lr := unicode.ToLower(r)
			b.WriteRune(lr)
			run.WriteRune(lr)
		default:
			endRun()
		}
		prev = r
	}
	endRun()
	return out
}

func checkWords(t *testing.T, s string) {
	t.Helper()
	want := wordsReference(s)
	if got := wordsUnicode(s, nil); !slices.Equal(got, want) {
		t.Fatalf("wordsUnicode(%q) = %q, want %q", s, got, want)
	}
	if !isASCII(s) {
		return
	}
	if got := wordsASCII(s, nil); !slices.Equal(got, want) {
		t.Fatalf("wordsASCII(%q) = %q, want %q", s, got, want)
	}
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Every string of up to six of a lower-case letter, a capital, a digit
// and a separator, ASCII and not, splits as the reference splits it.
func TestWordsAsReference(t *testing.T) {
	for _, alphabet := range []string{"aB1_", "éÉ٣ aB"} {
		var each func(s string, n int)
		each = func(s string, n int) {
			checkWords(t, s)
			if n < 6 {
				for _, c := range alphabet {
					each(s+string(c), n+1)
				}
			}
		}
		each("", 0)
	}
}

func FuzzWords(f *testing.F) {
	for _, s := range []string{"getFileContents", "HTTPServer", "EC2Instance", "XMLHttpRequest", "K8sCluster", "a1B2c3D", "x_Y-z.W", "ÉCOLE Über", "ǅemal İstanbul \xff\xfeKelvin", "ϒA Ab"} {
		f.Add(s)
	}
	f.Fuzz(checkWords)
}

// A capital after a digit starts a word as a capital after a lower-case
// letter does: EC2Instance is ec2 and instance. words does not split
// there yet (see the report of the change that added these tests); the
// test skips while it gives the known output and holds words to the
// right one once it changes.
func TestWordsDigitThenCapital(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"EC2Instance", []string{"ec2", "instance", "ec2instance"}},
		{"list_S3Buckets", []string{"list", "s3", "buckets", "s3buckets"}},
		{"v2Api", []string{"v2", "api", "v2api"}},
	} {
		got := words(tc.in, nil)
		if !slices.Equal(got, tc.want) {
			t.Errorf("words(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTerms(t *testing.T) {
	a := newAnalyzer()
	for _, tc := range []struct {
		in   string
		want []string
	}{
		// Stop and filler words say nothing about the tool.
		{"Please can you list my files", []string{"list", "file"}},
		{"the registries of a listing", []string{"registri", "list"}},
		// MySQL's "my" is a stop word; sql and mysql stay.
		{"MySQL", []string{"sql", "mysql"}},
		// Short words and words with digits are kept as they are.
		{"aks ec2 s3 vm", []string{"aks", "ec2", "s3", "vm"}},
		{"getFileContents", []string{"get", "file", "content", "getfilecont"}},
		{"", nil},
	} {
		if got := a.terms(tc.in, nil, false); !slices.Equal(got, tc.want) {
			t.Errorf("terms(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// Inflections meet at one stem.
	for _, same := range [][2]string{
		{"registries", "registry"},
		{"listing", "list"},
		{"databases", "database"},
		{"searched", "searches"},
		{"running", "runs"},
	} {
		x, y := a.terms(same[0], nil, false), a.terms(same[1], nil, false)
		if len(x) != 1 || !slices.Equal(x, y) {
			t.Errorf("terms(%q) = %q, terms(%q) = %q: want one and the same stem", same[0], x, same[1], y)
		}
	}
}

func TestAnalyzerLearn(t *testing.T) {
	a := newAnalyzer()
	a.terms("registries listing", nil, false)
	if len(a.words) != 0 {
		t.Errorf("a query (learn false) cached words: %v", a.words)
	}
	a.terms("registries listing", nil, true)
	if a.words["registries"].stem != "registri" || a.words["listing"].stem != "list" {
		t.Errorf("words after indexing = %v", a.words)
	}
}

func TestPairs(t *testing.T) {
	a := newAnalyzer()
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"Event Grid topics", []string{"eventgrid", "gridtop"}},
		{"key vault", []string{"keyvault"}},
		// Pairs skip stop words and words with digits.
		{"list the buckets", nil},
		{"s3 buckets", nil},
		{"one", nil},
	} {
		if got := a.pairs(tc.in, nil, false); !slices.Equal(got, tc.want) {
			t.Errorf("pairs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// The whole of a name split at case changes is not a word beside its
// parts: "getFileContents" pairs get+file and file+contents, not
// contents+getfilecontents. pairs does make that last pair yet (see the
// report); the test skips while it does.
func TestPairsNotAcrossWholeName(t *testing.T) {
	a := newAnalyzer()
	got := a.pairs("getFileContents", nil, false)
	want := []string{"getfil", "filecont"}
	if !slices.Equal(got, want) {
		t.Errorf("pairs(getFileContents) = %q, want %q", got, want)
	}
}

func TestSpellOut(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		// Initials of consecutive words.
		{"aks_cluster_list", "List Azure Kubernetes Service clusters", []string{"azure", "kubernetes", "service", "clusters"}},
		// Stop words are allowed inside, not first.
		{"stt", "Convert speech to text", []string{"speech", "to", "text"}},
		// The start of a word.
		{"get_config", "Get the configuration of a store", []string{"configuration"}},
		// Two starts run together.
		{"appconfig_list", "List App Configuration stores", []string{"app", "configuration"}},
		// Words the text uses as they are need no spelling out.
		{"list_files", "List the files", nil},
		// Nothing is guessed from outside the tool's text.
		{"aks_list", "List clusters", nil},
	} {
		if got := spellOut(tc.name, tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("spellOut(%q, %q) = %q, want %q", tc.name, tc.text, got, tc.want)
		}
	}
}
