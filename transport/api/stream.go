package api

import (
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/transport"
	"github.com/floehq/floe/transport/host"
)

// DefaultWriteTimeout is how long one write to a stream may take before
// the connection is dropped (Options.WriteTimeout).
const DefaultWriteTimeout = 30 * time.Second

// writeChunk is the most one write deadline covers: a batch of events is
// written in pieces of this size, each with a deadline of its own, so a
// client that reads slowly but steadily keeps its stream however large the
// batch (a replay may be 8 MiB).
const writeChunk = 16 << 10

func streamHeaders(w http.ResponseWriter) {
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache, no-transform")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
}

// stream serves GET /api/sessions/{id}/stream (T-1, T-10).
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, s *host.Host) {
	last, resume := lastEventID(r)
	sub, mode := s.Subscribe(last, resume)
	if mode == transport.Full {
		h.full(w, "session "+trace.QuoteID(s.ID()))
		return
	}
	h.serve(w, r, sub, mode)
}

// userStream serves GET /api/events (T-2): hello, then user events.
func (h *Handler) userStream(w http.ResponseWriter, r *http.Request) {
	last, resume := lastEventID(r)
	sub, mode := h.reg.UserChannel().Subscribe(last, resume, []transport.Event{transport.Simple("hello")})
	if mode == transport.Full {
		h.full(w, "the user channel (/api/events)")
		return
	}
	h.serve(w, r, sub, mode)
}

// full answers a stream the channel of what refused (transport.Full): 429
// too_many_streams.
func (h *Handler) full(w http.ResponseWriter, what string) {
	if m := h.opts.Metrics; m != nil {
		m.StreamsRefused.Add(1)
	}
	writeError(w, http.StatusTooManyRequests, "too_many_streams", what+" has as many streams open as the server takes at once: close one (another tab's, a client that did not close its own) and connect again")
}

func lastEventID(r *http.Request) (string, bool) {
	v, ok := r.Header["Last-Event-Id"]
	if !ok || len(v) == 0 {
		return "", false
	}
	return v[0], true
}

// serve writes sub's events to w until the client leaves, the subscriber
// ends, or a write fails or times out (a client that stopped reading).
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, sub *transport.Subscriber, mode transport.Replay) {
	if m := h.opts.Metrics; m != nil {
		m.EventsReplayed.Add(int64(sub.Replayed()))
		if mode == transport.Miss {
			m.Resyncs.Add(1)
		}
		m.StreamsOpen.Add(1)
		defer m.StreamsOpen.Add(-1)
	}
	streamHeaders(w)
	dw := h.body(w)
	if dw.Flush() != nil {
		sub.Close()
		return
	}
	sub.Serve(r.Context(), dw, dw.Flush)
	dw.arm() // the response's last bytes get a deadline too
}

// body is w's body under the write timeout: each write of at most
// writeChunk bytes, and each flush, must complete within it. A stream's,
// and a long answer's (a big session's /messages, a long session list),
// whose client stops reading is ended there, not held for good.
func (h *Handler) body(w http.ResponseWriter) *deadlineWriter {
	rc := http.NewResponseController(w)
	dw := &deadlineWriter{w: w, flush: rc.Flush, timeout: h.writeTimeout(), now: time.Now}
	if dw.timeout > 0 {
		dw.setDeadline = rc.SetWriteDeadline
	}
	return dw
}

func (h *Handler) writeTimeout() time.Duration {
	if h.opts.WriteTimeout == 0 {
		return DefaultWriteTimeout
	}
	return h.opts.WriteTimeout
}

// deadlineWriter gives each write of at most writeChunk bytes, and each
// flush, a write deadline timeout from now. Without setDeadline (or when
// the ResponseWriter cannot take deadlines) it passes writes through.
type deadlineWriter struct {
	w           io.Writer
	flush       func() error
	setDeadline func(time.Time) error // nil: no deadlines
	timeout     time.Duration
	now         func() time.Time
}

// arm sets the deadline of the next write; an error ends the stream.
func (d *deadlineWriter) arm() error {
	if d.setDeadline == nil {
		return nil
	}
	err := d.setDeadline(d.now().Add(d.timeout))
	if errors.Is(err, http.ErrNotSupported) {
		d.setDeadline = nil
		return nil
	}
	return err
}

func (d *deadlineWriter) Write(b []byte) (int, error) {
	if d.setDeadline == nil {
		return d.w.Write(b)
	}
	n := 0
	for n < len(b) {
		if err := d.arm(); err != nil {
			return n, err
		}
		if d.setDeadline == nil {
			m, err := d.w.Write(b[n:])
			return n + m, err
		}
		m, err := d.w.Write(b[n:min(len(b), n+writeChunk)])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Flush sends what the ResponseWriter buffered, under a deadline.
func (d *deadlineWriter) Flush() error {
	if err := d.arm(); err != nil {
		return err
	}
	return d.flush()
}
