package mcphttp

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// sseResult is an event as the tests compare it.
type sseResult struct {
	Event, Data, ID string
	HasID, HasData  bool
	Retry           int64
	HasRetry        bool
	TooLarge        int // the data's size when over the limit
}

// parseAll reads every event of input, handed over chunk bytes at a time.
func parseAll(t testing.TB, input []byte, max, chunk int) []sseResult {
	t.Helper()
	r := newSSEReader(&chunkReader{b: input, n: chunk}, max)
	var out []sseResult
	for {
		ev, err := r.next()
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("next: %v", err)
			}
			return out
		}
		res := sseResult{Event: ev.event, Data: string(ev.data), ID: ev.id, HasID: ev.hasID, HasData: ev.hasData, Retry: ev.retryMS, HasRetry: ev.hasRetry}
		if ev.tooLarge != nil {
			res.TooLarge = ev.tooLarge.Size
			if len(ev.data) != 0 {
				t.Fatalf("an oversized event kept its data")
			}
		} else if len(ev.data) > max {
			t.Fatalf("event data of %d bytes passed the %d-byte limit", len(ev.data), max)
		}
		out = append(out, res)
	}
}

type chunkReader struct {
	b []byte
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.n)], c.b)
	c.b = c.b[n:]
	return n, nil
}

func TestSSEReader(t *testing.T) {
	tests := []struct {
		name  string
		input string
		max   int
		want  []sseResult
	}{
		{"message", "id: 1\nevent: message\ndata: {\"a\":1}\n\n", 100,
			[]sseResult{{Event: "message", Data: `{"a":1}`, ID: "1", HasID: true, HasData: true}}},
		{"priming event", "id: p1-0\nretry: 500\ndata: \n\n", 100,
			[]sseResult{{ID: "p1-0", HasID: true, HasData: true, Retry: 500, HasRetry: true}}},
		{"CRLF and CR line ends", "data: a\r\n\r\ndata: b\r\rdata: c\n\r\n", 100,
			[]sseResult{{Data: "a", HasData: true}, {Data: "b", HasData: true}, {Data: "c", HasData: true}}},
		{"multi-line data", "data: one\ndata:two\ndata\n\n", 100,
			[]sseResult{{Data: "one\ntwo\n", HasData: true}}},
		{"comments and unknown fields", ": keepalive\n\nfoo: bar\n: x\ndata: y\n\n", 100,
			[]sseResult{{Data: "y", HasData: true}}},
		{"byte-order mark", "\xef\xbb\xbfdata: x\n\n", 100, []sseResult{{Data: "x", HasData: true}}},
		{"retry not a number", "retry: 5s\ndata: x\n\n", 100, []sseResult{{Data: "x", HasData: true}}},
		{"id with NUL ignored", "id: a\x00b\ndata: x\n\n", 100, []sseResult{{Data: "x", HasData: true}}},
		{"unterminated last event dropped", "data: x\n\ndata: y\n", 100, []sseResult{{Data: "x", HasData: true}}},
		{"oversized then normal", "data: 0123456789\n\ndata: ok\n\n", 5,
			[]sseResult{{HasData: true, TooLarge: 10}, {Data: "ok", HasData: true}}},
		{"exactly the limit", "data: 12345\n\n", 5, []sseResult{{Data: "12345", HasData: true}}},
		{"two lines over the limit together", "data: 123\ndata: 45\n\n", 5, []sseResult{{HasData: true, TooLarge: 6}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, chunk := range []int{1, 2, 3, 1 << 20} {
				got := parseAll(t, []byte(tt.input), tt.max, chunk)
				if !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("chunk %d:\n got %+v\nwant %+v", chunk, got, tt.want)
				}
			}
		})
	}
}

// An oversized event keeps enough of its ends to find the id of the
// response it carried, before or after a large result.
func TestSSEReaderTooLargeKeepsIDs(t *testing.T) {
	big := strings.Repeat("x", 200<<10)
	for _, data := range []string{
		`{"jsonrpc":"2.0","id":7,"result":{"text":"` + big + `"}}`,
		`{"result":{"text":"` + big + `"},"jsonrpc":"2.0","id":7}`,
	} {
		r := newSSEReader(strings.NewReader("data: "+data+"\n\n"), 100<<10)
		ev, err := r.next()
		if err != nil || ev.tooLarge == nil {
			t.Fatalf("got %+v, %v; want an oversized event", ev, err)
		}
		if ev.tooLarge.Size != len(data) {
			t.Errorf("size %d, want %d", ev.tooLarge.Size, len(data))
		}
		id := jsonrpc.PeekID(ev.tooLarge.Prefix)
		if id.IsZero() {
			id = jsonrpc.PeekTrailingID(ev.tooLarge.Suffix)
		}
		if id != jsonrpc.IntID(7) {
			t.Errorf("id %v, want 7", id)
		}
	}
}

