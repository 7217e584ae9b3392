package mcphttp

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// EventStore keeps the SSE events of each session's streams so that a
// client whose connection broke can resume with Last-Event-ID. Keys are
// scoped by the HTTP layer to the principal and the session, so one
// client can never replay another's events.
type EventStore interface {
	// Append stores the event of stream numbered seq and returns nothing
	// but an error; ids are formed by the handler.
	Append(key, stream string, seq int, data []byte) error
	// Replay calls fn for the events of stream after seq, in order.
	Replay(key, stream string, after int, fn func(seq int, data []byte) error) error
	// Forget drops every event of a session.
	Forget(key string)
}

// ErrEventsGone is returned by Replay when events after the requested one
// were dropped to stay within the store's bounds.
var ErrEventsGone = errors.New("mcphttp: the events to replay are no longer stored")

// MemoryEventStore is an EventStore bounded per session in events and
// bytes; the oldest events go first.
type MemoryEventStore struct {
	maxEvents int
	maxBytes  int
	mu        sync.Mutex
	sessions  map[string]*sessionEvents
}

type sessionEvents struct {
	events []storedEvent
	bytes  int
	// dropped is the highest seq dropped per stream, to tell a client that
	// asks for them that they are gone rather than replay a gap.
	dropped map[string]int
}

type storedEvent struct {
	stream string
	seq    int
	data   []byte
}

// NewMemoryEventStore returns a store keeping at most maxEvents events and
// maxBytes bytes per session (0 means 1000 events and 8 MiB).
func NewMemoryEventStore(maxEvents, maxBytes int) *MemoryEventStore {
	if maxEvents <= 0 {
		maxEvents = 1000
	}
	if maxBytes <= 0 {
		maxBytes = 8 << 20
	}
	return &MemoryEventStore{maxEvents: maxEvents, maxBytes: maxBytes, sessions: map[string]*sessionEvents{}}
}

func (m *MemoryEventStore) Append(key, stream string, seq int, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	se := m.sessions[key]
	if se == nil {
		se = &sessionEvents{dropped: map[string]int{}}
		m.sessions[key] = se
	}
	se.events = append(se.events, storedEvent{stream: stream, seq: seq, data: append([]byte(nil), data...)})
	se.bytes += len(data)
	for len(se.events) > m.maxEvents || se.bytes > m.maxBytes {
		old := se.events[0]
		se.events = se.events[1:]
		se.bytes -= len(old.data)
		se.dropped[old.stream] = max(se.dropped[old.stream], old.seq)
	}
	return nil
}

func (m *MemoryEventStore) Replay(key, stream string, after int, fn func(seq int, data []byte) error) error {
	m.mu.Lock()
	se := m.sessions[key]
	var out []storedEvent
	if se != nil {
		if se.dropped[stream] > after {
			m.mu.Unlock()
			return ErrEventsGone
		}
		for _, e := range se.events {
			if e.stream == stream && e.seq > after {
				out = append(out, e)
			}
		}
	}
	m.mu.Unlock()
	for _, e := range out {
		if err := fn(e.seq, e.data); err != nil {
			return err
		}
	}
	return nil
}

func (m *MemoryEventStore) Forget(key string) {
	m.mu.Lock()
	delete(m.sessions, key)
	m.mu.Unlock()
}

// Event ids name their stream and their place in it: "<stream>-<seq>".
// Stream names are unique within a session, so ids are too.

func eventID(stream string, seq int) string { return stream + "-" + strconv.Itoa(seq) }

func parseEventID(id string) (stream string, seq int, err error) {
	i := strings.LastIndexByte(id, '-')
	if i <= 0 {
		return "", 0, fmt.Errorf("malformed event id %q", id)
	}
	seq, err = strconv.Atoi(id[i+1:])
	if err != nil || seq < 0 {
		return "", 0, fmt.Errorf("malformed event id %q", id)
	}
	return id[:i], seq, nil
}
