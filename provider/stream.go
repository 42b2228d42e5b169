package provider

import (
	"context"
	"errors"
	"io"
	"strconv"
	"time"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider/sse"
)

// Decoder is an adapter's event decoder: it turns each SSE event into
// Emitter calls.
type Decoder interface {
	// Event handles one event. It returns ErrDone after the stream's
	// terminal event, or a *Failure for an error event or a bad payload.
	Event(ev *sse.Event) error
	// End is called when the body ended cleanly before ErrDone: nil
	// accepts the stream as complete, a *Failure rejects it.
	End() error
	// Usage returns the request's counts as stated and its total.
	Usage() (Usage, int64)
}

// Cutter is an optional ability of a [Decoder]: Cut says why the provider
// cut a completed reply short (its finish or stop reason), "" when it did
// not; it becomes the request's [engine.Outcome.Cut].
type Cutter interface {
	Cut() string
}

// sniff reads the start of the body up to its first byte that is not
// white space (a byte-order mark skipped) and says what the body is: 'j'
// for JSON ({ or [), 'h' for HTML or XML (<), 0 for anything else, which
// is read as an event stream. No event stream starts with one of those
// bytes (a line of an event stream begins with a field name, a colon or
// nothing), so the body decides, not its Content-Type: some servers label
// their streams application/json, and some proxies label a JSON error
// text/event-stream. What it read is read again first; err is what ended
// reading early (io.EOF for an empty body).
func (r *body) sniff() (kind byte, err error) {
	buf := make([]byte, 512)
	for len(r.pre) < 64<<10 {
		n, err := r.get(buf)
		for _, c := range buf[:n] {
			if c > ' ' && c != 0xEF && c != 0xBB && c != 0xBF {
				r.pre = append(r.pre, buf[:n]...)
				switch c {
				case '{', '[':
					return 'j', nil
				case '<':
					return 'h', nil
				}
				return 0, nil
			}
		}
		r.pre = append(r.pre, buf[:n]...)
		if err != nil {
			return 0, err
		}
	}
	return 0, nil
}

// sseStart reports whether b, the start of a body, starts as an event
// stream: its first line that is not blank is a comment, or a field
// (data, event, id, retry) as far as its first letter tells.
func sseStart(b []byte) bool {
	for _, c := range b {
		switch c {
		case '\r', '\n', 0xEF, 0xBB, 0xBF:
			continue
		case ':', 'd', 'e', 'i', 'r':
			return true
		}
		return false
	}
	return false
}

// lead returns b after its white space and blank lines, and a byte order
// mark.
func lead(b []byte) []byte {
	for len(b) > 0 {
		switch {
		case b[0] <= ' ':
			b = b[1:]
		case len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF:
			b = b[3:]
		default:
			return b
		}
	}
	return b
}

// body reads a response's body: what sniff read first, then the rest,
// each read from the server timed by the request's watchdog.
type body struct {
	_    [0]func() // not comparable: no generated equality code
	pre  []byte
	head []byte // the body's start: what sniff read, then more bytes
	more int
	src  io.ReadCloser
	w    *watchdog // nil: no idle timeout
}

func (r *body) Read(b []byte) (int, error) {
	if len(r.pre) > 0 {
		n := copy(b, r.pre)
		r.pre = r.pre[n:]
		return n, nil
	}
	n, err := r.get(b)
	if k := min(n, r.more); k > 0 {
		r.head, r.more = append(r.head, b[:k]...), r.more-k
	}
	return n, err
}

// get reads from the server, the watchdog told that the request waits
// on it meanwhile.
func (r *body) get(b []byte) (int, error) {
	if r.w == nil {
		return r.src.Read(b)
	}
	r.w.wait()
	n, err := r.src.Read(b)
	r.w.wait()
	return n, err
}

func (r *body) Close() error { return r.src.Close() }

// notStream is the failure of a 2xx answer whose body is JSON (kind 'j')
// or HTML: named with what it says (a proxy's error with status 200, a
// server that ignored "stream": true) rather than failed on as a broken
// event stream. An error object is mapped as an error event would be.
func notStream(api string, resp *Response, kind byte) *Failure {
	what := "a JSON body"
	if kind == 'h' {
		what = "an HTML page"
	}
	if ct := resp.Header["content-type"]; ct != "" {
		what += " (" + ct + ")"
	}
	text := readBody(resp) // what sniff read, then the rest
	msg := "HTTP " + strconv.Itoa(resp.Status) + " answered " + what + ", not an event stream"
	if detail := ErrorDetail(text); detail != "" {
		msg += ": " + detail
	}
	if typ, code, m := ErrorFields(text); kind == 'j' && (typ != "" || code != "" || m != "") {
		f := ErrorEvent(api, typ, code, m)
		f.Message = api + ": " + msg
		return f
	}
	return Malformed(api, msg)
}

// ErrDone is returned by Decoder.Event after the terminal event.
var ErrDone = errors.New("provider: stream done")

