package host

import (
	"context"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// sink is the session's TraceSink: it writes through to the Trace and keeps
// the two lists that make the messages endpoint exact (h.mu guards them):
//
//   - written: records traced but not yet published (the last records of
//     the Trace, which may still arrive on the stream after the cursor);
//   - untraced: messages published but not yet traced (the run's input,
//     tool_list_ready), which history must still include.
//
// The engine traces a message on the consumer's goroutine right before
// delivering it, so every record traced during one NextBatch is in that
// batch or is never streamed (a context summary, a compaction prompt).
type sink struct {
	h *Host
	w engine.TraceSink
}

func (s sink) Write(ctx context.Context, m omni.Message) error {
	h := s.h
	key := string(m.AppendJSON(nil))
	// h.mu is held from before the record reaches the Trace until its key
	// is in written: a Messages call in between would read the record in
	// the Trace without counting it as unpublished, and a client would
	// then get it twice, from history and from the stream.
	h.mu.Lock()
	defer h.mu.Unlock()
	met := h.reg.cfg.Metrics
	if err := s.w.Write(ctx, m); err != nil {
		if met != nil {
			met.TraceErrors.Add(1)
		}
		return err
	}
	h.traceBytes += int64(len(key)) + 1
	if met != nil {
		met.TraceBytes.Add(int64(len(key)) + 1)
	}
	if m.Payload.Type == omni.CompactionEnd && m.Payload.Rest != nil && m.Payload.Rest.Status == omni.StatusCompleted {
		// The model context is a new one; the Trace's next file, which
		// holds it, starts at the next write (E-13.11).
		h.traceBytes = 0
	}
	for i, u := range h.untraced {
		if u.key == key {
			h.untraced = append(h.untraced[:i:i], h.untraced[i+1:]...)
			return nil
		}
	}
	h.written = append(h.written, key)
	return nil
}

// Rotate starts the Trace's next file, after a compaction: its size counts
// from nothing again.
func (s sink) Rotate() error {
	if err := s.w.Rotate(); err != nil {
		if m := s.h.reg.cfg.Metrics; m != nil {
			m.TraceErrors.Add(1)
		}
		return err
	}
	s.h.mu.Lock()
	s.h.traceBytes = 0
	s.h.mu.Unlock()
	return nil
}

type keyed struct {
	key string
	msg omni.Message
}

// published notes one recordable message published on the channel; h.mu is
// held.
func (h *Host) published(m *omni.Message, key string) {
	if !m.Recordable() {
		return
	}
	for i, w := range h.written {
		if w == key {
			h.written = append(h.written[:i:i], h.written[i+1:]...)
			return
		}
	}
	h.untraced = append(h.untraced, keyed{key, *m})
}

// Messages is the messages endpoint's answer (TRANSPORT.md §6).
type Messages struct {
	State   string
	Pending []omni.Message // tool calls awaiting a decision
	// History is the Trace's records (every file, in order) followed by
	// the messages already published on the stream but not yet traced.
	History []omni.Message
	// Cursor is the channel's last id: every complete message published up
	// to it is in History.
	Cursor string
	// History[TailStart:TailStart+Tail] are the Trace's last records not
	// yet published at Cursor: they may still arrive on the stream.
	TailStart, Tail int
	// Live is set while a run or compaction is in flight; Fragments are
	// then the open fragments as of Cursor.
	Live      bool
	Fragments []omni.Message
}

// Messages returns history, cursor and live snapshot as of one instant of
// the stream.
func (h *Host) Messages(ctx context.Context) (Messages, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	history, last, err := h.reg.history(ctx, h.id)
	if err != nil {
		return Messages{}, err
	}
	if h.sess == nil && compactionOpen(history[last:]) {
		// A compaction a crash cut off is closed by the session's resume
		// (E-17.4), which comes at its first run: it is closed now, as a
		// resume at its opening did, so that no client reads a history
		// that later grows before its end. A session another process
		// holds is that process's to close.
		if release, err := h.reg.lock(h.id); err == nil {
			err = h.resume()
			if err == nil {
				h.letGo(true)
			}
			release()
			if err == nil {
				if history, _, err = h.reg.history(ctx, h.id); err != nil {
					return Messages{}, err
				}
			}
		}
	}
	tail := len(h.written)
	start := len(history) - tail
	for _, u := range h.untraced {
		history = append(history, u.msg)
	}
	out := Messages{State: h.state, History: history, Cursor: h.channel().LastID(), TailStart: start, Tail: tail}
	for _, a := range h.pending {
		out.Pending = append(out.Pending, a.call)
	}
	if h.state != "idle" {
		out.Live = true
		out.Fragments = h.agg.Open()
	}
	return out, nil
}