// refParse is the standard's algorithm written plainly over the whole
// input, for FuzzSSEReader to compare with.
func refParse(input []byte, max int) ([]sseResult, []string) {
	s := strings.TrimPrefix(string(input), "\ufeff")
	var lines []string
	for {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			break
		}
		lines = append(lines, s[:i])
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
	}
	var out []sseResult
	var full []string // each event's whole data
	var cur sseResult
	var data []string
	seen := false
	for _, line := range lines {
		if line == "" {
			if seen {
				if cur.HasData {
					if d := strings.Join(data, "\n"); len(d) > max {
						cur.TooLarge = len(d)
					} else {
						cur.Data = d
					}
				}
				out = append(out, cur)
				full = append(full, strings.Join(data, "\n"))
			}
			cur, data, seen = sseResult{}, nil, false
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		over := len(line) > max+sseLineSlack
		switch field {
		case "data":
			seen, cur.HasData = true, true
			data = append(data, value)
		case "event":
			if !over {
				seen, cur.Event = true, value
			}
		case "id":
			if !over && !strings.Contains(value, "\x00") {
				seen, cur.ID, cur.HasID = true, value, true
			}
		case "retry":
			if n, ok := parseRetry([]byte(value)); ok && !over {
				seen, cur.Retry, cur.HasRetry = true, n, true
			}
		}
	}
	return out, full
}

func FuzzSSEReader(f *testing.F) {
	for _, s := range []string{
		"id: p1-0\nretry: 1000\ndata: \n\nid: p1-1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
		"event: endpoint\ndata: /message?sessionId=abc\n\n",
		": keepalive\r\n\r\ndata: a\r\ndata: b\r\n\r\n",
		"data: x\r\rdata: y\r",
		"\xef\xbb\xbfdata: bom\n\n",
		"retry: 99999999999999999999999\nid: \x00\ndata\n\n",
		"data: " + strings.Repeat("z", 600) + "\n\ndata: after\n\n",
		"id" + strings.Repeat("i", 400) + ": long field\n\n",
	} {
		f.Add([]byte(s), uint16(64), uint8(3))
	}
	f.Fuzz(func(t *testing.T, input []byte, max uint16, chunk uint8) {
		m := 1 + int(max)%512
		got := parseAll(t, input, m, 1+int(chunk)%17)
		want, full := refParse(input, m)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("max %d chunk %d input %q\n got %+v\nwant %+v", m, 1+int(chunk)%17, input, got, want)
		}
		// The ends kept of an oversized event are the ends of its data.
		r := newSSEReader(bytes.NewReader(input), m)
		for i := 0; ; i++ {
			ev, err := r.next()
			if err != nil {
				break
			}
			if e := ev.tooLarge; e != nil {
				d := full[i]
				if !strings.HasPrefix(d, string(e.Prefix)) || !strings.HasSuffix(d, string(e.Suffix)) {
					t.Fatalf("event %d: prefix %q / suffix %q are not the ends of %q", i, e.Prefix, e.Suffix, d)
				}
				// The head of a cut line is all there is of it: at least
				// the limit's worth.
				if len(e.Suffix) != min(len(d), sseSuffixKeep) || len(e.Prefix) < min(len(d), ssePrefixKeep, m) || len(e.Prefix) > ssePrefixKeep {
					t.Fatalf("event %d: kept %d and %d bytes of %d", i, len(e.Prefix), len(e.Suffix), len(d))
				}
			}
		}
	})
}

func TestParseRetry(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "500": 500, "007": 7} {
		if n, ok := parseRetry([]byte(in)); !ok || n != want {
			t.Errorf("parseRetry(%q) = %d, %v", in, n, ok)
		}
	}
	for _, in := range []string{"", "-1", "1.5", " 1", strconv.Itoa(1) + "x", "99999999999999999999"} {
		if _, ok := parseRetry([]byte(in)); ok {
			t.Errorf("parseRetry(%q) accepted", in)
		}
	}
}
