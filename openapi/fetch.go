package openapi

// Every byte of a description, the document itself and each document its
// $refs name, is read here: the parser's own readers would follow any
// redirect, read any file and have no size limit, and a description is
// input an operator may not have written.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Defaults for the zero values of [LoadOptions].
const (
	DefaultMaxBytes     = 64 << 20
	DefaultFetchTimeout = 30 * time.Second
	DefaultMaxDocuments = 100
)

// maxRedirects bounds a chain of same-origin redirects.
const maxRedirects = 10

// ErrTooLarge is wrapped by the errors for a document or a response larger
// than its limit.
var ErrTooLarge = errors.New("larger than the limit")

// CheckRedirect is an [http.Client] CheckRedirect that follows a redirect
// only within the origin (scheme, host and port) of the first request, and
// at most 10 of them. The client of a REST upstream should use it, so that
// credentials are never sent to another origin; Load uses it for every
// fetch.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	if first := via[0].URL; !sameOrigin(first, req.URL) {
		return fmt.Errorf("a redirect from %s to another origin (%s) is not followed", origin(first), origin(req.URL))
	}
	return nil
}

func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(hostPort(a), hostPort(b))
}

// hostPort is u's host with its port, the scheme's default one written
// out, so that https://h and https://h:443 compare equal.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
		return u.Host + ":80"
	case "https":
		return u.Host + ":443"
	}
	return u.Host
}

func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }

// fetcher reads the documents of one Load, under its options.
type fetcher struct {
	ctx    context.Context
	opts   *LoadOptions
	client *http.Client
	// root confines file $refs to the directory of a description loaded
	// from a file; nil for one loaded from a URL or from bytes.
	root    *os.Root
	rootDir string

	mu    sync.Mutex
	read  map[string][]byte
	count int
}

func newFetcher(ctx context.Context, opts *LoadOptions) *fetcher {
	transport := opts.Transport
	if transport == nil {
		transport = http.DefaultTransport
	}
	return &fetcher{
		ctx:  ctx,
		opts: opts,
		client: &http.Client{
			Transport:     transport,
			CheckRedirect: CheckRedirect,
			Timeout:       opts.fetchTimeout(),
		},
		read: map[string][]byte{},
	}
}

// confine makes file $refs resolve under dir, and only there.
func (f *fetcher) confine(dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	f.root, f.rootDir = root, dir
	return nil
}

func (f *fetcher) close() {
	if f.root != nil {
		f.root.Close()
	}
}

// readRef reads the document a $ref names, as the parser's ReadFromURIFunc.
func (f *fetcher) readRef(u *url.URL) ([]byte, error) {
	key := u.String()
	f.mu.Lock()
	defer f.mu.Unlock()
	if b, ok := f.read[key]; ok {
		return b, nil
	}
	if f.count >= f.opts.maxDocuments() {
		return nil, fmt.Errorf("the description refers to more than %d documents", f.opts.maxDocuments())
	}
	var b []byte
	var err error
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if !f.opts.AllowRemoteRefs {
			return nil, fmt.Errorf("$ref to %s: remote references are off (hint: LoadOptions.AllowRemoteRefs)", redact(u))
		}
		b, err = f.get(u)
	case "", "file":
		b, err = f.readFile(u.Path)
	default:
		return nil, fmt.Errorf("$ref to %s: the scheme %q is not supported", redact(u), u.Scheme)
	}
	if err != nil {
		return nil, err
	}
	f.count++
	f.read[key] = b
	return b, nil
}

// readFile reads a file $ref, which must lie under the root document's
// directory: os.Root refuses a way out through ".." or a symbolic link.
func (f *fetcher) readFile(p string) ([]byte, error) {
	if f.root == nil {
		return nil, fmt.Errorf("$ref to the file %q: only a description loaded from a file may refer to files", p)
	}
	rel, err := filepath.Rel(f.rootDir, filepath.FromSlash(p))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("$ref to the file %q: files outside %s are not read", p, f.rootDir)
	}
	file, err := f.root.Open(rel)
	if err != nil {
		return nil, fmt.Errorf("$ref to the file %q: %w", p, err)
	}
	defer file.Close()
	return readLimited(file, f.opts.maxBytes(), p)
}

// get reads a document over http(s).
func (f *fetcher) get(u *url.URL) ([]byte, error) {
	req, err := http.NewRequestWithContext(f.ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json, application/yaml;q=0.9, */*;q=0.1")
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", redact(u), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("fetching %s: %s", redact(u), resp.Status)
	}
	return readLimited(resp.Body, f.opts.maxBytes(), redact(u))
}

func readLimited(r io.Reader, limit int64, name string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is %w of %d bytes (hint: LoadOptions.MaxBytes)", name, ErrTooLarge, limit)
	}
	return b, nil
}

// redact drops a URL's user information and query, which may carry a
// key, from messages.
func redact(u *url.URL) string {
	c := *u
	c.User = nil
	if c.RawQuery != "" {
		c.RawQuery = "…"
	}
	return c.String()
}
