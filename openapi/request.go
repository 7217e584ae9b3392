package openapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// BuildRequest makes the HTTP request for a call of the tool with args,
// after checking them against its input schema (an [*ArgumentError] names
// each bad one). A null argument for a parameter means "not sent"; in a
// body it is sent as null.
//
// The URL is baseURL, its path joined with the operation's path template
// and its query kept, with the arguments escaped into the template: no
// argument can change the scheme, the host, the port or the base path, nor
// move a path value out of its segment. A path value may not be empty nor
// "." or "..", which would name another resource. Credentials are the
// caller's to add to the request; nothing here sets any.
func (t *Tool) BuildRequest(ctx context.Context, baseURL *url.URL, args map[string]any) (*http.Request, error) {
	if t == nil || t.op == nil {
		return nil, errors.New("openapi: BuildRequest needs a tool made by Tools")
	}
	if baseURL == nil || baseURL.Host == "" || (baseURL.Scheme != "http" && baseURL.Scheme != "https") {
		return nil, errors.New("openapi: the base URL must be an absolute http or https URL")
	}
	op := t.op
	args = op.withoutNullParams(args)
	if err := op.validate(args); err != nil {
		return nil, err
	}
	u, err := op.url(baseURL, args)
	if err != nil {
		return nil, err
	}
	body, contentType, err := op.encodeBody(args)
	if err != nil {
		return nil, err
	}
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, op.method, u.String(), r)
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	if !sameOrigin(req.URL, baseURL) || req.URL.EscapedPath() != u.RawPath || req.URL.RawQuery != u.RawQuery {
		// The URL was built so that this cannot happen; a request that
		// would leave the base URL is not made, whatever the bug.
		return nil, fmt.Errorf("openapi: the request URL %s left the base URL %s", redact(req.URL), redact(baseURL))
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if op.accept != "" {
		req.Header.Set("Accept", op.accept)
	}
	if err := op.setHeaders(req, args); err != nil {
		return nil, err
	}
	return req, nil
}

// withoutNullParams returns args without the parameters that are null.
func (op *operation) withoutNullParams(args map[string]any) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		out[k] = v
	}
	for _, p := range op.params {
		if v, ok := out[p.arg]; ok && v == nil {
			delete(out, p.arg)
		}
	}
	return out
}

// url builds the request URL; its RawPath is always set.
func (op *operation) url(base *url.URL, args map[string]any) (*url.URL, error) {
	var path strings.Builder
	path.WriteString(strings.TrimRight(base.EscapedPath(), "/"))
	if len(op.template) == 0 || op.template[0].param != nil || !strings.HasPrefix(op.template[0].literal, "/") {
		path.WriteByte('/')
	}
	start := path.Len()
	for _, pt := range op.template {
		if pt.param == nil {
			path.WriteString(escapeLiteral(pt.literal))
			continue
		}
		v := pathValue(pt.param, args[pt.param.arg])
		if v == "" {
			return nil, argErrorf("%s: a path parameter cannot be empty", pt.param.arg)
		}
		path.WriteString(v)
	}
	escaped := path.String()
	for seg := range strings.SplitSeq(escaped[start:], "/") {
		if s, err := url.PathUnescape(seg); err == nil && (s == "." || s == "..") {
			return nil, argErrorf("a path segment cannot be %q, which would name another resource", s)
		}
	}
	unescaped, err := url.PathUnescape(escaped)
	if err != nil {
		return nil, fmt.Errorf("openapi: the path %q: %w", escaped, err)
	}
	query := base.RawQuery
	add := func(pairs []string) {
		for _, p := range pairs {
			if query != "" {
				query += "&"
			}
			query += p
		}
	}
	for _, p := range op.params {
		if v, ok := args[p.arg]; ok && p.in == "query" {
			add(queryPairs(p.name, p.style, p.explode, p.allowReserved, p.asJSON, v))
		}
	}
	return &url.URL{Scheme: base.Scheme, User: base.User, Host: base.Host, Path: unescaped, RawPath: escaped, RawQuery: query}, nil
}

// escapeLiteral escapes what the description wrote between parameters:
// characters a path allows stay, the others (a '?' or '#' included) are
// escaped, and an escape already there is kept.
func escapeLiteral(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) && ishex(s[i+1]) && ishex(s[i+2]) || unreserved(c) || strings.IndexByte("/!$&'()*+,;=:@", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteString(escape(string(c), ""))
	}
	return b.String()
}

func ishex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// setHeaders sets the header and cookie parameters.
func (op *operation) setHeaders(req *http.Request, args map[string]any) error {
	var cookies []string
	for _, p := range op.params {
		v, ok := args[p.arg]
		if !ok {
			continue
		}
		switch p.in {
		case "header":
			s, err := headerValue(p, v)
			if err != nil {
				return err
			}
			req.Header.Set(p.name, s)
		case "cookie":
			cookies = append(cookies, cookiePairs(p, v)...)
		}
	}
	if len(cookies) > 0 {
		req.Header.Set("Cookie", strings.Join(cookies, "; "))
	}
	return nil
}
