package toolsearch

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Embedder turns texts into vectors.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// EmbedOptions configure dense retrieval. Until Options has a field of its
// own for them, give a *EmbedOptions as Options.Embedder: it is an
// Embedder (its Embedder's), and New takes the other fields from it.
type EmbedOptions struct {
	// Embedder computes the vectors.
	Embedder Embedder
	// Cache, when set, keeps tools' vectors across restarts, so that a
	// gateway that starts with a catalog it has seen before embeds
	// nothing.
	Cache *SQLiteCache
	// Model names the vectors in Cache: vectors of different models must
	// never meet. Empty means the Embedder's model where it is an
	// *OpenAIEmbedder.
	Model string
	// QueryTimeout bounds the embedding of a query; a search waits no
	// longer before it answers with BM25 alone. Zero means 2 s.
	QueryTimeout time.Duration
	// BatchSize is how many tool texts go in one request; zero means 64.
	BatchSize int
	// QueryPrefix and DocumentPrefix are put before queries and tool
	// texts, for models trained with them (e5's "query: " and
	// "passage: ", nomic's "search_query: " and "search_document: ").
	QueryPrefix, DocumentPrefix string
	// Logger receives the endpoint's changes of state; nil means
	// slog.Default().
	Logger *slog.Logger
}

// Embed calls o.Embedder.
func (o *EmbedOptions) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if o.Embedder == nil {
		return nil, errors.New("toolsearch: EmbedOptions has no Embedder")
	}
	return o.Embedder.Embed(ctx, texts)
}

// Defaults of the embedding side. Variables rather than constants so that
// tests can shorten them.
var (
	defaultQueryTimeout = 2 * time.Second
	defaultBatchSize    = 64
	// docBatchTimeout bounds one request of tool texts: a model may take
	// a while to load on its first request (Ollama does), but a request
	// that never ends must not stop the embedding of the rest for good.
	docBatchTimeout = 2 * time.Minute
	// backoffMin and backoffMax bound the pause after a failure, doubling
	// between them, during which the endpoint is not called at all.
	backoffMin = 30 * time.Second
	backoffMax = 5 * time.Minute
	// cacheChunk is how many tool texts are looked up in the cache at a
	// time, more than a request's worth since a lookup is cheap.
	cacheChunk = 512
)

// maxEmbedDescription bounds the description in a tool's text: many
// embedding models read 512 tokens at most, and some servers refuse
// longer input rather than cut it. What a tool does is said first.
const maxEmbedDescription = 1500

// maxEmbedParams bounds the parameter names in a tool's text.
const maxEmbedParams = 40

// embedText is the text of a tool that is embedded: its server, name,
// title, description (its beginning, if long) and parameter names. It
// leaves out what the lexical index weighs apart (the parameters'
// descriptions, configured metadata), which would crowd the model's
// window with detail.
func embedText(d *doc) string {
	t := d.tool
	var b strings.Builder
	b.WriteString("tool: ")
	b.WriteString(t.Name)
	if spaced := nameSpacer.Replace(t.Name); spaced != t.Name {
		b.WriteString(" (")
		b.WriteString(spaced)
		b.WriteString(")")
	}
	if d.server != "" {
		b.WriteString("\nserver: ")
		b.WriteString(d.server)
	}
	title := t.Title
	if title == "" && t.Annotations != nil {
		title = t.Annotations.Title
	}
	if title != "" {
		b.WriteString("\ntitle: ")
		b.WriteString(title)
	}
	if desc := strings.TrimSpace(t.Description); desc != "" {
		b.WriteString("\ndescription: ")
		b.WriteString(truncateText(desc, maxEmbedDescription))
	}
	n := 0
	forEachParam(t.InputSchema, func(name string, _ map[string]any) {
		if n == maxEmbedParams {
			return
		}
		if n == 0 {
			b.WriteString("\nparameters: ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(name)
		n++
	})
	return b.String()
}

var nameSpacer = strings.NewReplacer("_", " ", "-", " ", ".", " ", "/", " ")

// truncateText cuts s to at most n bytes, at a space where there is one
// near the end, and never inside a rune.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if sp := strings.LastIndexByte(s[:cut], ' '); sp > n*3/4 {
		cut = sp
	}
	return strings.TrimRight(s[:cut], " ")
}

