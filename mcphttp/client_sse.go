package mcphttp

import (
	"bufio"
	"bytes"
	"io"
	"strconv"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// sseEvent is one server-sent event as the client transport reads it.
type sseEvent struct {
	event    string // the event type; "" means "message"
	data     []byte // the data lines joined with "\n"
	hasData  bool   // at least one data line, perhaps empty
	id       string
	hasID    bool
	retryMS  int64
	hasRetry bool
	// tooLarge is set, and data is nil, when the data exceeded the
	// reader's limit; it keeps the ends of the data so that the id of an
	// oversized response can still be read.
	tooLarge *jsonrpc.TooLargeError
}

const (
	// sseLineSlack is what a line may hold besides the data it carries
	// ("data: " and the like), so that a message of exactly the limit
	// still fits on one line.
	sseLineSlack  = 256
	ssePrefixKeep = 64 << 10
	sseSuffixKeep = 512
)

// sseReader parses a text/event-stream as the WHATWG HTML standard
// describes it: lines end with CRLF, LF or CR; a blank line ends an event;
// lines starting with ':' are comments; a last event cut off by the end of
// the stream is discarded. Memory is bounded: an event whose data exceeds
// max is reported with only its ends kept, and reading goes on.
type sseReader struct {
	r       *bufio.Reader
	max     int
	lineMax int
	started bool // the byte-order mark has been looked for
	skipLF  bool // the last line ended with CR: a following LF is part of it

	line []byte // the current line, at most lineMax bytes
	over bool   // the current line was longer than lineMax
	tail []byte // the last bytes of an over-long line
}

func newSSEReader(r io.Reader, max int) *sseReader {
	if max <= 0 {
		max = jsonrpc.DefaultMaxMessageSize
	}
	return &sseReader{r: bufio.NewReaderSize(r, 32<<10), max: max, lineMax: max + sseLineSlack}
}

// next returns the next event that had any field, or the error that ended
// the stream (io.EOF when it ended cleanly).
func (s *sseReader) next() (*sseEvent, error) {
	ev := &sseEvent{}
	seen := false
	// data holds the data lines, each followed by "\n", until they pass
	// the limit; from then on only the head (for PeekID) and the tail
	// (for PeekTrailingID) are kept.
	var data, tail []byte
	dataSize, tooBig := 0, false
	// gap is set once a cut line's middle is missing from data: after it
	// data no longer grows, or it would not be the head of the event.
	gap := false
	keep := func(b []byte) {
		if !gap && len(data) < ssePrefixKeep {
			data = append(data, b[:min(len(b), ssePrefixKeep-len(data))]...)
		}
		tail = sseKeepTail(tail, b)
	}
	for {
		line, size, err := s.readLine()
		if err != nil {
			return nil, err
		}
		if size == 0 {
			if !seen {
				continue
			}
			if tooBig {
				ev.tooLarge = &jsonrpc.TooLargeError{Limit: s.max, Size: dataSize - 1, Prefix: data, Suffix: tail}
			} else if ev.hasData {
				ev.data = data[:len(data)-1]
			}
			if cap(s.line) > 1<<20 {
				s.line = nil // do not hold a large line's buffer for the life of the stream
			}
			return ev, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			seen, ev.hasData = true, true
			vsize := len(value) + size - len(line) // the value's true length
			switch {
			case !tooBig && dataSize+vsize <= s.max:
				data = append(data, value...)
				data = append(data, '\n')
			default:
				if !tooBig {
					tooBig = true
					// What came before is whole, its separator included.
					tail = sseKeepTail(nil, data)
					data = data[:min(len(data), ssePrefixKeep)]
				} else {
					keep([]byte{'\n'})
				}
				if s.over {
					// The line was cut: its head is in value, its end in
					// s.tail.
					if !gap && len(data) < ssePrefixKeep {
						data = append(data, value[:min(len(value), ssePrefixKeep-len(data))]...)
					}
					gap = true
					// s.tail ends the whole line: when the line is short
					// enough, it still starts with the field name, which is
					// not data.
					t := s.tail
					if start, valueStart := size-len(t), len(line)-len(value); start < valueStart {
						t = t[valueStart-start:]
					}
					tail = sseKeepTail(tail, t)
				} else {
					keep(value)
				}
			}
			dataSize += vsize + 1
		case "event":
			if !s.over {
				seen, ev.event = true, string(value)
			}
		case "id":
			if !s.over && bytes.IndexByte(value, 0) < 0 {
				seen, ev.id, ev.hasID = true, string(value), true
			}
		case "retry":
			if n, ok := parseRetry(value); ok && !s.over {
				seen, ev.retryMS, ev.hasRetry = true, n, true
			}
		}
	}
}

// parseRetry accepts only ASCII digits, as the standard does.
func parseRetry(v []byte) (int64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil
}

// readLine returns the next line without its terminator (its first
// lineMax bytes when longer, with s.over set and its end in s.tail) and
// its true length. A line cut off by the end of the stream is dropped.
func (s *sseReader) readLine() ([]byte, int, error) {
	if !s.started {
		s.started = true
		if b, _ := s.r.Peek(3); bytes.Equal(b, []byte("\xef\xbb\xbf")) {
			s.r.Discard(3)
		}
	}
	if s.skipLF {
		s.skipLF = false
		if b, err := s.r.Peek(1); err == nil && b[0] == '\n' {
			s.r.Discard(1)
		}
	}
	s.line, s.over, s.tail = s.line[:0], false, s.tail[:0]
	size := 0
	for {
		if _, err := s.r.Peek(1); err != nil {
			if err == io.EOF && size > 0 {
				err = io.ErrUnexpectedEOF
			}
			return nil, 0, err
		}
		buf, _ := s.r.Peek(s.r.Buffered())
		i := bytes.IndexAny(buf, "\r\n")
		chunk := buf
		if i >= 0 {
			chunk = buf[:i]
		}
		s.add(chunk)
		size += len(chunk)
		if i >= 0 {
			s.skipLF = buf[i] == '\r'
			s.r.Discard(i + 1)
			return s.line, size, nil
		}
		s.r.Discard(len(buf))
	}
}

func (s *sseReader) add(chunk []byte) {
	if !s.over {
		room := s.lineMax - len(s.line)
		if len(chunk) <= room {
			s.line = append(s.line, chunk...)
			return
		}
		s.line = append(s.line, chunk[:room]...)
		s.over = true
		s.tail = sseKeepTail(s.tail[:0], s.line)
		chunk = chunk[room:]
	}
	s.tail = sseKeepTail(s.tail, chunk)
}

// sseKeepTail appends b to tail and keeps the last sseSuffixKeep bytes.
func sseKeepTail(tail, b []byte) []byte {
	if len(b) >= sseSuffixKeep {
		return append(tail[:0], b[len(b)-sseSuffixKeep:]...)
	}
	tail = append(tail, b...)
	if len(tail) > sseSuffixKeep {
		tail = append(tail[:0], tail[len(tail)-sseSuffixKeep:]...)
	}
	return tail
}
