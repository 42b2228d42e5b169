package sse

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
)

// result renders what a Reader yields: one line per event, then the error.
func result(r *Reader) string {
	var b strings.Builder
	for {
		ev, err := r.Next()
		if err == nil || err == ErrTruncated || err == ErrUndispatched {
			b.WriteString("type=" + strconv.Quote(ev.Type) + " data=" + strconv.Quote(string(ev.Data)) + " id=" + strconv.Quote(ev.ID) + " retry=" + strconv.Itoa(ev.Retry) + "\n")
		}
		if err != nil {
			b.WriteString("end: " + err.Error())
			return b.String()
		}
	}
}

// chunked delivers src in reads of the given sizes (cycling), then err.
type chunked struct {
	src   string
	sizes []int
	i     int
	err   error
}

func (c *chunked) Read(p []byte) (int, error) {
	if c.src == "" {
		if c.err != nil {
			return 0, c.err
		}
		return 0, io.EOF
	}
	n := len(c.src)
	if len(c.sizes) > 0 {
		n = min(n, c.sizes[c.i%len(c.sizes)])
		c.i++
	}
	n = copy(p, c.src[:n])
	c.src = c.src[n:]
	return n, nil
}

func TestReader(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"one event", "data: hello\n\n", `type="" data="hello" id="" retry=-1` + "\nend: EOF"},
		{"fields", "event: delta\nid: 7\nretry: 1500\ndata: x\n\n", `type="delta" data="x" id="7" retry=1500` + "\nend: EOF"},
		{"multi-line data", "data: a\ndata:b\ndata:  c\n\n", `type="" data="a\nb\n c" id="" retry=-1` + "\nend: EOF"},
		{"comments and blank lines", ": keep-alive\n\n\n:\ndata: x\n: inside\n\n", `type="" data="x" id="" retry=-1` + "\nend: EOF"},
		{"CRLF", "data: a\r\n\r\ndata: b\r\n\r\n", `type="" data="a" id="" retry=-1` + "\n" + `type="" data="b" id="" retry=-1` + "\nend: EOF"},
		{"CR", "data: a\r\rdata: b\r\r", `type="" data="a" id="" retry=-1` + "\n" + `type="" data="b" id="" retry=-1` + "\nend: EOF"},
		{"mixed line ends", "data: a\r\ndata: b\rdata: c\n\r\n", `type="" data="a\nb\nc" id="" retry=-1` + "\nend: EOF"},
		{"event without data is not dispatched", "retry: 10\n\nevent: x\n\ndata: y\n\n", `type="" data="y" id="" retry=-1` + "\nend: EOF"},
		{"empty data is dispatched", "data\n\n", `type="" data="" id="" retry=-1` + "\nend: EOF"},
		{"id persists, NUL id ignored", "id: 1\ndata: a\n\nid: x\x00y\ndata: b\n\n", `type="" data="a" id="1" retry=-1` + "\n" + `type="" data="b" id="1" retry=-1` + "\nend: EOF"},
		{"bad retry ignored", "retry: 1e3\ndata: a\n\n", `type="" data="a" id="" retry=-1` + "\nend: EOF"},
		{"byte order mark", "\xEF\xBB\xBFdata: a\n\n", `type="" data="a" id="" retry=-1` + "\nend: EOF"},
		{"an error line is an error event (llama.cpp)", "error: {\"code\":500}\n\ndata: [DONE]\n\n", `type="error" data="{\"code\":500}" id="" retry=-1` + "\n" + `type="" data="[DONE]" id="" retry=-1` + "\nend: EOF"},
		{"an error line keeps the event's type", "event: x\nerror: e\n\n", `type="x" data="e" id="" retry=-1` + "\nend: EOF"},
		{"unknown field", "foo: bar\ndata: a\n\n", `type="" data="a" id="" retry=-1` + "\nend: EOF"},
		{"cut mid-line", "data: a\n\ndata: {\"par", `type="" data="a" id="" retry=-1` + "\n" + `type="" data="{\"par" id="" retry=-1` + "\nend: " + ErrTruncated.Error()},
		{"no final blank line", "data: a\n\ndata: [DONE]\n", `type="" data="a" id="" retry=-1` + "\n" + `type="" data="[DONE]" id="" retry=-1` + "\nend: " + ErrUndispatched.Error()},
		{"empty stream", "", "end: EOF"},
		{"only comments", ": hi\n\n", "end: EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Every split gives the same events: whole, 1-byte and 2/3-byte reads.
			for _, sizes := range [][]int{nil, {1}, {2, 3}, {7}} {
				got := result(NewReader(&chunked{src: tc.in, sizes: sizes}))
				if got != tc.want {
					t.Errorf("reads %v:\n got %s\nwant %s", sizes, got, tc.want)
				}
			}
		})
	}
}

