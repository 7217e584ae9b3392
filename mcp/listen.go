package mcp

import (
	"context"
	"slices"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// subscriptions/listen (2026-07-28) replaces the GET stream and
// resources/subscribe: a long-running request whose response stream
// carries the change notifications the client asked for, each tagged with
// the listen request's id, until the client closes it.

const (
	methodSubscriptionsListen      = "subscriptions/listen"
	notificationSubscriptionsAcked = "notifications/subscriptions/acknowledged"
)

// SubscriptionFilter says which notifications a listen stream carries.
type SubscriptionFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitzero"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitzero"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitzero"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
	// TaskIDs asks for notifications/tasks about these tasks (the tasks
	// extension).
	TaskIDs []string `json:"taskIds,omitempty"`
}

// listener is one open subscriptions/listen request.
type listener struct {
	req    *Request
	filter SubscriptionFilter
	uris   map[string]bool
	tasks  map[string]bool
	// mu orders the acknowledgement before every notification.
	mu sync.Mutex
}

func (s *Server) listen(ctx context.Context, req *Request) (any, error) {
	var p struct {
		Notifications *SubscriptionFilter `json:"notifications"`
	}
	if err := unmarshalParams(req.RawParams, &p); err != nil {
		return nil, err
	}
	var want SubscriptionFilter
	if p.Notifications != nil {
		want = *p.Notifications
	}
	// The server honours what it declares; the acknowledgement says so.
	caps := s.capabilities(rev20260728)
	var got SubscriptionFilter
	got.ToolsListChanged = want.ToolsListChanged && caps.Tools != nil && caps.Tools.ListChanged
	got.PromptsListChanged = want.PromptsListChanged && caps.Prompts != nil && caps.Prompts.ListChanged
	got.ResourcesListChanged = want.ResourcesListChanged && caps.Resources != nil && caps.Resources.ListChanged
	if caps.Resources != nil && caps.Resources.Subscribe {
		// What the Filter hides is left out of the acknowledgement, as
		// if unknown, like another caller's tasks below.
		for _, uri := range want.ResourceSubscriptions {
			if s.visible(ctx, KindResource, uri) && len(got.ResourceSubscriptions) < s.opts.MaxSubscriptions {
				got.ResourceSubscriptions = append(got.ResourceSubscriptions, uri)
			}
		}
	}
	if len(want.TaskIDs) > 0 {
		if _, ok := req.perRequest.caps.Extensions[ExtensionTasks]; !ok {
			return nil, missingTasksExtension(req.Method + " with notifications.taskIds")
		}
		// Only the caller's own tasks are accepted; the others are left
		// out of the acknowledgement, as if unknown.
		for _, id := range want.TaskIDs {
			if s.tasks.lookup(id, req, PrincipalFrom(ctx)) != nil && !slices.Contains(got.TaskIDs, id) {
				got.TaskIDs = append(got.TaskIDs, id)
			}
		}
	}
	l := &listener{req: req, filter: got, uris: map[string]bool{}, tasks: map[string]bool{}}
	for _, id := range got.TaskIDs {
		l.tasks[id] = true
	}
	for _, u := range got.ResourceSubscriptions {
		l.uris[u] = true
	}
	ack, err := marshal(&struct {
		Notifications SubscriptionFilter `json:"notifications"`
		Meta          map[string]any     `json:"_meta"`
	}{got, map[string]any{MetaSubscriptionID: jsontext.Value(req.ID.Raw())}})
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	s.mu.Lock()
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	werr := req.w.WriteMessage(jsonrpc.AppendNotification(nil, notificationSubscriptionsAcked, ack))
	l.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
	}()
	if werr != nil {
		return nil, werr
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-req.Session.Done():
	case <-req.Session.draining:
	}
	// A graceful end: the result, tagged like the notifications.
	return &struct {
		Meta map[string]any `json:"_meta"`
	}{map[string]any{MetaSubscriptionID: jsontext.Value(req.ID.Raw())}}, nil
}

// send writes a notification on the listen stream, tagged with its id.
func (l *listener) send(method string, extra string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.req.done.Load() {
		return
	}
	p := []byte(`{`)
	if extra != "" {
		p = append(p, extra...)
		p = append(p, ',')
	}
	p = append(p, `"_meta":{"`+MetaSubscriptionID+`":`...)
	p = append(p, l.req.ID.Raw()...)
	p = append(p, `}}`...)
	l.req.w.WriteMessage(jsonrpc.AppendNotification(nil, method, p))
}

// notifyListeners fans a change out to the listen streams that asked.
func (s *Server) notifyListeners(method, uri string) {
	s.mu.Lock()
	ls := make([]*listener, 0, len(s.listeners))
	for l := range s.listeners {
		ls = append(ls, l)
	}
	s.mu.Unlock()
	for _, l := range ls {
		switch {
		case method == notificationToolsListChanged && l.filter.ToolsListChanged,
			method == notificationPromptsListChanged && l.filter.PromptsListChanged,
			method == notificationResourcesListChanged && l.filter.ResourcesListChanged:
			l.send(method, "")
		case method == notificationResourceUpdated && l.uris[uri]:
			l.send(method, `"uri":`+string(quote(uri)))
		}
	}
}