type textHash [sha256.Size]byte

// slot is the vector state of one doc id: the doc it was last wanted for
// (by generation, as the index tells a reused id's doc apart), the hash
// of that doc's text, and its vector once known; the text is kept only
// while the vector is awaited.
type slot struct {
	gen  uint32
	hash textHash
	text string
	vec  []float32
}

// vectorSet holds the tools' vectors. Searches read it concurrently
// (under the index's read lock, which does not order them against the
// background worker), so it has a lock of its own.
type vectorSet struct {
	e            Embedder
	cache        *SQLiteCache
	model        string
	queryTimeout time.Duration
	batch        int
	queryPrefix  string
	docPrefix    string
	log          *slog.Logger
	now          func() time.Time // a clock tests can move
	// scanChunk is the work of a scan worth a goroutine (0:
	// parallelScan); a test sets it to compare split and whole scans.
	scanChunk int

	mu      sync.RWMutex
	slots   []slot // by doc id
	byHash  map[textHash][]float32
	pending []int32 // ids whose vectors are awaited, oldest first
	running bool    // a worker goroutine is draining pending
	idle    chan struct{}

	// The endpoint's state: after a failure it is not called until
	// retryAt, and then by one caller (probing) at a time.
	down        bool
	failures    int
	retryAt     time.Time
	probing     bool
	workerProbe bool // the probe is the worker's
	cacheError  bool
}

func newVectorSet(e Embedder) *vectorSet {
	if o, ok := e.(*EmbedOptions); ok {
		return newVectorSetWith(*o)
	}
	return newVectorSetWith(EmbedOptions{Embedder: e})
}

func newVectorSetWith(o EmbedOptions) *vectorSet {
	v := &vectorSet{
		e:            o.Embedder,
		cache:        o.Cache,
		model:        o.Model,
		queryTimeout: cmp.Or(o.QueryTimeout, defaultQueryTimeout),
		batch:        cmp.Or(o.BatchSize, defaultBatchSize),
		queryPrefix:  o.QueryPrefix,
		docPrefix:    o.DocumentPrefix,
		log:          cmp.Or(o.Logger, slog.Default()),
		now:          time.Now,
		byHash:       map[textHash][]float32{},
	}
	if v.model == "" {
		if oe, ok := o.Embedder.(*OpenAIEmbedder); ok {
			v.model = oe.cacheModel()
		}
	}
	if v.model == "" {
		v.model = "default"
	}
	return v
}

// newer says whether generation a is after b, allowing for wrap-around.
func newer(a, b uint32) bool { return int32(a-b) > 0 }