// A multi-byte character split across reads arrives whole.
func TestReaderUTF8Split(t *testing.T) {
	in := "data: Grüße 東京 🌸\n\n"
	for cut := 1; cut < len(in); cut++ {
		got := result(NewReader(&chunked{src: in, sizes: []int{cut, len(in)}}))
		if want := `type="" data="Grüße 東京 🌸" id="" retry=-1` + "\nend: EOF"; got != want {
			t.Fatalf("cut at %d: %s", cut, got)
		}
	}
}

// A failing read is reported as itself, distinct from a clean end.
func TestReaderReadError(t *testing.T) {
	boom := errors.New("connection reset")
	r := NewReader(&chunked{src: "data: a\n\ndata: b", err: boom})
	if ev, err := r.Next(); err != nil || string(ev.Data) != "a" {
		t.Fatalf("first event: %q, %v", ev.Data, err)
	}
	if _, err := r.Next(); err != boom {
		t.Fatalf("got %v, want the read error", err)
	}
	if _, err := r.Next(); err != boom {
		t.Fatalf("after the error: %v, want the read error again", err)
	}
}

func TestReaderLineTooLong(t *testing.T) {
	r := NewReader(&chunked{src: "data: " + strings.Repeat("x", 100) + "\n\n", sizes: []int{9}})
	r.SetMaxLine(50)
	if _, err := r.Next(); err != ErrLineTooLong {
		t.Fatalf("got %v, want ErrLineTooLong", err)
	}
	r = NewReader(strings.NewReader("data: " + strings.Repeat("x", 100) + "\n\n"))
	r.SetMaxLine(50)
	if _, err := r.Next(); err != ErrLineTooLong {
		t.Fatalf("one read: got %v, want ErrLineTooLong", err)
	}
}

// An event's data is bounded as a line is: data lines that never end in a
// blank line grew it without end. ErrLineTooLong is final: the events
// after it are not read.
func TestReaderEventTooLong(t *testing.T) {
	for _, in := range []string{
		strings.Repeat("data: 0123456789\n", 5) + "\ndata: b\n\n",
		strings.Repeat("data\n", 60) + "\ndata: b\n\n",
		"data: " + strings.Repeat("x", 60) + "\n\ndata: b\n\n",
	} {
		for _, sizes := range [][]int{nil, {1}, {7}} {
			r := NewReader(&chunked{src: in, sizes: sizes})
			r.SetMaxLine(50)
			for i := range 2 {
				if ev, err := r.Next(); err != ErrLineTooLong {
					t.Fatalf("%q in reads %v, call %d: %q, %v; want ErrLineTooLong", in, sizes, i+1, ev.Data, err)
				}
			}
		}
	}
	r := NewReader(strings.NewReader(strings.Repeat("data: 0123456789\n", 4) + "\n"))
	r.SetMaxLine(50)
	if ev, err := r.Next(); err != nil || len(ev.Data) != 43 {
		t.Fatalf("an event of 43 bytes: %q, %v", ev.Data, err)
	}
}

// FuzzReader: any input, split any way, yields the same events and end as
// the whole input read at once, and never panics.
func FuzzReader(f *testing.F) {
	f.Add([]byte("data: a\n\n"), uint8(1))
	f.Add([]byte("event: x\r\nid: 1\r\nretry: 5\r\ndata: {\"a\":1}\r\n\r\n: c\r\n"), uint8(3))
	f.Add([]byte("data: a\rdata: b\r\r\xEF\xBB\xBFdata: c"), uint8(2))
	f.Add([]byte("data: 東京\n\ndata: [DONE]\n"), uint8(5))
	f.Fuzz(func(t *testing.T, in []byte, split uint8) {
		want := result(NewReader(&chunked{src: string(in)}))
		sizes := []int{int(split%16) + 1, int(split/16) + 1}
		if got := result(NewReader(&chunked{src: string(in), sizes: sizes})); got != want {
			t.Fatalf("reads %v differ from one read:\n got %s\nwant %s", sizes, got, want)
		}
		// A limit a line or an event may pass, in any reads alike.
		limited := func(c *chunked) string {
			r := NewReader(c)
			r.SetMaxLine(len(in)/4 + 1)
			return result(r)
		}
		if got, want := limited(&chunked{src: string(in), sizes: sizes}), limited(&chunked{src: string(in)}); got != want {
			t.Fatalf("limited to %d bytes, reads %v differ from one read:\n got %s\nwant %s", len(in)/4+1, sizes, got, want)
		}
	})
}
