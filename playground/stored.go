package playground

import (
	"context"
	"slices"
	"strings"
	"time"

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

// Imported dates an imported session, which a store dates by its last
// write, the import: Last is the time of its last record
// ([LastRecordTime]) and Stored the time its import ended (Unix
// milliseconds). A store that says the session was written after Stored
// had it used since.
type Imported struct {
	Last   int64 `js:"last"`
	Stored int64 `js:"stored"`
}

// DateImported returns list (a [Sessions.List]) with the last activity of
// each session of imported that was not written since its import the
// time of its last record, most recent activity first again (then by
// id), and imported without the sessions that are gone or were written
// since. It changes neither list nor imported.
func DateImported(list []trace.Summary, imported map[string]Imported) ([]trace.Summary, map[string]Imported) {
	if len(imported) == 0 {
		return list, imported
	}
	out := slices.Clone(list)
	kept := map[string]Imported{}
	for i := range out {
		im, ok := imported[out[i].ID]
		if !ok || out[i].LastActivity.After(time.UnixMilli(im.Stored)) {
			continue
		}
		out[i].LastActivity = time.UnixMilli(im.Last)
		kept[out[i].ID] = im
	}
	slices.SortStableFunc(out, func(a, b trace.Summary) int {
		if c := b.LastActivity.Compare(a.LastActivity); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, kept
}

// LastRecordTime returns the timestamp of the last record of the stored
// session id whose timestamp reads (its last file's; a torn or damaged
// line is passed over), and whether there is one.
func LastRecordTime(ctx context.Context, store trace.Store, id string) (time.Time, bool) {
	infos, err := store.Files(ctx, id)
	if err != nil || len(infos) == 0 {
		return time.Time{}, false
	}
	for i := len(infos) - 1; i >= 0; i-- {
		data, err := store.ReadFile(ctx, id, infos[i].Index)
		if err != nil {
			return time.Time{}, false
		}
		p, err := trace.ReadFile(data)
		if err != nil {
			continue
		}
		for j := len(p.Records) - 1; j >= 0; j-- {
			if t, err := omni.ParseTimestamp(p.Records[j].Timestamp); err == nil {
				return t, true
			}
		}
	}
	return time.Time{}, false
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
