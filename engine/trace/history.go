package trace

import (
	"context"
	"errors"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/internal/errf"
)

// MaxSubagentDepth bounds how deep [History], [Children] (and so
// [ExportTree] and [DeleteTree]) and [ImportTree] follow subagent
// pointers: a child's children, and theirs, down to this many levels
// below the session asked for.
const MaxSubagentDepth = 8

// Records returns every record of the stored session id, file by file in
// index order, each file read tolerantly as [ReadFile] reads it (P-12: a
// torn last line and a malformed line are left out). ErrNotFound when the
// session has no file.
func Records(ctx context.Context, store Store, id string) ([]omni.Message, error) {
	if native && store == nil {
		return nil, nilStore("records", id)
	}
	infos, err := store.Files(ctx, id)
	if err != nil {
		return nil, err
	}
	var out []omni.Message
	for _, fi := range infos {
		data, err := store.ReadFile(ctx, id, fi.Index)
		if err != nil {
			return nil, err
		}
		p, err := ReadFile(data)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = p.Records // one file, most sessions: not copied
		} else {
			out = append(out, p.Records...)
		}
	}
	return out, nil
}

// History returns the stored session id as a run of it showed it: its
// records as [Records] reads them and, after each subagent pointer record
// (E-15.3), the records of the child session it names, read the same way,
// each with the child's id prepended to its origin, as the child's messages
// arrived in the parent's stream. A child's own children are followed too,
// [MaxSubagentDepth] deep. A child whose Trace is not stored (a session
// stored before children were, or imported without them) is left out, and
// so are a session whose Trace does not start with a subagent's
// session_meta (source "subagent", E-15.1: a pointer in a Trace made by
// hand may name any session of the store) and a session already read: a
// pointer at the session itself, at an ancestor, or a second one at a
// child (an imported Trace may have them; each read the whole chain again,
// millions of reads for a few of them). A child that does not read is
// left out too, as by [Children]: the records come back with the first
// such error, naming the child (a nil result means id itself did not
// read). ErrNotFound when id has no file; ctx's error, and no records,
// when ctx ends during the read.
func History(ctx context.Context, store Store, id string) ([]omni.Message, error) {
	var first error
	recs, err := history(ctx, store, id, 0, map[string]bool{id: true}, &first)
	if err != nil {
		return nil, err
	}
	return recs, first
}

// history reads session id, depth pointers below the one asked for; seen
// holds the sessions read, first the first child that did not read.
func history(ctx context.Context, store Store, id string, depth int, seen map[string]bool, first *error) ([]omni.Message, error) {
	read := Records
	if depth > 0 {
		read = childRecords
	}
	recs, err := read(ctx, store, id)
	if err != nil || depth >= MaxSubagentDepth {
		return recs, err
	}
	var out []omni.Message // made at the first pointer: most sessions have none
	for i, r := range recs {
		child, ok := SubagentPointer(r)
		if !ok {
			if out != nil {
				out = append(out, r)
			}
			continue
		}
		if out == nil {
			out = append(make([]omni.Message, 0, len(recs)+16), recs[:i]...)
		}
		out = append(out, r)
		if seen[child] {
			continue
		}
		seen[child] = true
		crecs, err := history(ctx, store, child, depth+1, seen, first)
		if err != nil {
			if ctx.Err() != nil {
				// The caller gave up: not a child that does not read.
				return nil, ctx.Err()
			}
			if *first == nil && !errors.Is(err, ErrNotFound) {
				*first = errf.Errorf("subagent session %s left out: %w", QuoteID(child), err)
			}
			continue
		}
		for _, c := range crecs {
			c.Origin = append([]string{child}, c.Origin...)
			out = append(out, c)
		}
	}
	if out == nil {
		return recs, nil
	}
	return out, nil
}

// childRecords returns the records of session id, which a subagent
// pointer names, as [Records] does; ErrNotFound unless its Trace starts
// with the session_meta of a subagent's child session (E-15.1), as every
// child session the engine writes does. A pointer is a record like any
// other: one in a Trace imported from a file may name a session of the
// store's own, which reading, exporting or deleting that Trace would then
// take as its own (in a browser, every session of the site shares one
// store).
func childRecords(ctx context.Context, store Store, id string) ([]omni.Message, error) {
	recs, err := Records(ctx, store, id)
	if err != nil {
		return nil, err
	}
	if !subagentTrace(recs) {
		return nil, opErr("read", id, 0, errf.Errorf("%w: not a subagent's child session (its Trace does not start with a session_meta of source \"subagent\")", ErrNotFound))
	}
	return recs, nil
}

// subagentTrace reports whether recs start with the session_meta of a
// subagent's child session.
func subagentTrace(recs []omni.Message) bool {
	return len(recs) > 0 && recs[0].Type == omni.TypeSessionMeta && recs[0].Payload.Source() == omni.SourceSubagent
}

// SubagentPointer returns the child session id of a subagent pointer
// record (E-15.3) of a session's own (without origin: not one a child
// forwarded), and whether m is one naming a valid session id
// ([ValidateID]). It does not say whether that session is stored, or is
// a subagent's: [History] and [Children] check that.
func SubagentPointer(m omni.Message) (string, bool) {
	if m.Type != omni.TypeEventMsg || m.Payload.Type != omni.Subagent || len(m.Origin) > 0 {
		return "", false
	}
	id := m.Payload.SessionID()
	// An id no store can name (a Trace made elsewhere, or by hand) points
	// at nothing: readers pass it over as they do a child not stored.
	return id, id != "" && ValidateID(id) == nil
}
