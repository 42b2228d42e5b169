package playground

import (
	"bytes"
	"context"
	"errors"
	"sync"

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
// without the subagents' child sessions (session_meta source "subagent"),
// which are shown, and deleted, with their parent. It remembers which
// session is a child (a session's first record never changes), so each
// session's first file is read once. Safe for concurrent use.
type Sessions struct {
	mu    sync.Mutex
	child map[string]bool
}

// List lists the sessions of store, most recent activity first.
func (s *Sessions) List(ctx context.Context, store trace.Store) ([]trace.Summary, error) {
	all, err := trace.List(ctx, store)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, sum := range all {
		s.mu.Lock()
		child, known := s.child[sum.ID]
		s.mu.Unlock()
		if !known {
			child, err = isSubagent(ctx, store, sum.ID)
			if errors.Is(err, trace.ErrNotFound) {
				continue // deleted meanwhile
			}
			if err != nil {
				// Shown, so that it can still be exported or deleted.
				out = append(out, sum)
				continue
			}
			s.mu.Lock()
			if s.child == nil {
				s.child = map[string]bool{}
			}
			s.child[sum.ID] = child
			s.mu.Unlock()
		}
		if !child {
			out = append(out, sum)
		}
	}
	return out, nil
}

// isSubagent reports whether the first record of the stored session id is
// a subagent's session_meta.
func isSubagent(ctx context.Context, store trace.Store, id string) (bool, error) {
	files, err := store.Files(ctx, id)
	if err != nil {
		return false, err
	}
	data, err := store.ReadFile(ctx, id, files[0].Index)
	if err != nil {
		return false, err
	}
	line, _, _ := bytes.Cut(data, []byte("\n"))
	var m omni.Message
	if err := m.UnmarshalJSON(line); err != nil {
		return false, nil // not a session_meta: a session of its own, which says why when opened
	}
	return m.Type == omni.TypeSessionMeta && m.Payload.Source() == omni.SourceSubagent, nil
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
