package toolsearch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/mcpgate/mcpgate/mcp"
)

// fakeDims is the fake model's width.
const fakeDims = 64

// fakeSynonyms put words of one meaning in one dimension, as a model puts
// them close together: that is what lets dense retrieval find a tool
// that shares no word with the query.
var fakeSynonyms = map[string]string{
	"automobile": "vehicle", "car": "vehicle", "auto": "vehicle",
	"hire": "rent", "lease": "rent",
	"forecast": "weather", "temperature": "weather",
}

// fakeLabels are the labels every tool text has; a model would not make
// much of them either.
var fakeLabels = map[string]bool{"tool": true, "server": true, "title": true, "description": true, "parameters": true, "query": true}

// fakeEmbedding stands in for an embedding model, which cannot run in
// these tests (no weights, no network): a bag of words hashed into
// fakeDims dimensions, with synonyms sharing a dimension.
func fakeEmbedding(text string) []float32 {
	v := make([]float32, fakeDims)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if fakeLabels[w] || isStop(w) {
			continue
		}
		if s, ok := fakeSynonyms[w]; ok {
			w = s
		}
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%fakeDims]++
	}
	return v
}

// fakeEndpoint serves POST /v1/embeddings on loopback with fakeEmbedding,
// as OpenAI, Ollama or vLLM would, and counts what it is asked.
type fakeEndpoint struct {
	srv *httptest.Server
	key string // the API key it accepts; empty accepts any

	mu       sync.Mutex
	requests int
	docs     []string // tool texts embedded
	queries  int
	last     map[string]any
	status   int    // when set, every request fails with it
	body     string // the body of those failures
	hang     chan struct{}
}

