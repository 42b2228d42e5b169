package trace

import (
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// Replayed is the state rebuilt from the records of one Trace file
// (ENGINE.md §17).
type Replayed struct {
	// Meta is the file's first session_meta: the runtime configuration.
	// nil means the file is not resumable.
	Meta *omni.Message
	// Snapshot is the engine state to start from. MetaWritten is true when
	// Meta is set.
	Snapshot engine.Snapshot
	// Dangling is the last compaction_begin that has no compaction_end
	// after it (E-17.4), or nil.
	Dangling *DanglingCompaction
}

// DanglingCompaction identifies a compaction the Trace opened but never
// closed.
type DanglingCompaction struct {
	// Reason is the compaction_begin's reason: "context", "turns" or
	// "manual" (PROTOCOL.md §5).
	Reason string
	// Mode is the compaction_begin's mode: "summarize" or "discard".
	Mode string
}

// Replay rebuilds the engine state from the records of one Trace file, the
// highest-index file of a session (ENGINE.md E-17.1–E-17.3). Messages it
// synthesizes — resume placeholders, the rebuilt [context_summary] — are
// stamped with now. It writes nothing; [Resume] closes a dangling
// compaction.
func Replay(records []omni.Message, now time.Time) Replayed {
	r := newReplay(now)
	for i := range records {
		r.add(&records[i])
	}
	return r.done()
}

// replay is Replay's walk, a record at a time: [Resume] feeds it the
// records as it reads them, and keeps none.
type replay struct {
	rp       replayer
	meta     *omni.Message
	dangling *DanglingCompaction
	session  omni.TokenCounts // of the last token_usage that has them (E-17.1)
	total    int64            // the request total of the last token_usage that has one
	closed   bool             // the last record is a completed compaction_end (E-17.2)
	mode     string           // its mode
	records  int

	inRequest  bool
	text, last []string // the assistant texts of the open request, of the last completed one
}

// newReplay starts a walk.
func newReplay(now time.Time) *replay {
	return &replay{rp: replayer{stamp: omni.FormatTimestamp(now), committedSet: map[string]bool{}, answered: map[string]bool{}}}
}

// add walks one record; it keeps no pointer to m.
func (r *replay) add(m *omni.Message) {
	r.records++
	r.closed = false
	switch {
	case m.Type == omni.TypeSessionMeta:
		if r.meta == nil {
			meta := *m
			r.meta = &meta
		}
	case m.IsEvent(omni.CompactionBegin):
		r.dangling = &DanglingCompaction{Reason: m.Payload.Reason(), Mode: m.Payload.Mode()}
	case m.IsEvent(omni.CompactionEnd):
		r.dangling = nil
		r.closed, r.mode = m.Payload.Status() == omni.StatusCompleted, m.Payload.Mode()
	case m.IsEvent(omni.TokenUsage):
		if s := m.Payload.Session(); s != nil {
			r.session = *s
		}
		if q := m.Payload.Request(); q != nil {
			r.total = q.Total
		}
	case m.IsEvent(omni.RequestBegin):
		r.inRequest, r.text = true, r.text[:0]
	case m.IsEvent(omni.RequestEnd):
		if m.Payload.Status() == omni.StatusCompleted {
			r.last, r.text = r.text, r.last[:0]
		}
		r.inRequest = false
	case r.inRequest && m.IsModel(omni.Text) && m.Payload.Role == omni.RoleAssistant:
		r.text = append(r.text, m.Payload.Text)
	}
	r.rp.step(m)
}

// done ends the walk.
func (r *replay) done() Replayed {
	out := Replayed{Meta: r.meta, Dangling: r.dangling}
	snap := &out.Snapshot
	snap.MetaWritten = r.meta != nil
	snap.SessionTokens, snap.LastRequestTotal = r.session, r.total
	if r.closed {
		if r.mode != omni.ModeSummarize {
			snap.ContextClosed, snap.LastRequestTotal, snap.Compacted = true, 0, true
			return out
		}
		text := "" // the assistant text of the last request that ended completed
		for _, t := range r.last {
			text += t
		}
		if s := engine.ExtractSummary(text); s != "" {
			msg := omni.UserText(engine.ContextSummary(s))
			msg.Timestamp = r.rp.stamp
			snap.ContextClosed, snap.LastRequestTotal, snap.PendingSummary, snap.Compacted = true, 0, &msg, true
			return out
		}
		// An empty summary voids the closure: replay the context normally.
	}
	snap.History, snap.CarryOver = r.rp.finish()
	snap.SessionTurns = r.rp.turns
	return out
}

// replayer is the E-17.3 state machine.
type replayer struct {
	stamp string

	history  []omni.Message   // the block of the history being filled
	full     [][]omni.Message // the blocks filled before it
	pending  []omni.Message   // user-side input not yet committed
	snapshot []omni.Message   // the open request's input
	outputs  []omni.Message   // the open request's assistant messages
	// own counts the user texts at the end of pending that a compaction
	// wrote itself (its prompt, its guidance); ownTail those at the end of
	// snapshot. They are never carried over: a compaction that did not
	// complete leaves the input it folded in as it was, nothing more.
	own, ownTail int

	inRequest    bool
	inCompaction bool
	committed    []string // real tool call ids in history, in commit order
	committedSet map[string]bool
	answered     map[string]bool
	turns        int64
}

func (rp *replayer) step(m *omni.Message) {
	switch m.Type {
	case omni.TypeEventMsg:
		switch m.Payload.Type {
		case omni.RequestBegin:
			if rp.inRequest {
				rp.drop()
			}
			rp.snapshot, rp.pending, rp.inRequest, rp.ownTail, rp.own = rp.pending, nil, true, rp.own, 0
		case omni.RequestEnd:
			if m.Payload.Status() == omni.StatusCompleted {
				rp.commit()
			} else {
				rp.drop()
			}
		case omni.CompactionBegin:
			rp.inCompaction = true
		case omni.CompactionEnd:
			rp.inCompaction = false
			rp.dropOwn()
		}
	case omni.TypeModelMsg:
		if m.IsPartial() {
			return
		}
		if m.Payload.Role == omni.RoleUser {
			rp.pending = append(rp.pending, *m)
			rp.own++
			if !rp.inCompaction || m.IsModel(omni.ToolCallOutput) {
				rp.own = 0
			}
		} else if rp.inRequest {
			rp.outputs = append(rp.outputs, *m)
		}
	}
}

// commit handles a completed request_end.
func (rp *replayer) commit() {
	eligible := rp.eligible(rp.snapshot)
	inEligible := map[string]bool{}
	for i := range eligible {
		if id, ok := outputID(&eligible[i]); ok {
			inEligible[id] = true
		}
	}
	for _, id := range rp.committed {
		if !rp.answered[id] && !inEligible[id] {
			rp.keep(rp.placeholder(id))
			rp.answered[id] = true
		}
	}
	rp.keep(eligible...)
	rp.keep(rp.outputs...)
	for id := range inEligible {
		rp.answered[id] = true
	}
	for i := range rp.outputs {
		m := &rp.outputs[i]
		id := m.Payload.ToolCallID
		if !m.IsRealToolCall() || id == "" {
			continue
		}
		if !rp.committedSet[id] {
			rp.committedSet[id] = true
			rp.committed = append(rp.committed, id)
		}
		// A call that reuses the id of an earlier request's (a model
		// server numbering its calls afresh) awaits an output of its own.
		delete(rp.answered, id)
	}
	if !rp.inCompaction {
		rp.turns++
	}
	rp.snapshot, rp.outputs, rp.inRequest = nil, nil, false
}

// drop handles a request that did not complete: its input goes back in
// front of pending, but for a compaction's own texts (its prompt, its
// guidance); its output is lost. The input a compaction folded in (tool
// outputs, a manual compaction's carry-over, texts included) stays, as the
// engine keeps it (E-13.12, E-13.13).
func (rp *replayer) drop() {
	keep := rp.snapshot[:len(rp.snapshot)-rp.ownTail]
	rp.pending = append(keep[:len(keep):len(keep)], rp.pending...)
	rp.snapshot, rp.outputs, rp.inRequest = nil, nil, false
}

// dropOwn drops a compaction's own texts that no request sent.
func (rp *replayer) dropOwn() {
	rp.pending, rp.own = rp.pending[:len(rp.pending)-rp.own], 0
}

// finish ends the walk and returns the history and the carry-over.
func (rp *replayer) finish() (history, carry []omni.Message) {
	if rp.inRequest {
		rp.drop()
	}
	rp.dropOwn()
	carry = rp.eligible(rp.pending)
	paired := map[string]bool{}
	for i := range carry {
		if id, ok := outputID(&carry[i]); ok {
			paired[id] = true
		}
	}
	for _, id := range rp.committed {
		if !rp.answered[id] && !paired[id] {
			carry = append(carry, rp.placeholder(id))
		}
	}
	return rp.joined(), carry
}

// keep appends msgs to the history. It is kept in blocks, each twice the
// last up to 4,096 messages, and joined once at the end: appended to one
// slice, it was copied at every growth (five times its size allocated in
// all), and a replay of records not yet read cannot count it first.
func (rp *replayer) keep(msgs ...omni.Message) {
	for len(msgs) > 0 {
		h := rp.history
		if len(h) == cap(h) {
			if cap(h) > 0 {
				rp.full = append(rp.full, h)
			}
			h = make([]omni.Message, 0, min(max(2*cap(h), 16), 4096))
		}
		n := copy(h[len(h):cap(h)], msgs)
		rp.history, msgs = h[:len(h)+n], msgs[n:]
	}
}

// joined returns the history in one slice of its length.
func (rp *replayer) joined() []omni.Message {
	n := len(rp.history)
	for _, b := range rp.full {
		n += len(b)
	}
	out := make([]omni.Message, 0, n)
	for i, b := range rp.full {
		out = append(out, b...)
		rp.full[i] = nil
	}
	return append(out, rp.history...)
}

// eligible keeps every message except tool outputs whose call is not
// committed or already answered.
func (rp *replayer) eligible(msgs []omni.Message) []omni.Message {
	var out []omni.Message
	for i := range msgs {
		if id, ok := outputID(&msgs[i]); ok && (!rp.committedSet[id] || rp.answered[id]) {
			continue
		}
		out = append(out, msgs[i])
	}
	return out
}

func (rp *replayer) placeholder(id string) omni.Message {
	m := omni.ToolOutput(id, engine.InterruptedByExit, omni.StatusAborted)
	m.Timestamp = rp.stamp
	return m
}

// outputID returns the tool_call_id of a complete tool_call_output.
func outputID(m *omni.Message) (string, bool) {
	if !m.IsModel(omni.ToolCallOutput) {
		return "", false
	}
	p := &m.Payload
	return p.ToolCallID, p.ToolCallID != "" || p.Has("tool_call_id")
}