// Stream sends req through t and feeds the response's events to d until
// the terminal event. It returns nil when the stream completed, else the
// failure (aborted when ctx was cancelled). idle > 0 ends the request as
// timeout when it waited on the server for about that long (between idle
// and 1.25 × idle) without a byte: for its headers, then in a read of its
// body. Time spent in d (its emit, which waits while the engine's queue is
// full: a consumer that does not read, a tool call awaiting approval)
// does not count.
func Stream(ctx context.Context, t Transport, req *Request, api string, idle time.Duration, d Decoder) *Failure {
	rctx, w := ctx, (*watchdog)(nil)
	if idle > 0 {
		c, cancel := context.WithCancel(ctx)
		defer cancel()
		rctx, w = c, startWatchdog(idle, cancel)
	}
	f := stream(rctx, t, req, api, d, w)
	fired := w != nil && w.stop()
	switch {
	case f == nil:
	case ctx.Err() != nil:
		f = &Failure{Status: omni.StatusAborted, Message: api + ": aborted"}
	case fired:
		f = &Failure{Status: omni.StatusTimeout, Message: api + ": no data from the server for " + idle.String() + " (the idle timeout)"}
	}
	return f
}

// shownURL is u as an error names it: without credentials (user:password@),
// a query or a fragment, where a Stream caller's URL may carry a key
// (Google's ?key=), which a Trace would keep and a page show.
func shownURL(u string) string {
	for i := 0; i < len(u); i++ {
		if u[i] == '?' || u[i] == '#' {
			u = u[:i]
			break
		}
	}
	if i := index(u, "://"); i >= 0 {
		host := u[i+3:]
		for j := 0; j < len(host); j++ {
			if host[j] == '/' {
				break
			}
			if host[j] == '@' {
				return shownURL(u[:i+3] + host[j+1:])
			}
		}
	}
	return u
}

// hideURL takes out of msg, a transport's error, what shownURL leaves out
// of u: the transport may name u as it is (fetch) or with its password as
// *** (Go's net/http), its query and fragment kept.
func hideURL(msg, u string) string {
	shown := shownURL(u)
	if shown == u {
		return msg
	}
	msg = replaceAll(msg, u, shown)
	for i := 0; i < len(u)-1; i++ {
		if u[i] == '?' || u[i] == '#' {
			return replaceAll(msg, u[i:], "")
		}
	}
	return msg
}

// replaceAll is strings.ReplaceAll (old not empty), written out: with
// strings.ReplaceAll and IndexAny, hideURL cost floe.wasm 2.3 KB brotli
// against 0.4 KB.
func replaceAll(s, old, new string) string {
	for i := 0; i+len(old) <= len(s); i++ {
		if s[i:i+len(old)] == old {
			s = s[:i] + new + s[i+len(old):]
			i += len(new) - 1
		}
	}
	return s
}

func stream(ctx context.Context, t Transport, req *Request, api string, d Decoder, w *watchdog) *Failure {
	if ctx.Err() != nil {
		return &Failure{}
	}
	resp, err := t.RoundTrip(ctx, req)
	if err != nil {
		f := transportFailure(ctx, api, "request failed", err)
		f.Message = hideURL(f.Message, req.URL)
		return f
	}
	defer resp.Body.Close()
	b := &body{src: resp.Body, w: w}
	resp.Body = b // what sniff reads is read again by whoever reads the body next
	if w != nil {
		w.wait() // the headers came
	}
	if resp.Status < 200 || resp.Status > 299 {
		f := StatusFailure(api, resp)
		if resp.Status == 404 {
			// The URL, which a base URL without its /v1 (a local
			// server's) got wrong: "404 page not found" said nothing of it.
			f.Message += " (at " + shownURL(req.URL) + ")"
		}
		return f
	}
	kind, err := b.sniff()
	if kind != 0 {
		return notStream(api, resp, kind)
	}
	if err != nil && err != io.EOF {
		return transportFailure(ctx, api, "the connection failed mid-stream", err)
	}
	// The body's first bytes, to 1 KiB past its blank start whatever its
	// reads gave (its first line, which a failure may quote); the events
	// handed to d.
	end := min(len(b.pre)-len(lead(b.pre)), 64<<10) + 1<<10
	b.head = append([]byte(nil), b.pre[:min(end, len(b.pre))]...)
	b.more = end - len(b.head)
	events := 0
	r := sse.NewReader(b)
	for {
		ev, err := r.Next()
		if ctx.Err() != nil {
			return &Failure{}
		}
		if err == sse.ErrUndispatched {
			// The last event lacks its blank line: take it, then end.
			err = io.EOF
			if len(ev.Data) > 0 {
				events++
				if err = d.Event(&ev); err == sse.ErrUndispatched {
					err = io.EOF
				}
			}
		} else if err == nil && len(ev.Data) > 0 { // an event of no data (data: alone) says nothing
			events++
			err = d.Event(&ev)
		}
		switch err {
		case nil:
			continue
		case ErrDone:
			return nil
		case io.EOF:
			err = d.End()
			if err == nil {
				return nil
			}
		case sse.ErrTruncated:
			err = Malformed(api, err.Error())
		case sse.ErrLineTooLong:
			err = Malformed(api, "a line or an event of the event stream is longer than 8 MiB, the most the adapter reads")
		}
		if f, ok := err.(*Failure); ok && events == 0 && f.Status == omni.StatusMalformed && !sseStart(b.head) {
			// Not one event in a body that does not start as an event
			// stream: it was something else (a proxy's text/plain error);
			// quote it, or say it was empty.
			what := ": " + ErrorDetail(lead(b.head))
			switch {
			case len(b.head) == 0:
				return Malformed(api, "the body was empty")
			case len(what) == 2:
				what = ", only white space or control characters"
			}
			return Malformed(api, "the body held no event"+what)
		}
		if f, ok := err.(*Failure); ok {
			return f
		}
		return transportFailure(ctx, api, "the connection failed mid-stream", err)
	}
}