// want schedules the embedding of docs' texts. It is called under the
// index's write lock, so it only hashes and queues: the network is left
// to a background worker, and a text already seen gets its vector here.
func (v *vectorSet) want(docs []*doc) {
	if v.e == nil || len(docs) == 0 {
		return
	}
	type item struct {
		d    *doc
		text string
		hash textHash
	}
	items := make([]item, len(docs))
	for i, d := range docs {
		text := v.docPrefix + embedText(d)
		items[i] = item{d, text, sha256.Sum256([]byte(text))}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, it := range items {
		id := int(it.d.id)
		if id >= len(v.slots) {
			v.slots = slices.Grow(v.slots, id+1-len(v.slots))[:id+1]
		}
		s := &v.slots[id]
		if s.gen != 0 && newer(s.gen, it.d.gen) {
			continue
		}
		*s = slot{gen: it.d.gen, hash: it.hash, vec: v.byHash[it.hash]}
		if s.vec == nil {
			s.text = it.text
			v.pending = append(v.pending, it.d.id)
		}
	}
	v.pruneLocked()
	v.kickLocked()
}

// pruneLocked bounds what the set keeps for texts no doc has any more
// (tools changed or removed): past twice the ids in use, it keeps only the
// vectors of the ids' latest docs, and the pending ids still awaited.
func (v *vectorSet) pruneLocked() {
	if len(v.byHash) > 2*len(v.slots)+256 {
		keep := make(map[textHash][]float32, len(v.slots))
		for i := range v.slots {
			if s := &v.slots[i]; s.vec != nil {
				keep[s.hash] = s.vec
			}
		}
		v.byHash = keep
	}
	if len(v.pending) > 2*len(v.slots)+256 {
		seen := make(map[int32]bool, len(v.pending))
		v.pending = slices.DeleteFunc(v.pending, func(id int32) bool {
			s := &v.slots[id]
			drop := seen[id] || s.vec != nil || s.text == ""
			seen[id] = true
			return drop
		})
	}
}

// kickLocked starts the worker if there is work and the endpoint may be
// called.
func (v *vectorSet) kickLocked() {
	if v.running || len(v.pending) == 0 {
		return
	}
	if v.down {
		if v.probing || v.now().Before(v.retryAt) {
			return
		}
		v.probing, v.workerProbe = true, true
	}
	v.running = true
	v.idle = make(chan struct{})
	go v.work()
}

type embedJob struct {
	id   int32
	gen  uint32
	hash textHash
	text string
}

// work embeds the pending texts, a chunk at a time, until none are left or
// the endpoint fails; after a failure the texts stay pending for the next
// start, which waits for the pause to end.
func (v *vectorSet) work() {
	for {
		jobs := v.take()
		if jobs == nil {
			return
		}
		if v.cache != nil {
			hashes := make([]textHash, len(jobs))
			for i, j := range jobs {
				hashes[i] = j.hash
			}
			ctx, cancel := context.WithTimeout(context.Background(), docBatchTimeout)
			found, err := v.cache.load(ctx, v.model, hashes)
			cancel()
			v.cacheResult("read", err)
			if len(found) > 0 {
				v.store(jobs, found, false)
				jobs = slices.DeleteFunc(jobs, func(j embedJob) bool { return found[j.hash] != nil })
			}
		}
		for len(jobs) > 0 {
			n := min(v.batch, len(jobs))
			got, err := v.embedDocs(jobs[:n])
			if err != nil {
				v.stop(jobs, err)
				return
			}
			v.store(jobs[:n], got, true)
			if v.cache != nil {
				ctx, cancel := context.WithTimeout(context.Background(), docBatchTimeout)
				err := v.cache.save(ctx, v.model, got)
				cancel()
				v.cacheResult("write", err)
			}
			jobs = jobs[n:]
		}
	}
}

// take returns the next chunk of texts to embed, or nil, having marked
// the worker stopped, when there are none. Texts seen before get their
// vectors here, and each id and text is taken once.
func (v *vectorSet) take() []embedJob {
	v.mu.Lock()
	defer v.mu.Unlock()
	var jobs []embedJob
	var later []int32
	ids := map[int32]bool{}
	hashes := map[textHash]bool{}
	i := 0
	for ; i < len(v.pending) && len(jobs) < cacheChunk; i++ {
		id := v.pending[i]
		s := &v.slots[id]
		if ids[id] || s.vec != nil || s.text == "" {
			continue
		}
		ids[id] = true
		if vec := v.byHash[s.hash]; vec != nil {
			s.vec, s.text = vec, ""
			continue
		}
		if hashes[s.hash] {
			// Another id with the same text is in this chunk; its
			// vector will reach this one on the next take.
			later = append(later, id)
			continue
		}
		hashes[s.hash] = true
		jobs = append(jobs, embedJob{id, s.gen, s.hash, s.text})
	}
	v.pending = append(v.pending[i:], later...)
	if len(jobs) == 0 {
		// Nothing was left to take (later is empty without jobs).
		v.pending = nil
		v.running = false
		if v.workerProbe {
			// The texts were all known: the endpoint was not tried,
			// and the next caller may try it.
			v.probing, v.workerProbe = false, false
		}
		close(v.idle)
		return nil
	}
	return jobs
}

// stop ends the worker after a failure, leaving left pending.
func (v *vectorSet) stop(left []embedJob, err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	ids := make([]int32, len(left))
	for i, j := range left {
		ids[i] = j.id
	}
	v.pending = append(ids, v.pending...)
	v.failedLocked(err, v.workerProbe)
	v.workerProbe = false
	v.running = false
	close(v.idle)
}

func (v *vectorSet) embedDocs(jobs []embedJob) (map[textHash][]float32, error) {
	texts := make([]string, len(jobs))
	for i, j := range jobs {
		texts[i] = j.text
	}
	ctx, cancel := context.WithTimeout(context.Background(), docBatchTimeout)
	defer cancel()
	vecs, err := v.e.Embed(ctx, texts)
	if err == nil && len(vecs) != len(texts) {
		err = fmt.Errorf("the embedder returned %d vectors for %d texts", len(vecs), len(texts))
	}
	if err != nil {
		return nil, err
	}
	v.succeeded()
	out := make(map[textHash][]float32, len(jobs))
	for i, j := range jobs {
		// A zero vector has no direction: the tool is left to BM25.
		if vec := normalize(vecs[i]); vec != nil {
			out[j.hash] = vec
		}
	}
	return out, nil
}

// store gives jobs their vectors, where their ids still hold the docs
// they were taken for. Final says the embedder answered for all of jobs:
// a job it gave no vector (a zero one) is not tried again.
func (v *vectorSet) store(jobs []embedJob, vecs map[textHash][]float32, final bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for h, vec := range vecs {
		v.byHash[h] = vec
	}
	for _, j := range jobs {
		vec := vecs[j.hash]
		if vec == nil && !final {
			continue
		}
		if s := &v.slots[j.id]; s.gen == j.gen && s.hash == j.hash {
			s.vec, s.text = vec, ""
		}
	}
}

// query embeds a query, or returns nil (BM25 alone) when the endpoint
// fails, is slow, or failed lately, or when no tool has a vector yet.
func (v *vectorSet) query(ctx context.Context, text string) []float32 {
	if v.e == nil {
		return nil
	}
	v.mu.RLock()
	none := len(v.byHash) == 0
	v.mu.RUnlock()
	if none {
		// A query's vector would meet none, so the search is not made to
		// wait for it; but if the tools' embedding stopped on a failure,
		// the search retries it once the pause is over, as an update
		// would.
		v.mu.Lock()
		v.kickLocked()
		v.mu.Unlock()
		return nil
	}
	ok, probe := v.admit()
	if !ok {
		return nil
	}
	qctx, cancel := context.WithTimeout(ctx, v.queryTimeout)
	defer cancel()
	vecs, err := v.e.Embed(qctx, []string{v.queryPrefix + text})
	if err == nil && len(vecs) != 1 {
		err = fmt.Errorf("the embedder returned %d vectors for 1 text", len(vecs))
	}
	if err != nil {
		if ctx.Err() != nil {
			// The caller gave up; that says nothing of the endpoint.
			if probe {
				v.mu.Lock()
				v.probing = false
				v.mu.Unlock()
			}
			return nil
		}
		v.mu.Lock()
		v.failedLocked(err, probe)
		v.mu.Unlock()
		return nil
	}
	v.succeeded()
	return normalize(vecs[0])
}

// admit says whether the endpoint may be called now: always while it
// answers, and after a failure only once the pause is over, by one
// caller at a time (the probe).
func (v *vectorSet) admit() (ok, probe bool) {
	v.mu.RLock()
	down := v.down
	v.mu.RUnlock()
	if !down {
		return true, false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.down {
		return true, false
	}
	if v.probing || v.now().Before(v.retryAt) {
		return false, false
	}
	v.probing = true
	return true, true
}

// failedLocked records a failure. Calls that were under way when the
// endpoint went down fail too; only the first failure and those of
// probes lengthen the pause.
func (v *vectorSet) failedLocked(err error, probe bool) {
	if v.down && !probe {
		return
	}
	if probe {
		v.probing = false
	}
	v.failures++
	pause := backoffMin
	for i := 1; i < v.failures && pause < backoffMax; i++ {
		pause *= 2
	}
	pause = min(pause, backoffMax)
	v.retryAt = v.now().Add(pause)
	if !v.down {
		v.down = true
		v.log.Warn("toolsearch: embedding endpoint failed; searching with BM25 alone meanwhile", "error", err, "retry_in", pause)
	} else {
		v.log.Debug("toolsearch: embedding endpoint still failing", "error", err, "retry_in", pause)
	}
}

func (v *vectorSet) succeeded() {
	v.mu.RLock()
	down := v.down
	v.mu.RUnlock()
	if !down {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.down {
		return
	}
	v.down, v.failures, v.probing, v.workerProbe = false, 0, false, false
	v.log.Info("toolsearch: embedding endpoint answers again")
	v.kickLocked()
}

func (v *vectorSet) cacheResult(op string, err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	switch {
	case err != nil && !v.cacheError:
		v.cacheError = true
		v.log.Warn("toolsearch: embedding cache "+op+" failed; embedding without it", "path", v.cache.path, "error", err)
	case err == nil && v.cacheError:
		v.cacheError = false
		v.log.Info("toolsearch: embedding cache works again", "path", v.cache.path)
	}
}

// wait returns once no worker runs (all wanted texts have vectors, or the
// endpoint failed), or when ctx ends.
func (v *vectorSet) wait(ctx context.Context) error {
	for {
		v.mu.RLock()
		running, idle := v.running, v.idle
		v.mu.RUnlock()
		if !running {
			return nil
		}
		select {
		case <-idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// nearest returns the n docs whose vectors are closest to qvec by cosine,
// best first, among the live docs allow admits. Docs without a vector
// yet, and those pointing away from the query, are left to BM25.
func (v *vectorSet) nearest(qvec []float32, docs []*doc, allow func(string) bool, n int) []scored {
	if len(qvec) == 0 || n <= 0 {
		return nil
	}
	v.mu.RLock()
	defer v.mu.RUnlock()
	// The candidates first, in this goroutine: allow is the caller's, and
	// need not be safe for concurrent use.
	ids := make([]int32, 0, min(len(docs), len(v.slots)))
	for id, d := range docs {
		if d == nil || id >= len(v.slots) {
			continue
		}
		if s := &v.slots[id]; s.gen != d.gen || len(s.vec) != len(qvec) {
			continue
		}
		if allow != nil && !allow(d.key) {
			continue
		}
		ids = append(ids, int32(id))
	}
	// A scan is about a nanosecond a dimension per tool (Go does not
	// vectorise the products): 10,000 tools of 768 dimensions take
	// milliseconds, which a large catalog's searches share out among the
	// processors.
	chunk := v.scanChunk
	if chunk <= 0 {
		chunk = parallelScan
	}
	parts := min(runtime.GOMAXPROCS(0), len(ids)*len(qvec)/chunk)
	if parts <= 1 {
		return v.scan(qvec, ids, n).sorted()
	}
	tops := make([]topN, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*len(ids)/parts, (p+1)*len(ids)/parts
		wg.Go(func() { tops[p] = v.scan(qvec, ids[lo:hi], n) })
	}
	wg.Wait()
	all := slices.Concat(tops...)
	all = all.sorted()
	return all[:min(n, len(all))]
}

// parallelScan is the work (tools × dimensions) of a scan worth a
// goroutine: about a millisecond.
const parallelScan = 1 << 20

// scan returns the best n of ids by dot product with qvec; v.mu is held.
func (v *vectorSet) scan(qvec []float32, ids []int32, n int) topN {
	top := make(topN, 0, min(n, len(ids)))
	for _, id := range ids {
		score := float64(dot(qvec, v.slots[id].vec))
		if score <= 0 || len(top) == n && score <= top[0].score {
			continue
		}
		top.push(scored{id, score}, n)
	}
	return top
}

// sorted orders h best first, ties by id, so that results are stable.
func (h topN) sorted() topN {
	slices.SortFunc(h, func(a, b scored) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.id, b.id))
	})
	return h
}

// topN is a min-heap of the best n scores seen.
type topN []scored

func (h *topN) push(s scored, n int) {
	if len(*h) < n {
		*h = append(*h, s)
		for i := len(*h) - 1; i > 0; {
			p := (i - 1) / 2
			if (*h)[p].score <= (*h)[i].score {
				break
			}
			(*h)[p], (*h)[i] = (*h)[i], (*h)[p]
			i = p
		}
		return
	}
	(*h)[0] = s
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(*h) && (*h)[l].score < (*h)[m].score {
			m = l
		}
		if r < len(*h) && (*h)[r].score < (*h)[m].score {
			m = r
		}
		if m == i {
			return
		}
		(*h)[m], (*h)[i] = (*h)[i], (*h)[m]
		i = m
	}
}

func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// normalize returns v scaled to unit length, so that cosine similarity is
// a dot product, or nil for an empty, zero or non-finite vector.
func normalize(v []float32) []float32 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 || math.IsInf(ss, 0) || math.IsNaN(ss) {
		return nil
	}
	inv := 1 / math.Sqrt(ss)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}
