package conformance

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

// resumeAt is the instant a resume check hands to trace.Resume; it stamps
// the messages replay synthesizes (timestamps are never compared).
var resumeAt = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// resumeProblems is the resume check of a finished scenario (Options.Resume):
// for the top-level session and every subagent session whose sink wrote a
// Trace, resume a fresh state from that Trace (ENGINE.md §17) and compare it
// with what the engine held: the committed history of the current LLM
// context (as the scripted LLM saw it), the carry-over, the pending summary
// and the counters. The engine's side is normalized first (normalize.go);
// fired counts the normalization rules that changed something.
func (w *world) resumeProblems(ctx context.Context, fired map[string]int) []string {
	w.mu.Lock()
	top := w.top
	ids := make([]string, 0, len(w.sessions))
	for id := range w.sessions {
		ids = append(ids, id)
	}
	w.mu.Unlock()
	slices.Sort(ids)
	var ps []string
	for _, id := range ids {
		var sess *engine.Session
		if top != nil && top.ID() == id {
			sess = top
		} else {
			w.handleMu.Lock()
			if h := w.handles[id]; h != nil {
				sess = h.Session()
			}
			w.handleMu.Unlock()
		}
		if sess == nil {
			continue // an LLM script of a session that was never created
		}
		if d := w.resumeSession(ctx, id, sess, fired); d != "" {
			ps = append(ps, d)
		}
	}
	return ps
}

// resumeSession checks one session; "" when the resumed state equals the
// normalized engine state, otherwise the first difference.
func (w *world) resumeSession(ctx context.Context, id string, sess *engine.Session, fired map[string]int) string {
	where := "resume " + id
	w.mu.Lock()
	st := w.sessions[id]
	sink := st.sink
	held := heldSession{
		calls:            slices.Clone(st.raw),
		toolOutputs:      maps.Clone(w.toolOutputs),
		compactionPrompt: st.compactionPrompt,
		fired:            fired,
	}
	current := st.contexts
	given := maps.Clone(w.given)
	w.mu.Unlock()
	held.given = func(m *omni.Message) bool { return given[m.Timestamp] }

	ts, ok := sink.(TraceStorer)
	if !ok {
		return fmt.Sprintf("%s: sink %T does not write to a trace.Store", where, sink)
	}
	res, err := trace.Resume(ctx, ts.Store(), ts.SessionID(), func() time.Time { return resumeAt })
	if errors.Is(err, trace.ErrNotFound) {
		return "" // the session wrote no Trace
	}
	if err != nil {
		return fmt.Sprintf("%s: %v", where, err)
	}
	if res.Dangling != nil {
		return fmt.Sprintf("%s: the Trace ends inside a compaction (reason %q, mode %q); the engine closed it", where, res.Dangling.Reason, res.Dangling.Mode)
	}
	if res.Parsed.TornTail || len(res.Parsed.Skipped) > 0 {
		return fmt.Sprintf("%s: file %d read with %d malformed line(s), torn tail %t", where, res.Index, len(res.Parsed.Skipped), res.Parsed.TornTail)
	}
	snap := sess.Snapshot()
	want := resumeView{
		history:      held.normalizedHistory(current),
		carry:        held.normalizedCarry(snap.CarryOver),
		summary:      snap.PendingSummary,
		turns:        snap.SessionTurns,
		tokens:       snap.SessionTokens,
		requestTotal: snap.LastRequestTotal,
		closed:       snap.ContextClosed,
		metaWritten:  snap.MetaWritten,
	}
	r := res.Snapshot
	got := resumeView{
		history:      r.History,
		carry:        r.CarryOver,
		summary:      r.PendingSummary,
		turns:        r.SessionTurns,
		tokens:       r.SessionTokens,
		requestTotal: r.LastRequestTotal,
		closed:       r.ContextClosed,
		metaWritten:  r.MetaWritten,
	}
	if d := compareResume(want, got); d != "" {
		return fmt.Sprintf("%s (file %d): %s", where, res.Index, d)
	}
	return ""
}

// resumeView is the part of a session's state a resume must rebuild.
type resumeView struct {
	history, carry []omni.Message
	summary        *omni.Message
	turns          int64
	tokens         omni.TokenCounts
	requestTotal   int64
	closed         bool
	metaWritten    bool
}

// compareResume names the first difference, engine (expected) against
// resumed (got); "" if none.
func compareResume(want, got resumeView) string {
	if d := compareMessages("history", values(want.history), values(got.history)); d != "" {
		return d
	}
	if d := compareMessages("carry_over", values(want.carry), values(got.carry)); d != "" {
		return d
	}
	switch {
	case (want.summary == nil) != (got.summary == nil):
		return fmt.Sprintf("pending_summary: expected %s got %s", showMsg(want.summary), showMsg(got.summary))
	case want.summary != nil:
		if d := diffPath(valueOf(*want.summary), valueOf(*got.summary), ""); d != "" {
			return fmt.Sprintf("pending_summary (%s): expected %s got %s", d, showMsg(want.summary), showMsg(got.summary))
		}
	}
	switch {
	case want.turns != got.turns:
		return fmt.Sprintf("session_turns: expected %d got %d", want.turns, got.turns)
	case want.tokens != got.tokens:
		return fmt.Sprintf("session_tokens: expected %s got %s", showJSON(want.tokens), showJSON(got.tokens))
	case want.requestTotal != got.requestTotal:
		return fmt.Sprintf("last_request_total: expected %d got %d", want.requestTotal, got.requestTotal)
	case want.closed != got.closed:
		return fmt.Sprintf("context_closed: expected %t got %t", want.closed, got.closed)
	case want.metaWritten != got.metaWritten:
		return fmt.Sprintf("meta_written: expected %t got %t", want.metaWritten, got.metaWritten)
	}
	return ""
}

func values(msgs []omni.Message) []any {
	out := make([]any, len(msgs))
	for i, m := range msgs {
		out[i] = valueOf(m)
	}
	return out
}

func showMsg(m *omni.Message) string {
	if m == nil {
		return "null"
	}
	return show(valueOf(*m))
}
