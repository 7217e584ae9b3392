package mcphttp

import (
	"sync"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// inbox holds the messages read from every stream until ReadMessage
// takes them. It is unbounded so that no stream, and no POST, ever waits
// on the reader: the reader may itself be waiting on a POST.
type inbox struct {
	mu    sync.Mutex
	items []inboxItem
	end   error
	wake  chan struct{}
}

type inboxItem struct {
	data []byte
	err  error
}

func newInbox() *inbox { return &inbox{wake: make(chan struct{}, 1)} }

func (b *inbox) push(data []byte, err error) {
	b.mu.Lock()
	if b.end == nil {
		b.items = append(b.items, inboxItem{data, err})
	}
	b.mu.Unlock()
	b.signal()
}

// finish makes ReadMessage return err once the messages before it are
// read; the first call wins.
func (b *inbox) finish(err error) {
	b.mu.Lock()
	if b.end == nil {
		b.end = err
	}
	b.mu.Unlock()
	b.signal()
}

func (b *inbox) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

func (b *inbox) pop() ([]byte, error) {
	for {
		b.mu.Lock()
		if len(b.items) > 0 {
			it := b.items[0]
			b.items[0] = inboxItem{}
			b.items = b.items[1:]
			b.mu.Unlock()
			return it.data, it.err
		}
		end := b.end
		b.mu.Unlock()
		if end != nil {
			return nil, end
		}
		<-b.wake
	}
}

// failIDs answers each request of ids with an error response, so that no
// call waits for an answer that will not come.
func (c *clientConn) failIDs(ids []jsonrpc.ID, why string) {
	for _, id := range ids {
		c.logger.Debug("mcphttp: a request will get no answer", "id", id.String(), "why", why)
		c.in.push(jsonrpc.AppendError(nil, id, &jsonrpc.Error{Code: codeTransportError, Message: why}), nil)
	}
}
