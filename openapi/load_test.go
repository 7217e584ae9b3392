package openapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const waitFor = 10 * time.Second // a bound on a hang

// within runs f, failing the test if it has not returned by waitFor.
func within(t testing.TB, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(waitFor):
		t.Fatalf("still running after %v", waitFor)
	}
}

func serve(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func mustLoad(t testing.TB, source string, opts LoadOptions) *Document {
	t.Helper()
	doc, err := Load(context.Background(), source, opts)
	if err != nil {
		t.Fatalf("Load(%s): %v", source, err)
	}
	return doc
}

func countOperations(doc *Document) int {
	n := 0
	for _, item := range doc.t.Paths.Map() {
		n += len(item.Operations())
	}
	return n
}

func TestLoadReadsEachVersionAndFormat(t *testing.T) {
	tests := []struct {
		file, spec, title string
		servers           []string
		operations        int
	}{
		{"testdata/api-3.0.yaml", "3.0.3", "Mapping table", []string{"https://api.example.invalid/v1"}, 18},
		{"testdata/api-3.1.json", "3.1.0", "Nullable the 3.1 way", []string{"/api"}, 2},
		{"testdata/swagger-2.0.yaml", "2.0", "Swagger converted", []string{"https://api.example.invalid/v2"}, 3},
		{"testdata/multi/api.yaml", "3.0.3", "Split across files", nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			doc := mustLoad(t, tt.file, LoadOptions{})
			if doc.SpecVersion() != tt.spec || doc.Title() != tt.title || doc.Version() != "1.0" {
				t.Errorf("spec %q, title %q, version %q; want %q, %q, 1.0", doc.SpecVersion(), doc.Title(), doc.Version(), tt.spec, tt.title)
			}
			if got := doc.Servers(); strings.Join(got, " ") != strings.Join(tt.servers, " ") {
				t.Errorf("servers %q, want %q", got, tt.servers)
			}
			if n := countOperations(doc); n != tt.operations {
				t.Errorf("%d operations, want %d", n, tt.operations)
			}
		})
	}
}

func TestLoadFromBytesNamesTheSourceOnly(t *testing.T) {
	data, err := os.ReadFile("testdata/api-3.1.json")
	if err != nil {
		t.Fatal(err)
	}
	doc := mustLoad(t, "", LoadOptions{Data: data})
	if doc.Title() != "Nullable the 3.1 way" {
		t.Errorf("title %q", doc.Title())
	}
	if _, err := Load(context.Background(), "does-not-exist.json", LoadOptions{Data: data}); err != nil {
		t.Errorf("a source that only names the data must not be read: %v", err)
	}
}

func TestLoadResolvesFileRefsBesideTheDescription(t *testing.T) {
	doc := mustLoad(t, "testdata/multi/api.yaml", LoadOptions{})
	op := doc.t.Paths.Find("/pets/{id}").Get
	pet := op.Responses.Status(200).Value.Content["application/json"].Schema.Value
	if pet == nil || pet.Properties["friends"].Value.Items.Value != pet {
		t.Errorf("the recursive schema from the other file is not resolved: %+v", pet)
	}
	if p := op.Parameters[0].Value; p == nil || p.Name != "id" {
		t.Errorf("the parameter from the other file is not resolved: %+v", op.Parameters[0])
	}
}

func TestLoadRefusesFileRefsOutsideItsDirectory(t *testing.T) {
	dir := t.TempDir()
	inner := filepath.Join(dir, "api")
	if err := os.Mkdir(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(dir, "secret.yaml")
	if err := os.WriteFile(outside, []byte("Secret: {type: string}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(inner, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	doc := func(ref string) string {
		return fmt.Sprintf(`openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /x:
    get:
      responses:
        "200":
          description: ok
          content: {application/json: {schema: {$ref: %q}}}
`, ref)
	}
	tests := []struct{ name, ref string }{
		{"a relative path up", "../secret.yaml#/Secret"},
		{"an absolute path", outside + "#/Secret"},
		{"a symbolic link", "link.yaml#/Secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			source := filepath.Join(inner, "api.yaml")
			if err := os.WriteFile(source, []byte(doc(tt.ref)), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load(context.Background(), source, LoadOptions{})
			if err == nil {
				t.Fatal("loaded a description whose $ref reads a file outside its directory")
			}
			t.Log(err)
		})
	}
	t.Run("from bytes", func(t *testing.T) {
		_, err := Load(context.Background(), "", LoadOptions{Data: []byte(doc(outside + "#/Secret"))})
		if err == nil || !strings.Contains(err.Error(), "only a description loaded from a file") {
			t.Fatalf("got %v, want a refusal to read files", err)
		}
	})
}

// remoteAPI serves a description whose schema is in another document.
func remoteAPI(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/api.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"openapi":"3.0.3","info":{"title":"remote","version":"1"},"servers":[{"url":"/v1"}],
			"paths":{"/pets":{"get":{"operationId":"listPets","responses":{"200":{"description":"ok",
			"content":{"application/json":{"schema":{"$ref":"schemas.json#/Pet"}}}}}}}}}`)
	})
	mux.HandleFunc("/schemas.json", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"Pet":{"type":"object","properties":{"name":{"type":"string"}}}}`)
	})
	mux.HandleFunc("/old.json", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/api.json", http.StatusFound)
	})
	return serve(t, mux)
}