func newFakeEndpoint(t *testing.T) *fakeEndpoint {
	f := &fakeEndpoint{}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeEndpoint) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
		http.Error(w, `{"error": {"message": "no such route"}}`, http.StatusNotFound)
		return
	}
	f.mu.Lock()
	f.requests++
	status, body, hang, key := f.status, f.body, f.hang, f.key
	f.mu.Unlock()
	if hang != nil {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
		return
	}
	if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
		status, body = http.StatusUnauthorized, `{"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}`
	}
	if status != 0 {
		w.WriteHeader(status)
		io.WriteString(w, body)
		return
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	data, _ := io.ReadAll(r.Body)
	var last map[string]any
	if err := jsonv2.Unmarshal(data, &req, jsonv2.RejectUnknownMembers(false)); err != nil || jsonv2.Unmarshal(data, &last) != nil {
		http.Error(w, `{"error": {"message": "bad request"}}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.last = last
	for _, in := range req.Input {
		if strings.HasPrefix(in, "query: ") {
			f.queries++
		} else {
			f.docs = append(f.docs, in)
		}
	}
	f.mu.Unlock()
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	out := struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
	}{Object: "list", Model: req.Model}
	// Last first: the order of data is the indexes', not the array's.
	for i := len(req.Input) - 1; i >= 0; i-- {
		out.Data = append(out.Data, item{"embedding", i, fakeEmbedding(req.Input[i])})
	}
	w.Header().Set("Content-Type", "application/json")
	jsonv2.MarshalWrite(w, out)
}

// set changes the endpoint's behaviour under its lock: its handlers run
// on goroutines of their own.
func (f *fakeEndpoint) set(change func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change()
}

func (f *fakeEndpoint) fail(status int, body string) {
	f.set(func() { f.status, f.body = status, body })
}

func (f *fakeEndpoint) lastRequest() map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last
}

func (f *fakeEndpoint) counts() (requests, docs, queries int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests, len(f.docs), f.queries
}

func (f *fakeEndpoint) embedder() *OpenAIEmbedder {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &OpenAIEmbedder{Endpoint: f.srv.URL + "/v1", Model: "fake-embed", APIKey: f.key}
}

// syncBuffer is a log sink for the background worker and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fakeClock is the vector set's clock in tests of the pause after a
// failure, so that they wait for nothing.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// hybrid returns an index that embeds with f, logging to log.
func hybrid(f *fakeEndpoint, o EmbedOptions, log io.Writer) *Index {
	o.Embedder = f.embedder()
	o.QueryPrefix = "query: "
	if log == nil {
		log = io.Discard
	}
	o.Logger = slog.New(slog.NewTextHandler(log, nil))
	return New(&Options{Embedder: &o, NoBridges: wordsOnly})
}

// settle waits for the background embedding to finish.
func settle(t *testing.T, ix *Index) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := ix.vectors.wait(ctx); err != nil {
		t.Fatalf("embedding did not settle: %v", err)
	}
}

func travelTools() []Entry {
	return []Entry{
		{Server: "rentals", Tool: tool("rent_vehicle", "Book a vehicle for a trip.", "pickup_date", "dropoff_date")},
		{Server: "flights", Tool: tool("list_flights", "Find flights between two airports.", "from", "to")},
		{Server: "hotels", Tool: tool("book_hotel", "Reserve a hotel room.", "city", "nights")},
		{Server: "weather", Tool: tool("get_weather", "Get the weather of a city.", "city")},
	}
}

// addTravel sets each travel server in turn: rent_vehicle gets id 0.
func addTravel(ix *Index) {
	for _, e := range travelTools() {
		ix.SetServer(e.Server, []Entry{e})
	}
}

func TestEmbedText(t *testing.T) {
	ix := New(nil)
	long := strings.Repeat("Lists things. ", 300)
	def := tool("list_things", long, "b_param", "a_param")
	def.Annotations = &mcp.ToolAnnotations{Title: "List things"}
	ix.SetServer("store", []Entry{{Name: "store_list_things", Tool: def}})
	text := embedText(ix.docs[0])
	for _, want := range []string{"tool: list_things (list things)", "server: store", "title: List things", "description: Lists things.", "parameters: a_param, b_param"} {
		if !strings.Contains(text, want) {
			t.Errorf("embedText lacks %q:\n%s", want, text)
		}
	}
	if len(text) > maxEmbedDescription+200 {
		t.Errorf("embedText is %d bytes: a long description is not cut", len(text))
	}
	if got := truncateText("ab cd éé", 7); got != "ab cd" {
		t.Errorf("truncateText = %q", got)
	}
	if got := truncateText("abcdéé", 5); got != "abcd" {
		t.Errorf("truncateText cut a rune: %q", got)
	}
}

func TestOpenAIEmbedder(t *testing.T) {
	f := newFakeEndpoint(t)
	const key = "sk-test-0123456789"
	f.set(func() { f.key = key })
	ctx := context.Background()
	for _, endpoint := range []string{f.srv.URL + "/v1", f.srv.URL + "/v1/", f.srv.URL + "/v1/embeddings", f.srv.URL} {
		e := &OpenAIEmbedder{Endpoint: endpoint, Model: "fake-embed", APIKey: key}
		vecs, err := e.Embed(ctx, []string{"rent a car", "weather"})
		if err != nil {
			t.Fatalf("%s: %v", endpoint, err)
		}
		if len(vecs) != 2 || !slices.Equal(vecs[0], fakeEmbedding("rent a car")) || !slices.Equal(vecs[1], fakeEmbedding("weather")) {
			t.Errorf("%s: vectors out of order or wrong", endpoint)
		}
	}
	if last := f.lastRequest(); last["model"] != "fake-embed" {
		t.Errorf("request %v", last)
	}
	if last := f.lastRequest(); last["dimensions"] != nil {
		t.Errorf("dimensions sent unasked: %v", last)
	}
	e := &OpenAIEmbedder{Endpoint: f.srv.URL + "/v1", Model: "fake-embed", APIKey: key, Dimensions: 32}
	if _, err := e.Embed(ctx, []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if last := f.lastRequest(); last["dimensions"] != float64(32) {
		t.Errorf("dimensions not sent: %v", last)
	}
	if vecs, err := e.Embed(ctx, nil); vecs != nil || err != nil {
		t.Errorf("Embed(nil) = %v, %v", vecs, err)
	}
}

func TestOpenAIEmbedderErrors(t *testing.T) {
	const key = "sk-test-0123456789"
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   []string
	}{
		{"openai", 401, `{"error": {"message": "Incorrect API key provided: ` + key + `", "type": "invalid_request_error"}}`, []string{"401 Unauthorized", "Incorrect API key provided: [redacted]"}},
		{"plain", 500, "CUDA out of memory\n", []string{"500 Internal Server Error", "CUDA out of memory"}},
		{"ollama", 404, `{"error": "model \"nomic-embed-text\" not found, try pulling it first"}`, []string{"404 Not Found", `model "nomic-embed-text" not found`}},
		{"tei", 413, `{"error": "Input validation error: inputs must have less than 512 tokens", "error_type": "Validation"}`, []string{"413", "less than 512 tokens"}},
		{"detail", 422, `{"detail": [{"msg": "field required"}]}`, []string{"422", "field required"}},
		{"count", 200, `{"data": [{"index": 0, "embedding": [1, 2]}]}`, []string{"1 vectors for 2 texts"}},
		{"index", 200, `{"data": [{"index": 0, "embedding": [1, 2]}, {"index": 0, "embedding": [1, 2]}]}`, []string{"repeated index 0"}},
		{"dims", 200, `{"data": [{"index": 0, "embedding": [1, 2]}, {"index": 1, "embedding": [1]}]}`, []string{"2 and 1 dimensions"}},
		{"empty", 200, `{"data": [{"index": 0, "embedding": []}, {"index": 1, "embedding": [1]}]}`, []string{"empty vector"}},
		{"html", 200, `<html>proxy login</html>`, []string{"not an embeddings response"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeEndpoint(t)
			f.fail(tc.status, tc.body)
			e := f.embedder()
			e.APIKey = key
			_, err := e.Embed(context.Background(), []string{"a", "b"})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range append(tc.want, f.srv.URL+"/v1/embeddings") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), key) {
				t.Errorf("error %q shows the API key", err)
			}
			var ee *EmbedError
			if errors.As(err, &ee) != (tc.status != 200) || ee != nil && ee.StatusCode != tc.status {
				t.Errorf("error %#v: want an *EmbedError of status %d for a failure status", err, tc.status)
			}
		})
	}

	// No server; credentials in the URL are not shown.
	f := newFakeEndpoint(t)
	f.srv.Close()
	e := &OpenAIEmbedder{Endpoint: strings.Replace(f.srv.URL, "http://", "http://user:hunter2@", 1) + "/v1", Model: "m"}
	_, err := e.Embed(context.Background(), []string{"a"})
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "/v1/embeddings") {
		t.Errorf("closed server: %v", err)
	}
	for _, bad := range []string{"", "127.0.0.1:11434", "ftp://host/v1", "http://"} {
		if _, err := (&OpenAIEmbedder{Endpoint: bad}).Embed(context.Background(), []string{"a"}); err == nil {
			t.Errorf("endpoint %q: no error", bad)
		}
	}
}

// A query that shares no word with a tool finds it by meaning, and words
// still count where they match.
func TestHybridFindsWhatWordsMiss(t *testing.T) {
	f := newFakeEndpoint(t)
	ix := hybrid(f, EmbedOptions{}, nil)
	lexical := New(&Options{NoBridges: wordsOnly})
	addTravel(ix)
	addTravel(lexical)
	settle(t, ix)
	ctx := context.Background()

	if hits := lexical.Search(ctx, Query{Text: "automobile hire"}); len(hits) != 0 {
		t.Fatalf("BM25 alone found %q: the query must share no word with the tools", names(hits))
	}
	hits := ix.Search(ctx, Query{Text: "automobile hire"})
	if len(hits) == 0 || hits[0].Name != "rent_vehicle" || hits[0].Server != "rentals" {
		t.Fatalf("hybrid search(automobile hire) = %q, want rent_vehicle first", names(hits))
	}
	if hits := ix.Search(ctx, Query{Text: "weather forecast"}); len(hits) == 0 || hits[0].Name != "get_weather" {
		t.Errorf("hybrid search(weather forecast) = %q, want get_weather first", names(hits))
	}
	// Allow filters the dense side too.
	hits = ix.Search(ctx, Query{Text: "automobile hire", Allow: func(n string) bool { return n != "rent_vehicle" }})
	if slices.Contains(names(hits), "rent_vehicle") {
		t.Errorf("Allow left rent_vehicle in: %q", names(hits))
	}
	for i := 1; i < len(hits); i++ {
		if hits[i].Score > hits[i-1].Score {
			t.Errorf("fused hits out of order: %+v", hits)
		}
	}

	// A removed tool is not found by its vector, even once its id holds
	// another tool.
	ix.SetServer("rentals", nil)
	ix.SetServer("fences", []Entry{{Tool: tool("paint_fence", "Paint a fence.")}})
	settle(t, ix)
	if ix.docs[0] == nil || ix.docs[0].key != "paint_fence" {
		t.Fatalf("the test means paint_fence to reuse rent_vehicle's id 0, it has %v", ix.docs[0])
	}
	for _, h := range ix.Search(ctx, Query{Text: "automobile hire"}) {
		if h.Name == "rent_vehicle" || h.Name == "paint_fence" {
			t.Errorf("search(automobile hire) found %s", h.Name)
		}
	}
}

// An upstream that republishes its list gets only its changed tools
// embedded again.
func TestRepublishEmbedsChangesOnly(t *testing.T) {
	f := newFakeEndpoint(t)
	ix := hybrid(f, EmbedOptions{BatchSize: 3}, nil)
	addTravel(ix)
	settle(t, ix)
	_, docs, _ := f.counts()
	if docs != 4 {
		t.Fatalf("%d tool texts embedded, want 4", docs)
	}
	addTravel(ix) // new definitions, the same texts
	settle(t, ix)
	if _, n, _ := f.counts(); n != docs {
		t.Errorf("republishing the same tools embedded %d texts", n-docs)
	}
	ix.SetServer("weather", []Entry{{Tool: tool("get_weather", "Get the weather forecast of a city.", "city")}})
	settle(t, ix)
	if _, n, _ := f.counts(); n != docs+1 {
		t.Errorf("changing one tool embedded %d texts, want 1", n-docs)
	}
}

// Vectors kept in the cache file are not embedded again by a new index
// (a restart), and those of another model are not taken.
func TestCacheAcrossIndexes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "vectors.db")
	c, err := OpenCache(path)
	if err != nil {
		t.Fatal(err)
	}
	f := newFakeEndpoint(t)
	ix := hybrid(f, EmbedOptions{Cache: c}, nil)
	addTravel(ix)
	settle(t, ix)
	_, docs, _ := f.counts()
	if docs != 4 {
		t.Fatalf("%d tool texts embedded, want 4", docs)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	c, err = OpenCache(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var rows int
	if err := c.db.QueryRow(`SELECT count(*) FROM vectors WHERE model = 'fake-embed' AND length(vec) = ?`, 4*fakeDims).Scan(&rows); err != nil || rows != 4 {
		t.Fatalf("cache rows: %d, %v; want 4 of %d bytes", rows, err, 4*fakeDims)
	}
	ix2 := hybrid(f, EmbedOptions{Cache: c}, nil)
	addTravel(ix2)
	settle(t, ix2)
	if _, n, _ := f.counts(); n != docs {
		t.Errorf("a new index over the same cache embedded %d texts", n-docs)
	}
	hits := ix2.Search(context.Background(), Query{Text: "automobile hire"})
	if len(hits) == 0 || hits[0].Name != "rent_vehicle" {
		t.Errorf("search with cached vectors = %q, want rent_vehicle first", names(hits))
	}

	ix3 := hybrid(f, EmbedOptions{Cache: c, Model: "another-model"}, nil)
	addTravel(ix3)
	settle(t, ix3)
	if _, n, _ := f.counts(); n != docs+4 {
		t.Errorf("another model's index embedded %d texts, want 4", n-docs)
	}
}

// A cache that fails leaves the index embedding without it.
func TestCacheFailing(t *testing.T) {
	c, err := OpenCache(filepath.Join(t.TempDir(), "vectors.db"))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	f := newFakeEndpoint(t)
	var log syncBuffer
	ix := hybrid(f, EmbedOptions{Cache: c}, &log)
	addTravel(ix)
	settle(t, ix)
	if hits := ix.Search(context.Background(), Query{Text: "automobile hire"}); len(hits) == 0 || hits[0].Name != "rent_vehicle" {
		t.Errorf("search = %q, want rent_vehicle first", names(hits))
	}
	if n := strings.Count(log.String(), "embedding cache read failed"); n != 1 {
		t.Errorf("%d cache failures logged, want 1:\n%s", n, log.String())
	}
	if _, err := OpenCache(""); err == nil {
		t.Error("OpenCache(\"\"): no error")
	}
	if _, err := OpenCache(t.TempDir()); err == nil {
		t.Error("OpenCache(a directory): no error")
	}
}

// boundedSearch searches, failing the test if the search does not
// answer before a deadline far beyond any timeout of the index.
func boundedSearch(t *testing.T, ix *Index, q Query) []Hit {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan []Hit, 1)
	go func() { done <- ix.Search(ctx, q) }()
	select {
	case hits := <-done:
		return hits
	case <-ctx.Done():
		t.Fatalf("search(%q) did not answer", q.Text)
		return nil
	}
}

// An endpoint that goes down, fails, or hangs leaves search answering
// with BM25 alone, at once after the first failure.
func TestEndpointFailureFallsBack(t *testing.T) {
	lexical := New(&Options{NoBridges: wordsOnly}) // as the index under test
	addTravel(lexical)
	want := names(lexical.Search(context.Background(), Query{Text: "book a hotel room"}))
	if len(want) == 0 {
		t.Fatal("BM25 found nothing")
	}
	for _, tc := range []struct {
		name    string
		breakIt func(f *fakeEndpoint)
		log     string
	}{
		{"closed", func(f *fakeEndpoint) { f.srv.Close() }, "connection refused"},
		{"500", func(f *fakeEndpoint) { f.fail(500, `{"error": {"message": "model crashed"}}`) }, "500 Internal Server Error: model crashed"},
		{"401", func(f *fakeEndpoint) { f.set(func() { f.key = "sk-rotated-key" }) }, "401 Unauthorized: Incorrect API key provided"},
		{"hangs", func(f *fakeEndpoint) { f.set(func() { f.hang = make(chan struct{}) }) }, "deadline exceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeEndpoint(t)
			var log syncBuffer
			e := f.embedder()
			e.APIKey = "sk-old-key"
			ix := New(&Options{NoBridges: wordsOnly, Embedder: &EmbedOptions{
				Embedder: e, QueryPrefix: "query: ", QueryTimeout: 100 * time.Millisecond,
				Logger: slog.New(slog.NewTextHandler(&log, nil)),
			}})
			addTravel(ix)
			settle(t, ix)
			tc.breakIt(f)
			if f.hang != nil {
				t.Cleanup(func() { close(f.hang) }) // before the server closes
			}
			for range 3 {
				if got := names(boundedSearch(t, ix, Query{Text: "book a hotel room"})); !slices.Equal(got, want) {
					t.Errorf("search = %q, want BM25's %q", got, want)
				}
			}
			logs := log.String()
			if n := strings.Count(logs, "embedding endpoint failed"); n != 1 {
				t.Errorf("%d failures logged, want 1 (once per change of state):\n%s", n, logs)
			}
			if !strings.Contains(logs, tc.log) {
				t.Errorf("log lacks %q:\n%s", tc.log, logs)
			}
			if strings.Contains(logs, "sk-old-key") {
				t.Errorf("log shows the API key:\n%s", logs)
			}
		})
	}
}

// An endpoint down from the start leaves the tools without vectors and
// search with BM25 alone, not waiting for the endpoint at all; once the
// pause is over a search starts the embedding again.
func TestEndpointDownAtStart(t *testing.T) {
	f := newFakeEndpoint(t)
	f.fail(503, `{"error": {"message": "loading model"}}`)
	var log syncBuffer
	ix := hybrid(f, EmbedOptions{}, &log)
	var clock fakeClock
	ix.vectors.now = clock.now
	addTravel(ix)
	settle(t, ix)
	requests := func() int { n, _, _ := f.counts(); return n }
	if n := requests(); n != 1 {
		t.Fatalf("%d requests before the failure was known, want 1", n)
	}
	q := Query{Text: "automobile hire"}
	for range 3 {
		if hits := boundedSearch(t, ix, q); len(hits) != 0 {
			t.Errorf("search = %q while no tool has a vector", names(hits))
		}
	}
	settle(t, ix)
	if n := requests(); n != 1 {
		t.Errorf("%d requests during the pause", n-1)
	}
	f.fail(0, "")
	clock.advance(backoffMin)
	ix.Search(context.Background(), q) // starts the embedding again
	settle(t, ix)
	if _, docs, queries := f.counts(); docs != 4 || queries != 0 {
		t.Errorf("%d tool texts and %d queries embedded, want 4 and 0", docs, queries)
	}
	if hits := ix.Search(context.Background(), q); len(hits) == 0 || hits[0].Name != "rent_vehicle" {
		t.Errorf("search = %q after the endpoint came back, want rent_vehicle first", names(hits))
	}
	if logs := log.String(); strings.Count(logs, "embedding endpoint failed") != 1 || strings.Count(logs, "embedding endpoint answers again") != 1 {
		t.Errorf("want one line for each change of state:\n%s", logs)
	}
}

// After a failure the endpoint is left alone for a pause that doubles
// while it keeps failing; once it answers, what waited is embedded.
func TestEndpointBackoff(t *testing.T) {
	f := newFakeEndpoint(t)
	var log syncBuffer
	ix := hybrid(f, EmbedOptions{}, &log)
	var clock fakeClock
	ix.vectors.now = clock.now
	addTravel(ix)
	settle(t, ix)
	requests := func() int { n, _, _ := f.counts(); return n }
	base := requests()
	f.fail(503, `{"error": {"message": "loading model"}}`)
	q := Query{Text: "automobile hire"}
	for range 5 {
		if hits := ix.Search(context.Background(), q); len(hits) != 0 {
			t.Errorf("search = %q while the endpoint fails", names(hits))
		}
	}
	if n := requests() - base; n != 1 {
		t.Errorf("%d requests, want 1: none during the pause", n)
	}
	// A tool added meanwhile waits.
	ix.SetServer("cars", []Entry{{Tool: tool("car_wash", "Wash a car.")}})
	settle(t, ix)
	clock.advance(backoffMin + time.Second)
	ix.Search(context.Background(), q) // the probe, which fails
	ix.Search(context.Background(), q)
	if n := requests() - base; n != 2 {
		t.Errorf("%d requests after the first pause, want 2", n)
	}
	clock.advance(backoffMin + time.Second) // the pause is now twice as long
	ix.Search(context.Background(), q)
	ix.SetServer("cars", []Entry{{Tool: tool("car_wash", "Wash a car.")}})
	settle(t, ix)
	if n := requests() - base; n != 2 {
		t.Errorf("%d requests during the second pause", n-2)
	}
	f.fail(0, "")
	clock.advance(backoffMin)
	if hits := ix.Search(context.Background(), q); len(hits) == 0 || hits[0].Name != "rent_vehicle" {
		t.Errorf("search = %q once the endpoint answers, want rent_vehicle first", names(hits))
	}
	settle(t, ix)
	if hits := ix.Search(context.Background(), Query{Text: "automobile", K: 2}); !slices.Contains(names(hits), "car_wash") {
		t.Errorf("search = %q, want car_wash, embedded once the endpoint answered", names(hits))
	}
	logs := log.String()
	if strings.Count(logs, "embedding endpoint failed") != 1 || strings.Count(logs, "embedding endpoint answers again") != 1 {
		t.Errorf("want one line for each change of state:\n%s", logs)
	}
	for _, tc := range []struct {
		failures int
		want     time.Duration
	}{{1, backoffMin}, {2, 2 * backoffMin}, {3, 4 * backoffMin}, {10, backoffMax}, {100, backoffMax}} {
		v := newVectorSetWith(EmbedOptions{Embedder: f.embedder(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		v.now = clock.now
		v.mu.Lock()
		for i := range tc.failures {
			v.failedLocked(errors.New("down"), i > 0)
		}
		got := v.retryAt.Sub(clock.now())
		v.mu.Unlock()
		if got != tc.want {
			t.Errorf("pause after %d failures = %v, want %v", tc.failures, got, tc.want)
		}
	}
}

// funcEmbedder is an in-process stand-in for a model.
type funcEmbedder func(texts []string) ([][]float32, error)

func (f funcEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) { return f(texts) }

func fakeFuncEmbedder() funcEmbedder {
	return func(texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i, t := range texts {
			out[i] = fakeEmbedding(t)
		}
		return out, nil
	}
}

// Searches read vectors while the worker writes them and updates replace
// tools; run with -race.
func TestConcurrentHybrid(t *testing.T) {
	ix := New(&Options{NoBridges: wordsOnly, Embedder: &EmbedOptions{Embedder: fakeFuncEmbedder(), BatchSize: 2, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}})
	addTravel(ix)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			ix.SetServer("fleet", []Entry{{Tool: tool(fmt.Sprintf("car_%d", i%7), fmt.Sprintf("Car number %d", i))}})
		}
	})
	var searchers sync.WaitGroup
	for range 4 {
		searchers.Go(func() {
			for range 200 {
				hits := ix.Search(context.Background(), Query{Text: "automobile", K: 3})
				for i := 1; i < len(hits); i++ {
					if hits[i].Score > hits[i-1].Score {
						t.Errorf("hits out of order: %+v", hits)
					}
				}
			}
		})
	}
	searchers.Wait()
	close(stop)
	wg.Wait()
	settle(t, ix)
}

func TestNearest(t *testing.T) {
	ix := New(&Options{Embedder: fakeFuncEmbedder()})
	var es []Entry
	for i := range 50 {
		es = append(es, Entry{Tool: tool(fmt.Sprintf("t%d", i), strings.Repeat("vehicle ", i%5+1)+fmt.Sprintf("word%d", i))})
	}
	ix.SetServer("s", es)
	settle(t, ix)
	q := normalize(fakeEmbedding("car"))
	got := ix.vectors.nearest(q, ix.docs, nil, 10)
	if len(got) != 10 {
		t.Fatalf("%d nearest, want 10", len(got))
	}
	for i := 1; i < len(got); i++ {
		if got[i].score > got[i-1].score {
			t.Errorf("nearest out of order: %v", got)
		}
	}
	// The best have the most "vehicle"s: t4, t9, ...
	if d := ix.docs[got[0].id]; d.key != "t4" {
		t.Errorf("nearest first %s, want t4", d.key)
	}
	got = ix.vectors.nearest(q, ix.docs, func(name string) bool { return name == "t3" }, 10)
	if len(got) != 1 || ix.docs[got[0].id].key != "t3" {
		t.Errorf("nearest with allow = %v", got)
	}
	// Only tools pointing the query's way are near it.
	for i := range q {
		q[i] = -q[i]
	}
	if got := ix.vectors.nearest(q, ix.docs, nil, 10); len(got) != 0 {
		t.Errorf("nearest of the opposite query = %v", got)
	}
	if got := ix.vectors.nearest(normalize(fakeEmbedding("car")[:10]), ix.docs, nil, 10); len(got) != 0 {
		t.Errorf("nearest of a query of other dimensions = %v", got)
	}
}

// A scan shared out among goroutines finds what one goroutine does.
func TestNearestParallel(t *testing.T) {
	ix := New(&Options{NoBridges: wordsOnly, Embedder: &EmbedOptions{Embedder: randomEmbedder{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}})
	var es []Entry
	for i := range 500 {
		es = append(es, Entry{Tool: tool(fmt.Sprintf("t%d", i), fmt.Sprintf("Tool number %d", i))})
	}
	ix.SetServer("s", es)
	settle(t, ix)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	vecs, _ := randomEmbedder{}.Embed(context.Background(), []string{"a", "b", "c"})
	for _, q := range vecs {
		q = normalize(q)
		allow := func(name string) bool { return !strings.HasSuffix(name, "7") }
		ix.vectors.scanChunk = 1 << 62
		one := ix.vectors.nearest(q, ix.docs, allow, 50)
		ix.vectors.scanChunk = 1
		many := ix.vectors.nearest(q, ix.docs, allow, 50)
		if len(one) != 50 || !slices.Equal(one, many) {
			t.Errorf("parallel scan found %v, one goroutine %v", many, one)
		}
	}
}

func TestVectorCodec(t *testing.T) {
	v := normalize([]float32{3, 4})
	if v[0] != 0.6 || v[1] != 0.8 {
		t.Errorf("normalize = %v", v)
	}
	if got := decodeVector(encodeVector(v)); !slices.Equal(got, v) {
		t.Errorf("decode(encode(%v)) = %v", v, got)
	}
	if b := encodeVector([]float32{1}); !bytes.Equal(b, []byte{0, 0, 0x80, 0x3f}) {
		t.Errorf("encode(1) = %x, want little-endian float32", b)
	}
	for _, bad := range [][]byte{nil, {1, 2, 3}, {0, 0, 0, 0}} {
		if got := decodeVector(bad); got != nil {
			t.Errorf("decode(%x) = %v", bad, got)
		}
	}
	if normalize([]float32{0, 0}) != nil || normalize(nil) != nil {
		t.Error("a zero vector has no direction")
	}
}

// wordsOnly leaves out the lexical bridges: these tests' queries share
// no word with their tools, and WordNet would bridge some ("automobile
// hire" to rent a vehicle), which is what dense retrieval must do here.
const wordsOnly = BridgeWordNet | BridgeDomain | BridgeEveryday
