package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/yosida95/uritemplate/v3"
)

// CodeResourceNotFound is the error code of resources/read for a resource
// that does not exist.
const CodeResourceNotFound = -32002

// Resource describes a resource a client can read.
type Resource struct {
	URI         string       `json:"uri"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	MIMEType    string       `json:"mimeType,omitempty"`
	Size        *int64       `json:"size,omitzero"`
	Annotations *Annotations `json:"annotations,omitzero"`
	Icons       []Icon       `json:"icons,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// ResourceTemplate describes a family of resources by an RFC 6570 URI
// template.
type ResourceTemplate struct {
	URITemplate string       `json:"uriTemplate"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	MIMEType    string       `json:"mimeType,omitempty"`
	Annotations *Annotations `json:"annotations,omitzero"`
	Icons       []Icon       `json:"icons,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// ResourceContents is the text or binary content of a resource. Blob, when
// not nil, is sent base64-encoded instead of Text.
type ResourceContents struct {
	URI      string
	MIMEType string
	Text     string
	Blob     []byte
	Meta     Meta
}

type resourceContentsWire struct {
	URI      string  `json:"uri"`
	MIMEType string  `json:"mimeType,omitempty"`
	Text     *string `json:"text,omitzero"`
	Blob     []byte  `json:"blob,omitzero"`
	Meta     Meta    `json:"_meta,omitempty"`
}

func (c *ResourceContents) MarshalJSON() ([]byte, error) {
	w := resourceContentsWire{URI: c.URI, MIMEType: c.MIMEType, Meta: c.Meta}
	if c.Blob != nil {
		w.Blob = c.Blob
	} else {
		w.Text = &c.Text
	}
	return marshal(&w)
}

func (c *ResourceContents) UnmarshalJSON(b []byte) error {
	var w resourceContentsWire
	if err := unmarshalValue(b, &w); err != nil {
		return err
	}
	*c = ResourceContents{URI: w.URI, MIMEType: w.MIMEType, Blob: w.Blob, Meta: w.Meta}
	if w.Text != nil {
		c.Text = *w.Text
	}
	return nil
}

// ReadResourceParams are the params of resources/read.
type ReadResourceParams struct {
	URI  string `json:"uri"`
	Meta Meta   `json:"_meta,omitempty"`
}

// ReadResourceResult is the result of resources/read.
type ReadResourceResult struct {
	Contents []*ResourceContents `json:"contents"`
	Meta     Meta                `json:"_meta,omitempty"`
}

// ListResourcesResult is the result of resources/list.
type ListResourcesResult struct {
	Resources  []*Resource `json:"resources"`
	NextCursor string      `json:"nextCursor,omitempty"`
}

// ListResourceTemplatesResult is the result of resources/templates/list.
type ListResourceTemplatesResult struct {
	ResourceTemplates []*ResourceTemplate `json:"resourceTemplates"`
	NextCursor        string              `json:"nextCursor,omitempty"`
}

// ResourceHandler reads a resource. Return ResourceNotFoundError(uri) for
// a resource that does not exist.
type ResourceHandler func(ctx context.Context, req *ReadResourceRequest) (*ReadResourceResult, error)

// ReadResourceRequest is a resources/read request with its decoded params.
type ReadResourceRequest struct {
	*Request
	Params *ReadResourceParams
}

var errResourceNotFound = errors.New("resource not found")

// ResourceNotFoundError returns the error a ResourceHandler returns for a
// resource that does not exist.
func ResourceNotFoundError(uri string) error {
	return fmt.Errorf("%w: %s", errResourceNotFound, uri)
}

type serverResource struct {
	resource *Resource
	handler  ResourceHandler
}

type serverTemplate struct {
	template *ResourceTemplate
	parsed   *uritemplate.Template
	handler  ResourceHandler
}

// AddResource registers a resource. A resource with the same URI is
// replaced.
func (s *Server) AddResource(r *Resource, h ResourceHandler) error {
	if r == nil || h == nil || r.URI == "" || r.Name == "" {
		return errors.New("mcp: AddResource needs a resource with a URI and a name, and a handler")
	}
	s.resources.update([]*serverResource{{resource: r, handler: h}}, nil)
	s.changed(notificationResourcesListChanged)
	return nil
}

// AddResourceTemplate registers a resource template; reads of URIs that
// match it and no registered resource go to h.
func (s *Server) AddResourceTemplate(t *ResourceTemplate, h ResourceHandler) error {
	if t == nil || h == nil || t.URITemplate == "" || t.Name == "" {
		return errors.New("mcp: AddResourceTemplate needs a template with a URI template and a name, and a handler")
	}
	parsed, err := uritemplate.New(t.URITemplate)
	if err != nil {
		return fmt.Errorf("mcp: invalid URI template %q: %w", t.URITemplate, err)
	}
	s.templates.update([]*serverTemplate{{template: t, parsed: parsed, handler: h}}, nil)
	s.changed(notificationResourcesListChanged)
	return nil
}

// UpdateResources removes the resources with the URIs in remove and adds
// others with handler h, as one change: one list_changed and one rebuild
// of the registry, however many resources (adding thousands one by one
// rebuilds it thousands of times). An invalid resource fails the whole
// update, and nothing changes.
func (s *Server) UpdateResources(remove []string, add []*Resource, h ResourceHandler) error {
	srs := make([]*serverResource, 0, len(add))
	for _, r := range add {
		if r == nil || h == nil || r.URI == "" || r.Name == "" {
			return errors.New("mcp: UpdateResources needs resources with a URI and a name, and a handler")
		}
		srs = append(srs, &serverResource{resource: r, handler: h})
	}
	if s.resources.update(srs, remove) {
		s.changed(notificationResourcesListChanged)
	}
	return nil
}

// UpdateResourceTemplates is UpdateResources for templates. A template
// that does not parse is skipped and reported in the error (joined with
// the others); the rest are applied.
func (s *Server) UpdateResourceTemplates(remove []string, add []*ResourceTemplate, h ResourceHandler) error {
	sts := make([]*serverTemplate, 0, len(add))
	var errs []error
	for _, t := range add {
		if t == nil || h == nil || t.URITemplate == "" || t.Name == "" {
			errs = append(errs, errors.New("mcp: UpdateResourceTemplates needs templates with a URI template and a name, and a handler"))
			continue
		}
		parsed, err := uritemplate.New(t.URITemplate)
		if err != nil {
			errs = append(errs, fmt.Errorf("mcp: invalid URI template %q: %w", t.URITemplate, err))
			continue
		}
		sts = append(sts, &serverTemplate{template: t, parsed: parsed, handler: h})
	}
	if s.templates.update(sts, remove) {
		s.changed(notificationResourcesListChanged)
	}
	return errors.Join(errs...)
}

// RemoveResources unregisters resources by URI.
func (s *Server) RemoveResources(uris ...string) {
	if s.resources.update(nil, uris) {
		s.changed(notificationResourcesListChanged)
	}
}

// RemoveResourceTemplates unregisters templates by their URI template.
func (s *Server) RemoveResourceTemplates(templates ...string) {
	if s.templates.update(nil, templates) {
		s.changed(notificationResourcesListChanged)
	}
}

func (s *Server) listResources(ctx context.Context, req *Request) (any, error) {
	var p PaginatedParams
	if err := unmarshalParams(req.RawParams, &p); err != nil {
		return nil, err
	}
	items, next, err := s.resources.page(p.Cursor, s.opts.PageSize)
	if err != nil {
		return nil, err
	}
	if s.opts.Filter != nil {
		items = slices.DeleteFunc(slices.Clone(items), func(r *serverResource) bool { return !s.visible(ctx, KindResource, r.resource.URI) })
	}
	res := &ListResourcesResult{Resources: make([]*Resource, len(items)), NextCursor: next}
	for i, r := range items {
		res.Resources[i] = resourceForRevision(r.resource, req.rev)
	}
	return res, nil
}

func (s *Server) listResourceTemplates(ctx context.Context, req *Request) (any, error) {
	var p PaginatedParams
	if err := unmarshalParams(req.RawParams, &p); err != nil {
		return nil, err
	}
	items, next, err := s.templates.page(p.Cursor, s.opts.PageSize)
	if err != nil {
		return nil, err
	}
	if s.opts.Filter != nil {
		items = slices.DeleteFunc(slices.Clone(items), func(t *serverTemplate) bool {
			return !s.visible(ctx, KindResourceTemplate, t.template.URITemplate)
		})
	}
	res := &ListResourceTemplatesResult{ResourceTemplates: make([]*ResourceTemplate, len(items)), NextCursor: next}
	for i, t := range items {
		c := *t.template
		if !req.rev.titles() {
			c.Title = ""
		}
		if !req.rev.icons() {
			c.Icons = nil
		}
		res.ResourceTemplates[i] = &c
	}
	return res, nil
}

func resourceForRevision(r *Resource, rev revision) *Resource {
	if rev.icons() {
		return r
	}
	c := *r
	c.Icons = nil
	if !rev.titles() {
		c.Title = ""
	}
	return &c
}

func (s *Server) readResource(ctx context.Context, req *Request) (any, error) {
	var p ReadResourceParams
	if err := unmarshalParams(req.RawParams, &p); err != nil {
		return nil, err
	}
	if p.URI == "" {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: uri is required; call resources/list to see the available resources")
	}
	h := s.resourceHandler(p.URI)
	if h == nil || !s.visible(ctx, KindResource, p.URI) {
		return nil, notFound(p.URI)
	}
	res, err := h(ctx, &ReadResourceRequest{Request: req, Params: &p})
	if errors.Is(err, errResourceNotFound) {
		return nil, notFound(p.URI)
	}
	if err != nil {
		return nil, err
	}
	if res == nil {
		res = &ReadResourceResult{}
	}
	for _, c := range res.Contents {
		if c.URI == "" {
			c.URI = p.URI
		}
	}
	return res, nil
}

func (s *Server) resourceHandler(uri string) ResourceHandler {
	if r, ok := s.resources.get(uri); ok {
		return r.handler
	}
	for _, t := range s.templates.load().sorted {
		if t.parsed.Match(uri) != nil {
			return t.handler
		}
	}
	return s.opts.ResourceFallback
}

func notFound(uri string) error {
	return jsonrpc.Errorf(CodeResourceNotFound, "Resource not found: %s; call resources/list to see the available resources", truncateString(uri, 256)).WithData(map[string]string{"uri": uri})
}

func (s *Server) subscribe(ctx context.Context, req *Request) (any, error) {
	var p ReadResourceParams
	if err := unmarshalParams(req.RawParams, &p); err != nil {
		return nil, err
	}
	if p.URI == "" {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: uri is required")
	}
	if !s.visible(ctx, KindResource, p.URI) {
		return nil, notFound(p.URI)
	}
	ss := req.Session
	ss.mu.Lock()
	if _, ok := ss.subs[p.URI]; !ok && len(ss.subs) >= s.opts.MaxSubscriptions {
		ss.mu.Unlock()
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: this session already holds %d resource subscriptions, the most allowed; unsubscribe from one (resources/unsubscribe) before subscribing to %q", s.opts.MaxSubscriptions, truncateString(p.URI, 128))
	}
	ss.subs[p.URI] = struct{}{}
	ss.mu.Unlock()
	ss.stateChanged()
	return emptyResult{}, nil
}

// Subscribed reports whether any session or open listen request is
// subscribed to uri: what a proxy subscribed upstream on its clients'
// behalf can drop once nobody is.
func (s *Server) Subscribed(uri string) bool {
	for _, ss := range s.Sessions() {
		ss.mu.Lock()
		_, ok := ss.subs[uri]
		ss.mu.Unlock()
		if ok {
			return true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for l := range s.listeners {
		if l.uris[uri] {
			return true
		}
	}
	return false
}

func (s *Server) unsubscribe(_ context.Context, req *Request) (any, error) {
	var p ReadResourceParams
	if err := unmarshalParams(req.RawParams, &p); err != nil {
		return nil, err
	}
	ss := req.Session
	ss.mu.Lock()
	delete(ss.subs, p.URI)
	ss.mu.Unlock()
	ss.stateChanged()
	return emptyResult{}, nil
}

// ResourceUpdated tells every session subscribed to uri that the resource
// changed.
func (s *Server) ResourceUpdated(uri string) {
	params := jsontext.Value(fmt.Appendf(nil, `{"uri":%s}`, quote(uri)))
	for _, ss := range s.Sessions() {
		ss.mu.Lock()
		_, ok := ss.subs[uri]
		ss.mu.Unlock()
		if ok && sessionState(ss.state.Load()) == stateOperating {
			ss.notify(ss.out, notificationResourceUpdated, params)
		}
	}
	s.notifyListeners(notificationResourceUpdated, uri)
	s.mu.Lock()
	watch := s.watch
	s.mu.Unlock()
	if watch != nil {
		watch(notificationResourceUpdated, uri)
	}
}

// ResourceUpdated tells this session alone that the resource at uri
// changed, if it subscribed to it: for a resource whose content belongs
// to one session (a gateway's process per session, say), whose updates
// are nobody else's business. [Server.ResourceUpdated] tells every
// subscriber.
func (ss *ServerSession) ResourceUpdated(uri string) {
	ss.mu.Lock()
	_, ok := ss.subs[uri]
	ss.mu.Unlock()
	if ok && sessionState(ss.state.Load()) == stateOperating {
		ss.notify(ss.out, notificationResourceUpdated, jsontext.Value(fmt.Appendf(nil, `{"uri":%s}`, quote(uri))))
	}
}

func quote(s string) []byte {
	b, _ := jsontext.AppendQuote(nil, s)
	return b
}

// ChangeNotification returns the notification that tells the session of
// a change that arose elsewhere (see [Server.WatchChanges]), or nil when
// the session is not to hear of it: a list change if it was told the list
// can change, a resource update if it is subscribed to the resource. The
// transport sends it.
func (ss *ServerSession) ChangeNotification(method, uri string) []byte {
	if sessionState(ss.state.Load()) != stateOperating {
		return nil
	}
	ss.mu.Lock()
	caps := ss.caps
	_, subscribed := ss.subs[uri]
	ss.mu.Unlock()
	var params []byte
	switch method {
	case notificationToolsListChanged:
		if caps.Tools == nil || !caps.Tools.ListChanged {
			return nil
		}
	case notificationPromptsListChanged:
		if caps.Prompts == nil || !caps.Prompts.ListChanged {
			return nil
		}
	case notificationResourcesListChanged:
		if caps.Resources == nil || !caps.Resources.ListChanged {
			return nil
		}
	case notificationResourceUpdated:
		if !subscribed {
			return nil
		}
		params = fmt.Appendf(nil, `{"uri":%s}`, quote(uri))
	default:
		return nil
	}
	return jsonrpc.AppendNotification(nil, method, params)
}
