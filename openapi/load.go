package openapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/go-json-experiment/json/jsontext"
)

// LoadOptions says where a description may be read from and how much of
// it. The zero value reads the source and the files beside a local one,
// with the default limits, and refuses remote $refs.
type LoadOptions struct {
	// Data, when not nil, is the description itself; the source then only
	// names it, in errors and as the base of relative $refs.
	Data []byte

	// AllowRemoteRefs lets $refs name documents over http or https. When
	// false, such a $ref fails the load. A description from a URL needs it
	// for its relative $refs too, as they are remote.
	AllowRemoteRefs bool

	// Transport carries the fetches over http(s). Nil means
	// http.DefaultTransport. Load sets its own timeout and redirect policy
	// ([CheckRedirect]) on top of it.
	Transport http.RoundTripper

	// MaxBytes is the size limit of each document read, in bytes. Zero
	// means DefaultMaxBytes (64 MiB).
	MaxBytes int64

	// FetchTimeout bounds each fetch over http(s), from the request to the
	// body's last byte. Zero means DefaultFetchTimeout (30 seconds).
	FetchTimeout time.Duration

	// MaxDocuments bounds how many documents $refs may bring in, besides
	// the description. Zero means DefaultMaxDocuments (100).
	MaxDocuments int
}

func (o *LoadOptions) maxBytes() int64 {
	if o.MaxBytes > 0 {
		return o.MaxBytes
	}
	return DefaultMaxBytes
}

func (o *LoadOptions) fetchTimeout() time.Duration {
	if o.FetchTimeout > 0 {
		return o.FetchTimeout
	}
	return DefaultFetchTimeout
}

func (o *LoadOptions) maxDocuments() int {
	if o.MaxDocuments > 0 {
		return o.MaxDocuments
	}
	return DefaultMaxDocuments
}

// Document is a loaded description, OpenAPI 3 whatever it was written
// in. [Tools] maps it to tools.
type Document struct {
	t       *openapi3.T
	version string
	source  *url.URL // nil unless loaded from http(s)
	v31     bool
}

// Title is the description's info.title.
func (d *Document) Title() string {
	if d.t.Info == nil {
		return ""
	}
	return d.t.Info.Title
}

// Version is the description's info.version, the API's version.
func (d *Document) Version() string {
	if d.t.Info == nil {
		return ""
	}
	return d.t.Info.Version
}

// SpecVersion is the version of the specification the description was
// written in, as it says: "2.0" for Swagger, "3.0.3", "3.1.0" and so on.
func (d *Document) SpecVersion() string { return d.version }

// Servers are the URLs of the description's servers, in its order, with
// their variables set to their defaults. A relative URL is resolved
// against the description's own URL when it was loaded from one, and
// left relative otherwise.
func (d *Document) Servers() []string {
	var out []string
	for _, s := range d.t.Servers {
		if s == nil || s.URL == "" {
			continue
		}
		raw := s.URL
		for name, v := range s.Variables {
			if v != nil {
				raw = strings.ReplaceAll(raw, "{"+name+"}", v.Default)
			}
		}
		if d.source != nil {
			if ref, err := url.Parse(raw); err == nil {
				raw = d.source.ResolveReference(ref).String()
			}
		}
		out = append(out, raw)
	}
	return out
}

// Load reads and parses a description: OpenAPI 3.0 or 3.1, or Swagger 2.0
// which it converts to OpenAPI 3, in JSON or YAML. The source is a file
// path or an http(s) URL, or only a name when opts.Data holds the bytes.
//
// $refs within the description are resolved; so are $refs to files under
// the directory of a description read from a file, and, with
// opts.AllowRemoteRefs, $refs to http(s) URLs. Every read is bounded by
// opts; a redirect is followed only within its origin.
func Load(ctx context.Context, source string, opts LoadOptions) (doc *Document, err error) {
	f := newFetcher(ctx, &opts)
	defer f.close()
	data, location, err := readSource(f, source, opts.Data)
	if err != nil {
		return nil, err
	}
	name := source
	if name == "" {
		name = "the description"
	}
	defer func() {
		// The parser is a large body of code run on input that may be
		// hostile; a bug in it must fail one load, not the process.
		if r := recover(); r != nil {
			doc, err = nil, fmt.Errorf("openapi: %s: the parser failed: %v", name, r)
		}
	}()
	doc, err = parse(ctx, f, data, location)
	if err != nil {
		return nil, fmt.Errorf("openapi: %s: %w", name, err)
	}
	if location.Scheme == "http" || location.Scheme == "https" {
		doc.source = location
	}
	return doc, nil
}

