package playground

import (
	"context"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

// A subagent's child session writes a Trace of its own, under its own id
// (ENGINE.md E-15.6); the parent's Trace holds only a pointer record,
// subagent{session_id}, written when the child starts (E-15.3). The
// functions here read a stored session with its children's records, list
// the sessions a person started (not their children), and delete a session
// with its children.

// Sessions lists the stored sessions a person started: [trace.List]
// without the subagents' child sessions (session_meta source "subagent",
// trace.Summary.Source), which are shown, and deleted, with their parent.
type Sessions struct{}

// List lists the sessions of store, most recent activity first.
func (s *Sessions) List(ctx context.Context, store trace.Store) ([]trace.Summary, error) {
	all, err := trace.List(ctx, store)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, sum := range all {
		if sum.Source != omni.SourceSubagent {
			out = append(out, sum)
		}
	}
	return out, nil
}

// LastAbort reports the reason of the abort that ended a stored session's
// last run, when the session's own last record is one (a run stopped, or
// given up on, rather than cut off by the page going away). recs are
// [trace.History]'s: a subagent's records, with an origin, are passed over.
func LastAbort(recs []omni.Message) (string, bool) {
	for i := len(recs) - 1; i >= 0; i-- {
		m := &recs[i]
		if len(m.Origin) > 0 {
			continue
		}
		if m.Payload.Type != omni.Abort {
			return "", false
		}
		if m.Payload.ReasonNull() {
			return "no reason given", true
		}
		return m.Payload.Reason(), true
	}
	return "", false
}

// StoredCallIDs returns the ids of a stored session's own tool calls, for
// Options.CallIDs.
func StoredCallIDs(recs []omni.Message) []string {
	var ids []string
	for i := range recs {
		if p := &recs[i].Payload; p.Type == omni.ToolCall && len(recs[i].Origin) == 0 {
			ids = append(ids, p.ToolCallID)
		}
	}
	return ids
}
