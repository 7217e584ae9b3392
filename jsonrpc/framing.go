package jsonrpc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// DefaultMaxMessageSize is the largest message a LineReader accepts unless
// told otherwise.
const DefaultMaxMessageSize = 4 << 20

// TooLargeError reports a line longer than the reader's limit. The line has
// been consumed, so the next Read starts at the following line.
type TooLargeError struct {
	Limit int
	// Size is the length of the line.
	Size int
	// Prefix holds the first bytes of the line, from which the id of the
	// oversized request can often still be read (see PeekID).
	Prefix []byte
	// Suffix holds the last bytes of the line, without its terminator:
	// encoders that write the id after a large result (as the TypeScript
	// SDK does) leave it there (see PeekTrailingID).
	Suffix []byte
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("message of %d bytes exceeds the %d-byte limit", e.Size, e.Limit)
}

// LineReader reads newline-delimited messages.
type LineReader struct {
	r   *bufio.Reader
	max int
}

// NewLineReader returns a reader of lines of at most max bytes (0 means
// DefaultMaxMessageSize).
func NewLineReader(r io.Reader, max int) *LineReader {
	if max <= 0 {
		max = DefaultMaxMessageSize
	}
	return &LineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

const prefixKeep = 64 << 10

// LineWaiting reports whether a whole line has been read from the
// underlying reader and not yet returned, so that Read returns without
// waiting for input.
func (lr *LineReader) LineWaiting() bool {
	n := lr.r.Buffered()
	if n == 0 {
		return false
	}
	b, _ := lr.r.Peek(n)
	return bytes.IndexByte(b, '\n') >= 0
}

// Read returns the next line that is not blank, without its line
// terminator, in a slice the caller owns. A line over the limit is skipped
// and reported as a *TooLargeError; reading can go on after it. At the end
// of the stream Read returns io.EOF (a last line without a newline is still
// returned first).
func (lr *LineReader) Read() ([]byte, error) {
	for {
		line, err := lr.readLine()
		if err != nil {
			return nil, err
		}
		if len(trimSpace(line)) > 0 {
			return line, nil
		}
	}
}

func (lr *LineReader) readLine() ([]byte, error) {
	frag, err := lr.r.ReadSlice('\n')
	if err == nil {
		if len(frag)-1 > lr.max {
			return nil, &TooLargeError{Limit: lr.max, Size: len(frag) - 1, Prefix: clone(frag[:min(len(frag), prefixKeep)]), Suffix: keepTail(nil, frag[:len(frag)-1])}
		}
		return clone(frag[:len(frag)-1]), nil
	}
	if err == io.EOF {
		if len(frag) == 0 {
			return nil, io.EOF
		}
		if len(frag) > lr.max {
			return nil, &TooLargeError{Limit: lr.max, Size: len(frag), Prefix: clone(frag[:min(len(frag), prefixKeep)]), Suffix: keepTail(nil, frag)}
		}
		return clone(frag), nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	// A long line: gather it, but stop keeping bytes past the limit.
	buf := append([]byte(nil), frag...)
	size := len(frag)
	tail := keepTail(nil, frag)
	for {
		frag, err = lr.r.ReadSlice('\n')
		size += len(frag)
		if err == nil {
			tail = keepTail(tail, frag[:len(frag)-1])
		} else {
			tail = keepTail(tail, frag)
		}
		if size <= lr.max+1 {
			buf = append(buf, frag...)
		}
		switch {
		case err == nil:
			if size-1 > lr.max {
				return nil, &TooLargeError{Limit: lr.max, Size: size - 1, Prefix: buf[:min(len(buf), prefixKeep)], Suffix: tail}
			}
			return buf[:len(buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF:
			if size > lr.max {
				return nil, &TooLargeError{Limit: lr.max, Size: size, Prefix: buf[:min(len(buf), prefixKeep)], Suffix: tail}
			}
			return buf, nil
		default:
			return nil, err
		}
	}
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

const suffixKeep = 512

// keepTail appends b to tail and keeps the last suffixKeep bytes.
func keepTail(tail, b []byte) []byte {
	if len(b) >= suffixKeep {
		return append(tail[:0], b[len(b)-suffixKeep:]...)
	}
	tail = append(tail, b...)
	if len(tail) > suffixKeep {
		tail = append(tail[:0], tail[len(tail)-suffixKeep:]...)
	}
	return tail
}

// LineWriter writes newline-delimited messages. Write may be called from
// many goroutines; each message is written whole. Writers that arrive while
// another is writing are flushed together, and so are messages written
// while the writer is held (see Hold), so a burst of replies costs one
// system call rather than one each.
type LineWriter struct {
	mu      sync.Mutex
	w       *bufio.Writer
	waiting atomic.Int32
	held    atomic.Int32
	err     error
}

// Hold tells the writer that more messages are on their way soon (the
// replies to a pipelined burst of requests whose lines are already read,
// say): until the matching Release, writes stay in the buffer. Release
// flushes what the last hold kept back, so a hold delays a message only
// as long as it is held; it must not be kept across anything slow.
func (lw *LineWriter) Hold() { lw.held.Add(1) }

// Release ends a Hold; the last one flushes what was kept back.
func (lw *LineWriter) Release() error {
	if lw.held.Add(-1) != 0 {
		return nil
	}
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.err == nil && lw.w.Buffered() > 0 && lw.waiting.Load() == 0 && lw.held.Load() == 0 {
		lw.err = lw.w.Flush()
	}
	return lw.err
}

// NewLineWriter returns a LineWriter on w.
func NewLineWriter(w io.Writer) *LineWriter {
	return &LineWriter{w: bufio.NewWriterSize(w, 64<<10)}
}

// Write writes msg, which must not contain a newline, and a newline.
func (lw *LineWriter) Write(msg []byte) error {
	if bytes.IndexByte(msg, '\n') >= 0 {
		return errors.New("jsonrpc: message contains a newline")
	}
	lw.waiting.Add(1)
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.waiting.Add(-1)
	if lw.err != nil {
		return lw.err
	}
	lw.w.Write(msg)
	lw.w.WriteByte('\n')
	// The last writer in a burst flushes for everyone before it; while
	// the writer is held, the last Release does.
	if lw.waiting.Load() == 0 && lw.held.Load() == 0 {
		lw.err = lw.w.Flush()
	}
	return lw.err
}

// PeekTrailingID returns the id of a message from its last bytes, for
// messages whose id follows a large member: the last "id" member of the
// suffix whose value is a valid id and ends the object or precedes
// another member. It is a best guess, to be trusted only when it names a
// request the caller is waiting for. It returns the zero ID if none is
// found.
func PeekTrailingID(suffix []byte) ID {
	key := []byte(`"id"`)
	for end := len(suffix); ; {
		i := bytes.LastIndex(suffix[:end], key)
		if i < 0 {
			return ID{}
		}
		end = i
		rest := trimLeftSpace(suffix[i+len(key):])
		if len(rest) == 0 || rest[0] != ':' {
			continue
		}
		d := jsontextDecoder(rest[1:])
		v, err := d.ReadValue()
		if err != nil {
			continue
		}
		after := trimLeftSpace(rest[1+int(d.InputOffset()):])
		if len(after) == 0 || (after[0] != '}' && after[0] != ',') {
			continue
		}
		if id, e := parseID(clone(v)); e == nil {
			return id
		}
	}
}

func trimLeftSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	return b
}

// PeekID returns the top-level id of a message, reading only as far as
// needed: it works on a truncated prefix as long as the id comes before the
// cut. It returns the zero ID if none can be found.
func PeekID(prefix []byte) ID {
	d := jsontextDecoder(prefix)
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return ID{}
	}
	for {
		name, err := d.ReadToken()
		if err != nil || name.Kind() != '"' {
			return ID{}
		}
		if name.String() == "id" {
			v, err := d.ReadValue()
			if err != nil {
				return ID{}
			}
			id, e := parseID(clone(v))
			if e != nil {
				return ID{}
			}
			return id
		}
		if err := d.SkipValue(); err != nil {
			return ID{}
		}
	}
}
