package trace

import (
	"context"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/internal/errf"
)

// Resumed is everything a host needs to restart a session from its Trace.
type Resumed struct {
	SessionID string
	Index     int    // the file that was replayed: the session's highest index
	Parsed    Parsed // how that file read (torn tail, skipped lines); not its Records and Lines: a host keeps the Resumed with the session

	// Meta is the file's first session_meta: pass it as engine.Config.Meta.
	Meta omni.Message
	// Snapshot is the state to pass as engine.Config.Resume.
	Snapshot engine.Snapshot
	// Dangling is the compaction that was left open, now closed as failed.
	Dangling *DanglingCompaction
	// Writes lists what Resume itself appended (E-17.4), in order.
	Writes []Written
	// Writer continues appending to file Index: pass it as
	// engine.Config.Trace. After a closed context the engine rotates it
	// before its first write.
	Writer *Writer
}

// Resume restarts a session from its Trace (ENGINE.md §17): it reads the
// highest-index file tolerantly, as [ReadFile] does (a part at a time from
// a [PartReader]: it holds the history and a part, not the file and its
// records), or the one before when a crash cut that file's first write
// (no record in it: the compaction's rotation into it is made again, and
// Index is the file read), replays each record as its line ends, and, when a compaction
// was left open, writes compaction_end{reason, mode, status:"failed"}
// before anything else (E-17.4). now stamps the messages Resume synthesizes and writes:
// time.Now, or the Now of the session's engine.Clock (a nil now is refused
// with ErrInvalid).
//
// ctx bounds Resume's own store calls (and the compaction_end it may
// write); the returned Writer's calls are bounded by the ctx of each Write.
// Resume takes no lock: where another process may write the same
// directory, hold FileStore.Lock around it and the session's runs.
//
// Errors: ErrNotFound when the session has no file, ErrNotResumable when the
// file holds no session_meta, ErrInvalid (naming the line) when a tool call
// or output lacks its tool_call_id or a request repeats one
// ([Parsed.CheckCalls]); store errors as they come.
func Resume(ctx context.Context, store Store, sessionID string, now func() time.Time) (*Resumed, error) {
	if now == nil {
		return nil, opErr("resume", sessionID, 0, errf.Errorf("%w: nil clock", ErrInvalid))
	}
	if native && store == nil {
		return nil, nilStore("resume", sessionID)
	}
	files, err := store.Files(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, opErr("resume", sessionID, 0, ErrNotFound)
	}
	k := len(files) - 1
	index := files[k].Index
	at := now()
	var (
		rp     *replay
		parsed Parsed
	)
	for {
		rp = newReplay(at)
		seen := callIDs{}
		lr := lineReader{record: func(m *omni.Message, line int) error {
			if err := seen.check(m, line); err != nil {
				return err
			}
			rp.add(m)
			return nil
		}}
		var bad error // the file's (not the store's)
		err = readParts(ctx, store, sessionID, index, func(part []byte) error {
			bad = lr.write(part)
			return bad
		})
		var torn bool
		if err == nil {
			torn, bad = lr.end()
		}
		if bad != nil {
			return nil, opErr("resume", sessionID, index, bad)
		}
		if err != nil {
			return nil, err
		}
		parsed = Parsed{Skipped: lr.skipped, TornTail: torn}
		if rp.records > 0 || len(lr.skipped) > 0 || k == 0 {
			break
		}
		// A crash during the first write of a file a compaction rotated
		// to: the session goes on from the file before, and its next
		// write rotates into this one again (healing a torn line).
		k--
		index = files[k].Index
	}
	r := rp.done()
	if r.Meta == nil {
		why := "no session_meta"
		if rp.records == 0 && parsed.TornTail && index == 1 {
			// A crash during the session's first write: a new session of
			// the id replaces it (BatcherOptions.Fresh).
			why += ": its only line was cut short (a crash during its first write); create the session again, or delete it"
		}
		return nil, opErr("resume", sessionID, index, errf.Errorf("%w: %s", ErrNotResumable, why))
	}
	if index > 1 { // only a completed compaction starts a new file (E-13.11)
		r.Snapshot.Compacted = true
	}
	res := &Resumed{
		SessionID: sessionID,
		Index:     index,
		Parsed:    parsed,
		Meta:      *r.Meta,
		Snapshot:  r.Snapshot,
		Dangling:  r.Dangling,
		Writer:    NewWriter(store, sessionID, index),
	}
	if d := r.Dangling; d != nil {
		end := omni.Event(omni.Payload{Type: omni.CompactionEnd, Rest: &omni.Rest{Reason: d.Reason, Mode: d.Mode, Status: omni.StatusFailed}})
		end.Timestamp = omni.FormatTimestamp(at)
		w, err := res.Writer.WriteRecord(ctx, end)
		if err != nil {
			return nil, err
		}
		res.Writes = append(res.Writes, w)
	}
	return res, nil
}
