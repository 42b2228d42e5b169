// Package sse reads a Server-Sent Events stream (the WHATWG HTML
// "event stream" format) from an io.Reader: the event, data, id and retry
// fields (and the "error" field of llama.cpp's server, data of an event
// of type "error"), comments, data spread over several lines, any of CRLF, CR and LF
// as line ends, with a multi-byte character or a line end split across
// reads. A stream that stops in the middle of an event is reported as
// [ErrTruncated], distinct from a clean end (io.EOF) and from a failing
// read, so that a caller can tell a cut stream from a finished one.
package sse

import (
	"errors"
	"io"

	"github.com/floehq/floe/internal/num"
)

// DefaultMaxLine is the longest line, and the longest data of an event,
// a Reader accepts by default.
const DefaultMaxLine = 8 << 20

var (
	// ErrTruncated: the stream ended (io.EOF) in the middle of a line or
	// of an event, before the blank line that dispatches it.
	ErrTruncated = errors.New("sse: stream ended in the middle of an event")
	// ErrUndispatched: the stream ended (io.EOF) after the complete lines
	// of an event but before the blank line that dispatches it. The format
	// drops such an event; the returned Event holds it for callers that
	// accept it (many servers omit the last blank line).
	ErrUndispatched = errors.New("sse: stream ended before the blank line of its last event")
	// ErrLineTooLong: a line, or the data of an event (its data lines
	// joined), is longer than the Reader's limit.
	ErrLineTooLong = errors.New("sse: line too long")
)

// Event is one dispatched event. Data is valid until the next call of Next.
type Event struct {
	Type  string // the event field; "" when absent (the format's "message")
	Data  []byte // the data lines joined by "\n"
	ID    string // the last event ID seen so far (it persists across events)
	Retry int    // the retry field in milliseconds of this event; -1 = absent
}

// Reader reads events from a byte stream.
type Reader struct {
	src     io.Reader
	buf     []byte // unread input is buf[start:end]
	start   int
	end     int
	err     error // the source's error, once seen
	maxLine int

	line    []byte // the line being assembled when it spans reads
	data    []byte
	hasData bool
	typ     string
	id      string
	retry   int
	fields  bool // a field of the current event was seen
	skipLF  bool // the last line ended with CR: a following LF belongs to it
	started bool // the first line was read
}

// NewReader returns a Reader on src.
func NewReader(src io.Reader) *Reader {
	return &Reader{src: src, buf: make([]byte, 4096), maxLine: DefaultMaxLine, retry: -1}
}

// SetMaxLine sets the longest accepted line, and event data, in bytes
// (n > 0).
func (r *Reader) SetMaxLine(n int) {
	if n > 0 {
		r.maxLine = n
	}
}

// Next returns the next event. At the end of the stream it returns io.EOF
// when the stream ended between events, ErrTruncated when it ended inside
// a line (the returned Event then holds what the unfinished event had),
// ErrUndispatched when it ended after an event's lines but before its blank
// line, and the source's error when a read failed. After any error Next
// keeps returning io.EOF or that error. ErrLineTooLong is final.
func (r *Reader) Next() (Event, error) {
	for {
		line, ok, err := r.readLine()
		if err != nil {
			return Event{}, err
		}
		if !r.started { // a byte order mark may open the stream
			r.started = true
			if !ok {
				line = r.line
			}
			if len(line) >= 3 && line[0] == 0xEF && line[1] == 0xBB && line[2] == 0xBF {
				line = line[3:]
				if !ok {
					r.line = line
				}
			}
		}
		if !ok { // end of input
			if r.err != io.EOF {
				return Event{}, r.err
			}
			if len(r.line) > 0 {
				r.field(r.line)
				r.line = r.line[:0]
				return r.take(), ErrTruncated
			}
			if r.fields {
				return r.take(), ErrUndispatched
			}
			return Event{}, io.EOF
		}
		if len(line) == 0 {
			if !r.fields {
				continue
			}
			ev := r.take()
			if !ev.hasData() {
				continue // an event without data is not dispatched
			}
			return ev, nil
		}
		r.field(line)
		if len(r.data) > r.maxLine { // data lines without end: bounded as a line is
			return Event{}, r.tooLong()
		}
	}
}

// tooLong ends the stream with ErrLineTooLong, which is final.
func (r *Reader) tooLong() error {
	r.err, r.start, r.end, r.line, r.data = ErrLineTooLong, 0, 0, nil, nil
	return ErrLineTooLong
}

func (e *Event) hasData() bool { return e.Data != nil }

// take returns the current event and resets the per-event state.
func (r *Reader) take() Event {
	ev := Event{Type: r.typ, ID: r.id, Retry: r.retry}
	if r.hasData {
		ev.Data = r.data
	}
	r.data, r.hasData, r.typ, r.retry, r.fields = r.data[:0], false, "", -1, false
	return ev
}

// field applies one non-empty line.
func (r *Reader) field(line []byte) {
	if line[0] == ':' {
		return // comment
	}
	r.fields = true
	name, value := line, []byte(nil)
	for i, c := range line {
		if c == ':' {
			name, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
			break
		}
	}
	switch string(name) {
	case "error":
		// Not a field of the format: llama.cpp's server sends an error
		// in a stream as a line "error: {…}", which the format would
		// drop (the stream then looked complete). It is data of an event
		// of type "error".
		if r.typ == "" {
			r.typ = "error"
		}
		fallthrough
	case "data":
		if r.hasData {
			r.data = append(r.data, '\n')
		} else if r.data == nil {
			r.data = make([]byte, 0, len(value))
		}
		r.data = append(r.data, value...)
		r.hasData = true
	case "event":
		r.typ = string(value)
	case "id":
		if !containsNUL(value) {
			r.id = string(value)
		}
	case "retry":
		if n, ok := num.Digits(value); ok {
			r.retry = n
		}
	}
}

func containsNUL(b []byte) bool {
	for _, c := range b {
		if c == 0 {
			return true
		}
	}
	return false
}

// readLine returns the next line without its terminator. ok is false at
// the end of the input (r.err says why); the bytes of an unterminated last
// line are left in r.line.
func (r *Reader) readLine() (line []byte, ok bool, err error) {
	r.line = r.line[:0]
	for {
		if r.start == r.end {
			if r.err != nil {
				return nil, false, nil
			}
			r.fill()
			continue
		}
		b := r.buf[r.start:r.end]
		if r.skipLF {
			r.skipLF = false
			if b[0] == '\n' {
				r.start++
				continue
			}
		}
		for i, c := range b {
			if c == '\n' || c == '\r' {
				r.skipLF = c == '\r'
				r.start += i + 1
				if len(r.line) > 0 {
					r.line = append(r.line, b[:i]...)
					if len(r.line) > r.maxLine {
						return nil, false, r.tooLong()
					}
					return r.line, true, nil
				}
				if i > r.maxLine {
					return nil, false, r.tooLong()
				}
				return b[:i], true, nil
			}
		}
		r.line = append(r.line, b...)
		r.start = r.end
		if len(r.line) > r.maxLine {
			return nil, false, r.tooLong()
		}
	}
}

// fill reads more input into the empty buffer.
func (r *Reader) fill() {
	r.start, r.end = 0, 0
	n, err := r.src.Read(r.buf)
	if n < 0 || n > len(r.buf) {
		n = 0
	}
	r.end = n
	if err != nil {
		r.err = err
	}
}