func TestLoadRemoteRefsOnlyWhenAllowed(t *testing.T) {
	srv := remoteAPI(t)
	_, err := Load(context.Background(), srv.URL+"/api.json", LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "AllowRemoteRefs") {
		t.Fatalf("got %v, want a refusal naming AllowRemoteRefs", err)
	}
	doc := mustLoad(t, srv.URL+"/api.json", LoadOptions{AllowRemoteRefs: true})
	if got := doc.Servers(); len(got) != 1 || got[0] != srv.URL+"/v1" {
		t.Errorf("servers %q, want the relative one resolved against the description's URL", got)
	}
	if op := doc.t.Paths.Find("/pets").Get; op.Responses.Status(200).Value.Content["application/json"].Schema.Value.Properties["name"] == nil {
		t.Error("the remote schema is not resolved")
	}

	// A description from a URL must not make Load read local files.
	mux := http.NewServeMux()
	mux.HandleFunc("/api.json", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/x":{"get":{"responses":{"200":{"description":"ok",
			"content":{"application/json":{"schema":{"$ref":"/etc/hostname#/x"}}}}}}}}}`)
	})
	hostile := serve(t, mux)
	if _, err := Load(context.Background(), hostile.URL+"/api.json", LoadOptions{AllowRemoteRefs: true}); err == nil {
		t.Error("a description from a URL read a local file")
	}
}

func TestLoadFollowsRedirectsOnlyWithinTheOrigin(t *testing.T) {
	srv := remoteAPI(t)
	mustLoad(t, srv.URL+"/old.json", LoadOptions{AllowRemoteRefs: true})

	away := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, srv.URL+"/api.json", http.StatusFound)
	}))
	_, err := Load(context.Background(), away.URL+"/api.json", LoadOptions{AllowRemoteRefs: true})
	if err == nil || !strings.Contains(err.Error(), "another origin") {
		t.Fatalf("got %v, want a refused cross-origin redirect", err)
	}
}

func TestLoadBoundsWhatItReads(t *testing.T) {
	srv := remoteAPI(t)
	hang := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	tests := []struct {
		name   string
		source string
		opts   LoadOptions
		want   string
	}{
		{"a file past MaxBytes", "testdata/api-3.0.yaml", LoadOptions{MaxBytes: 100}, "larger than the limit of 100 bytes"},
		{"a URL past MaxBytes", srv.URL + "/api.json", LoadOptions{MaxBytes: 100}, "larger than the limit of 100 bytes"},
		{"a server that never answers", hang.URL + "/api.json", LoadOptions{FetchTimeout: 50 * time.Millisecond}, "Timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			within(t, func() { _, err = Load(context.Background(), tt.source, tt.opts) })
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error with %q", err, tt.want)
			}
		})
	}
	t.Run("the size limit wraps ErrTooLarge", func(t *testing.T) {
		_, err := Load(context.Background(), "testdata/api-3.0.yaml", LoadOptions{MaxBytes: 100})
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("got %v, want ErrTooLarge", err)
		}
	})
	t.Run("documents past MaxDocuments", func(t *testing.T) {
		dir := t.TempDir()
		for i := range 3 {
			next := fmt.Sprintf("Next: {$ref: 'doc%d.yaml#/Next'}\n", i+1)
			if i == 2 {
				next = "Next: {type: string}\n"
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("doc%d.yaml", i)), []byte(next), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		api := `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /x:
    get:
      responses:
        "200": {description: ok, content: {application/json: {schema: {$ref: 'doc0.yaml#/Next'}}}}
`
		if err := os.WriteFile(filepath.Join(dir, "api.yaml"), []byte(api), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(context.Background(), filepath.Join(dir, "api.yaml"), LoadOptions{MaxDocuments: 3}); err != nil {
			t.Fatalf("three documents within a limit of three: %v", err)
		}
		_, err := Load(context.Background(), filepath.Join(dir, "api.yaml"), LoadOptions{MaxDocuments: 2})
		if err == nil || !strings.Contains(err.Error(), "more than 2 documents") {
			t.Fatalf("got %v, want the document limit", err)
		}
	})
}

func TestLoadAnswersHostileDocumentsClearly(t *testing.T) {
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	laughs := "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {}\nx-a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
	prev := "a"
	for _, name := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		laughs += fmt.Sprintf("x-%s: &%s [*%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s]\n", name, name, prev, prev, prev, prev, prev, prev, prev, prev, prev)
		prev = name
	}
	schemaDoc := func(schemas string) string {
		return `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/x":{"get":{"responses":{"200":{"description":"ok",
			"content":{"application/json":{"schema":{"$ref":"#/components/schemas/A"}}}}}}}},"components":{"schemas":` + schemas + `}}`
	}
	tests := []struct {
		name, data string
		want       string // a part of the error; empty when it must load
	}{
		{"empty", "", "not an OpenAPI description"},
		{"garbage", "\x00\x01\x02 not yaml: [", "openapi"},
		{"an empty object", "{}", "not an OpenAPI description"},
		{"Swagger 1.2", `{"swaggerVersion":"1.2","swagger":"1.2"}`, `swagger "1.2" is not supported`},
		{"OpenAPI 4", `{"openapi":"4.0.0"}`, `openapi "4.0.0" is not supported`},
		{"deep nesting", deep, "openapi"},
		{"an alias bomb", laughs, "excessive aliasing"},
		{"a schema that refers to itself", schemaDoc(`{"A":{"type":"object","properties":{"a":{"$ref":"#/components/schemas/A"}}}}`), ""},
		{"a cycle of schemas", schemaDoc(`{"A":{"allOf":[{"$ref":"#/components/schemas/B"}]},"B":{"allOf":[{"$ref":"#/components/schemas/A"}]}}`), ""},
		{"a $ref to nothing", schemaDoc(`{"A":{"$ref":"#/components/schemas/Missing"}}`), "Missing"},
		{"a truncated description", schemaDoc(`{"A":{"type":"obj`), "openapi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			within(t, func() { _, err = Load(context.Background(), "", LoadOptions{Data: []byte(tt.data)}) })
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("failed to load: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("got %v, want an error with %q", err, tt.want)
			}
		})
	}
}
