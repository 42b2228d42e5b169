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
	Reason string
	Mode   string
}

// Replay rebuilds the engine state from the records of one Trace file, the
// highest-index file of a session (ENGINE.md E-17.1–E-17.3). Messages it
// synthesizes — resume placeholders, the rebuilt [context_summary] — are
// stamped with now. It writes nothing; [Resume] closes a dangling
// compaction.
func Replay(records []omni.Message, now time.Time) Replayed {
	stamp := omni.FormatTimestamp(now)
	var r Replayed
	for i := range records {
		if records[i].Type == omni.TypeSessionMeta {
			m := records[i]
			r.Meta = &m
			break
		}
	}
	r.Dangling = danglingCompaction(records)
	snap := &r.Snapshot
	snap.MetaWritten = r.Meta != nil
	snap.SessionTokens, snap.LastRequestTotal = lastTokens(records)

	if closedContext(records) { // E-17.2
		end := records[len(records)-1].Payload
		if end.Mode() != omni.ModeSummarize {
			snap.ContextClosed, snap.LastRequestTotal, snap.Compacted = true, 0, true
			return r
		}
		if s := engine.ExtractSummary(lastCompletedRequestText(records)); s != "" {
			msg := omni.UserText(engine.ContextSummary(s))
			msg.Timestamp = stamp
			snap.ContextClosed, snap.LastRequestTotal, snap.PendingSummary, snap.Compacted = true, 0, &msg, true
			return r
		}
		// An empty summary voids the closure: replay the context normally.
	}

	n := 0 // the complete model messages: the history is made once (appended to, it grew a quarter at a time)
	for i := range records {
		if records[i].Type == omni.TypeModelMsg && !records[i].IsPartial() {
			n++
		}
	}
	rp := replayer{stamp: stamp, committedSet: map[string]bool{}, answered: map[string]bool{}, history: make([]omni.Message, 0, n)}
	for i := range records {
		rp.step(&records[i])
	}
	snap.History, snap.CarryOver = rp.finish()
	snap.SessionTurns = rp.turns
	return r
}

// replayer is the E-17.3 state machine.
type replayer struct {
	stamp string

	history  []omni.Message
	pending  []omni.Message // user-side input not yet committed
	snapshot []omni.Message // the open request's input
	outputs  []omni.Message // the open request's assistant messages
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
			rp.history = append(rp.history, rp.placeholder(id))
			rp.answered[id] = true
		}
	}
	rp.history = append(rp.history, eligible...)
	rp.history = append(rp.history, rp.outputs...)
	for id := range inEligible {
		rp.answered[id] = true
	}
	for i := range rp.outputs {
		m := &rp.outputs[i]
		if id := m.Payload.ToolCallID; m.IsRealToolCall() && id != "" && !rp.committedSet[id] {
			rp.committedSet[id] = true
			rp.committed = append(rp.committed, id)
		}
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
	return rp.history, carry
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

// lastTokens returns the session counts of the last token_usage and the
// request total of the last token_usage (E-17.1).
func lastTokens(records []omni.Message) (session omni.TokenCounts, requestTotal int64) {
	var haveSession, haveRequest bool
	for i := len(records) - 1; i >= 0 && !(haveSession && haveRequest); i-- {
		m := &records[i]
		if !m.IsEvent(omni.TokenUsage) {
			continue
		}
		if !haveSession && m.Payload.Session() != nil {
			session, haveSession = *m.Payload.Session(), true
		}
		if !haveRequest && m.Payload.Request() != nil {
			requestTotal, haveRequest = m.Payload.Request().Total, true
		}
	}
	return session, requestTotal
}

// closedContext reports whether the file ends with a completed compaction.
func closedContext(records []omni.Message) bool {
	if len(records) == 0 {
		return false
	}
	last := &records[len(records)-1]
	return last.IsEvent(omni.CompactionEnd) && last.Payload.Status() == omni.StatusCompleted
}

// lastCompletedRequestText concatenates the assistant text bodies of the
// last request that ended completed (even when they are empty).
func lastCompletedRequestText(records []omni.Message) string {
	var text, current string
	inRequest := false
	for i := range records {
		m := &records[i]
		switch {
		case m.IsEvent(omni.RequestBegin):
			inRequest, current = true, ""
		case m.IsEvent(omni.RequestEnd):
			if m.Payload.Status() == omni.StatusCompleted {
				text = current
			}
			inRequest = false
		case inRequest && m.IsModel(omni.Text) && m.Payload.Role == omni.RoleAssistant:
			current += m.Payload.Text
		}
	}
	return text
}

// danglingCompaction returns the compaction left open at the end of the
// records, if any.
func danglingCompaction(records []omni.Message) *DanglingCompaction {
	var open *DanglingCompaction
	for i := range records {
		m := &records[i]
		switch {
		case m.IsEvent(omni.CompactionBegin):
			open = &DanglingCompaction{Reason: m.Payload.Reason(), Mode: m.Payload.Mode()}
		case m.IsEvent(omni.CompactionEnd):
			open = nil
		}
	}
	return open
}
