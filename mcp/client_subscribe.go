package mcp

import (
	"context"
	"fmt"
	"slices"

	"github.com/go-json-experiment/json/jsontext"
)

// In 2026-07-28 resources/subscribe is gone: a resource subscription is
// a subscriptions/listen request that names the resource and stays open
// until Unsubscribe, so Subscribe and Unsubscribe keep one such request
// per resource. Its notifications/resources/updated reach
// ClientOptions.ResourceUpdatedHandler as a session-era server's do.

// perRequestSub is one open subscription request.
type perRequestSub struct {
	cancel context.CancelFunc
	done   chan struct{} // closed when the request has ended
}

func (cs *ClientSession) subscribePerRequest(ctx context.Context, uri string) error {
	if err := cs.require(methodResourcesSubscribe); err != nil {
		return err
	}
	cs.mu.Lock()
	if _, ok := cs.subs[uri]; ok {
		cs.mu.Unlock()
		return nil
	}
	// No RequestTimeout: a subscription has no natural end.
	lctx, cancel := context.WithDeadline(context.WithoutCancel(cs.ctx), farFuture)
	sub := &perRequestSub{cancel: cancel, done: make(chan struct{})}
	if cs.subs == nil {
		cs.subs = map[string]*perRequestSub{}
	}
	cs.subs[uri] = sub
	cs.mu.Unlock()
	acked := make(chan jsontext.Value, 1)
	ended := make(chan error, 1)
	go func() {
		defer close(sub.done)
		defer cancel()
		err := cs.call(lctx, methodSubscriptionsListen, &struct {
			Notifications SubscriptionFilter `json:"notifications"`
		}{SubscriptionFilter{ResourceSubscriptions: []string{uri}}}, nil, callOptions{listenAck: acked})
		cs.mu.Lock()
		if cs.subs[uri] == sub {
			delete(cs.subs, uri)
		}
		cs.mu.Unlock()
		ended <- err
	}()
	select {
	case ack := <-acked:
		var p struct {
			Notifications SubscriptionFilter `json:"notifications"`
		}
		if unmarshalValue(ack, &p) == nil && !slices.Contains(p.Notifications.ResourceSubscriptions, uri) {
			cs.Unsubscribe(context.WithoutCancel(ctx), uri)
			return fmt.Errorf("%w: the server did not accept a subscription to %s", ErrNotSupported, uri)
		}
		return nil
	case err := <-ended:
		if err == nil {
			err = fmt.Errorf("the server ended it at once")
		}
		return fmt.Errorf("mcp: subscribing to %s: %w", uri, err)
	case <-ctx.Done():
		cs.Unsubscribe(context.WithoutCancel(ctx), uri)
		return fmt.Errorf("mcp: subscribing to %s: %w", uri, ctx.Err())
	}
}

// unsubscribePerRequest ends the subscription request of uri, if any (a
// cancellation, which the server takes as the end of it).
func (cs *ClientSession) unsubscribePerRequest(uri string) {
	cs.mu.Lock()
	sub := cs.subs[uri]
	delete(cs.subs, uri)
	cs.mu.Unlock()
	if sub != nil {
		sub.cancel()
	}
}

// listenAcked hands an acknowledgement to the Subscribe that waits for
// it; false if none does (the session's own listen request's, then).
func (cs *ClientSession) listenAcked(params []byte) bool {
	var p struct {
		Meta map[string]jsontext.Value `json:"_meta"`
	}
	if unmarshalValue(params, &p) != nil {
		return false
	}
	id, ok := p.Meta[MetaSubscriptionID]
	if !ok {
		return false
	}
	cs.mu.Lock()
	ch := cs.listenAcks[string(id)]
	delete(cs.listenAcks, string(id))
	cs.mu.Unlock()
	if ch == nil {
		return false
	}
	ch <- params
	return true
}
