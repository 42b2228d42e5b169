package provider

import (
	"context"
	"errors"
	"io"
	"strconv"

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

// notEventStream reports a Content-Type that names another body than an
// event stream: JSON or HTML. None, or another one, is
// read as a stream, as some servers label theirs wrongly.
func notEventStream(ct string) bool {
	// By hand, ASCII only: strings.ToLower and strings.Trim would link
	// the Unicode tables into floe.wasm.
	var b [24]byte
	n := 0
	for i := 0; i < len(ct) && ct[i] != ';'; i++ {
		c := ct[i]
		if c == ' ' || c == '\t' {
			continue
		}
		if n == len(b) {
			return false
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[n] = c
		n++
	}
	t := string(b[:n])
	return t == "application/json" || t == "text/html" || n > 5 && string(b[n-5:n]) == "+json"
}

// ErrDone is returned by Decoder.Event after the terminal event.
var ErrDone = errors.New("provider: stream done")

// Stream sends req through t and feeds the response's events to d until
// the terminal event. It returns nil when the stream completed, else the
// failure (aborted when ctx was cancelled).
func Stream(ctx context.Context, t Transport, req *Request, api string, d Decoder) *Failure {
	f := stream(ctx, t, req, api, d)
	if f != nil && ctx.Err() != nil {
		f = &Failure{Status: omni.StatusAborted, Message: api + ": aborted"}
	}
	return f
}

func stream(ctx context.Context, t Transport, req *Request, api string, d Decoder) *Failure {
	if ctx.Err() != nil {
		return &Failure{}
	}
	resp, err := t.RoundTrip(ctx, req)
	if err != nil {
		return transportFailure(ctx, api, "request failed", err)
	}
	defer resp.Body.Close()
	if resp.Status < 200 || resp.Status > 299 {
		return StatusFailure(api, resp)
	}
	if ct := resp.Header["content-type"]; notEventStream(ct) {
		// A JSON answer (a proxy's error with status 200, a server that
		// ignored "stream": true) or an HTML page: name it and what it
		// says, rather than fail on it as a broken event stream.
		msg := "HTTP " + strconv.Itoa(resp.Status) + " answered " + ct + ", not text/event-stream"
		if detail := ErrorDetail(readBody(resp)); detail != "" {
			msg += ": " + detail
		}
		return Malformed(api, msg)
	}
	r := sse.NewReader(resp.Body)
	for {
		ev, err := r.Next()
		if ctx.Err() != nil {
			return &Failure{}
		}
		if err == sse.ErrUndispatched {
			// The last event lacks its blank line: take it, then end.
			if ev.Data != nil {
				err = d.Event(&ev)
			}
			if err == sse.ErrUndispatched {
				err = io.EOF
			}
		} else if err == nil {
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
		case sse.ErrTruncated, sse.ErrLineTooLong:
			return Malformed(api, err.Error())
		}
		if f, ok := err.(*Failure); ok {
			return f
		}
		return transportFailure(ctx, api, "the connection failed mid-stream", err)
	}
}