// readSource returns the description's bytes and its location, the base
// of relative $refs.
func readSource(f *fetcher, source string, data []byte) ([]byte, *url.URL, error) {
	if u, err := url.Parse(source); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		if data == nil {
			if data, err = f.get(u); err != nil {
				return nil, nil, fmt.Errorf("openapi: %w", err)
			}
		}
		return data, u, nil
	}
	if source == "" {
		if data == nil {
			return nil, nil, errors.New("openapi: Load needs a source or LoadOptions.Data")
		}
		return data, &url.URL{}, nil
	}
	abs, err := filepath.Abs(source)
	if err != nil {
		return nil, nil, fmt.Errorf("openapi: %w", err)
	}
	if err := f.confine(filepath.Dir(abs)); err != nil && data == nil {
		return nil, nil, fmt.Errorf("openapi: %w", err)
	}
	if data == nil {
		if data, err = f.readFile(abs); err != nil {
			return nil, nil, fmt.Errorf("openapi: %w", err)
		}
	}
	return data, &url.URL{Path: filepath.ToSlash(abs)}, nil
}

func parse(ctx context.Context, f *fetcher, data []byte, location *url.URL) (*Document, error) {
	loader := openapi3.NewLoader()
	loader.Context = ctx
	loader.ReadFromURIFunc = func(_ *openapi3.Loader, u *url.URL) ([]byte, error) {
		if u.String() == location.String() {
			return data, nil
		}
		return f.readRef(u)
	}
	swagger, oas := specVersion(data)
	switch {
	case swagger != "":
		if !strings.HasPrefix(swagger, "2.") {
			return nil, fmt.Errorf("swagger %q is not supported; only 2.0 is", swagger)
		}
		var t2 openapi2.T
		if err := openapi2.UnmarshalFromData(data, &t2); err != nil {
			return nil, err
		}
		t, err := openapi2conv.ToV3WithLoader(&t2, loader, location)
		if err != nil {
			return nil, err
		}
		return &Document{t: t, version: swagger}, nil
	case oas != "" && !strings.HasPrefix(oas, "3."):
		return nil, fmt.Errorf("openapi %q is not supported; 3.0 and 3.1 are", oas)
	}
	t, ok, err := (*openapi3.T)(nil), false, error(nil)
	if oas != "" && bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{")) {
		t, ok, err = loadJSON(loader, data, location)
	}
	if !ok {
		t, err = loader.LoadFromDataWithPath(data, location)
	}
	if err != nil {
		return nil, err
	}
	if t.OpenAPI == "" {
		return nil, errors.New(`not an OpenAPI description: it has no "openapi" or "swagger" field`)
	}
	if !strings.HasPrefix(t.OpenAPI, "3.") {
		return nil, fmt.Errorf("openapi %q is not supported; 3.0 and 3.1 are", t.OpenAPI)
	}
	return &Document{t: t, version: t.OpenAPI, v31: !strings.HasPrefix(t.OpenAPI, "3.0")}, nil
}

// specVersion reads the top-level "swagger" and "openapi" fields without
// parsing the whole description, which for a large one costs as much as
// loading it: JSON by its tokens, YAML by its unindented lines. What it
// misses (YAML in flow style) loads as OpenAPI 3 and is checked there.
func specVersion(data []byte) (swagger, oas string) {
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	if len(trimmed) > 0 && trimmed[0] == '{' {
		return jsonSpecVersion(trimmed)
	}
	for line := range bytes.Lines(data) {
		line = bytes.TrimRight(line, "\r\n")
		for _, key := range []string{"swagger:", "openapi:"} {
			if v, ok := bytes.CutPrefix(line, []byte(key)); ok {
				v = bytes.TrimSpace(v)
				if i := bytes.Index(v, []byte(" #")); i >= 0 {
					v = bytes.TrimSpace(v[:i])
				}
				s := strings.Trim(string(v), `"'`)
				if key == "swagger:" {
					return s, ""
				}
				return "", s
			}
		}
	}
	return "", ""
}

func jsonSpecVersion(data []byte) (swagger, oas string) {
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return "", ""
	}
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return "", ""
		}
		name := tok.String()
		if dec.PeekKind() != '"' || (name != "swagger" && name != "openapi") {
			if dec.SkipValue() != nil {
				return "", ""
			}
			continue
		}
		v, err := dec.ReadToken()
		if err != nil {
			return "", ""
		}
		// A description names one version, so the first one found
		// ends the scan.
		if name == "swagger" {
			return v.String(), ""
		}
		return "", v.String()
	}
	return "", ""
}
