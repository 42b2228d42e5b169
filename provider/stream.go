package provider

import (
	"context"
	"errors"
	"io"

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
}

// ErrDone is returned by Decoder.Event after the terminal event.
var ErrDone = errors.New("provider: stream done")

// Stream sends req through t and feeds the response's events to d until
// the terminal event. It returns nil when the stream completed, else the
// failure (aborted when ctx was cancelled). Open segments of e are closed
// with the failure's status; on success they stay open for the caller.
func Stream(ctx context.Context, t Transport, req *Request, api string, e *Emitter, d Decoder) *Failure {
	f := stream(ctx, t, req, api, d)
	if f != nil {
		if ctx.Err() != nil {
			f = &Failure{Status: omni.StatusAborted, Message: api + ": aborted"}
		}
		e.CloseAll(f.Status)
	}
	return f
}

func stream(ctx context.Context, t Transport, req *Request, api string, d Decoder) *Failure {
	if ctx.Err() != nil {
		return &Failure{Status: omni.StatusAborted}
	}
	resp, err := t.RoundTrip(ctx, req)
	if err != nil {
		return TransportFailure(ctx, api, "request failed", err)
	}
	if resp == nil || resp.Body == nil {
		return &Failure{Status: omni.StatusTimeout, Message: api + ": the transport returned no response"}
	}
	defer resp.Body.Close()
	if resp.Status < 200 || resp.Status > 299 {
		return StatusFailure(api, resp)
	}
	r := sse.NewReader(resp.Body)
	for {
		ev, err := r.Next()
		if ctx.Err() != nil {
			return &Failure{Status: omni.StatusAborted}
		}
		switch {
		case err == nil:
		case err == io.EOF:
			if err := d.End(); err != nil {
				return asFailure(api, err)
			}
			return nil
		case err == sse.ErrUndispatched:
			// The last event lacks its blank line: take it, then end.
			if ev.Data != nil {
				if err := d.Event(&ev); err != nil {
					if err == ErrDone {
						return nil
					}
					return asFailure(api, err)
				}
			}
			if err := d.End(); err != nil {
				return asFailure(api, err)
			}
			return nil
		case err == sse.ErrTruncated:
			return Malformed(api, "the stream ended in the middle of an event")
		case err == sse.ErrLineTooLong:
			return Malformed(api, err.Error())
		default:
			return TransportFailure(ctx, api, "the connection failed mid-stream", err)
		}
		if err := d.Event(&ev); err != nil {
			if err == ErrDone {
				return nil
			}
			return asFailure(api, err)
		}
	}
}

func asFailure(api string, err error) *Failure {
	var f *Failure
	if errors.As(err, &f) {
		return f
	}
	return Malformed(api, err.Error())
}
