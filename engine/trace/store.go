package trace

import (
	"context"
	"time"
)

// Store keeps Trace files: for each session, files numbered from 1, each an
// append-only sequence of JSONL records (PROTOCOL.md §8). Implementations:
// [MemStore], [FileStore]; the browser build implements it over IndexedDB,
// which is why every method takes a context.
//
// What every implementation does (package tracetest's TestStore checks it):
//   - Every error is an [*Error] naming the session (and file) it is about,
//     wrapping ErrNotFound, ErrExists, ErrInvalid or the store's own error.
//   - A session id that [ValidateID] refuses, a file index below 1, and
//     Append data that is not whole lines are ErrInvalid, and store nothing.
//   - A context already done fails the call with an error wrapping its
//     ctx.Err(), and changes nothing.
//   - It is safe for concurrent use: of concurrent Creates of one id exactly
//     one succeeds, and of concurrent Appends creating a file exactly one
//     reports Created.
//   - Every later call sees what a call that returned did (read your
//     writes; a listing that lags is a bug): [Resume] reads Files, then
//     the highest-index file, and a session server finds a session with
//     Files.
//   - Byte slices returned are the caller's: no later call changes them.
//   - A store that persists (not MemStore) keeps what a call that
//     returned did for the store that opens the same storage next (a new
//     process, a page reloaded, an object woken again): every append
//     acknowledged, the last one too, byte for byte; the sessions and
//     their files' indexes; a delete; a torn last line as it was, healed
//     by the next append, and the heal. A store that writes later what
//     it acknowledged (write-behind) must write it before it is dropped
//     (package tracetest's TestReopen checks this part).
//
// A store of one's own may also be a [PartReader] (a resume reads a part at
// a time) and a [Summarizer] (a session list reads no file). The session
// server (transport/host) also holds a session across processes through
// its store when the store has a method Lock(id string) (release func(),
// err error), as [FileStore.Lock].
type Store interface {
	// Append appends data — one or more whole records, each ending in "\n" —
	// to file index of the session, creating the session and the file as
	// needed, as one write: a record is never split, concurrent appends
	// never interleave inside a record, and appends one after another are
	// read back in that order. When the file exists and its last
	// byte is not "\n" (a torn tail), Append first writes "\n" (PROTOCOL.md
	// P-13) and reports Healed. Append must not retain data.
	Append(ctx context.Context, sessionID string, index int, data []byte) (AppendResult, error)

	// Files lists the session's files in ascending index order; ErrNotFound
	// when the session has none.
	Files(ctx context.Context, sessionID string) ([]FileInfo, error)

	// ReadFile returns the bytes of one file; ErrNotFound if it is missing.
	ReadFile(ctx context.Context, sessionID string, index int) ([]byte, error)

	// Sessions lists every stored session, ordered by id (as Go compares
	// strings: byte by byte), a deleted one no longer.
	Sessions(ctx context.Context) ([]SessionInfo, error)

	// Create stores an imported session: files[k-1] becomes file k, byte for
	// byte. It refuses an id that already has a file with ErrExists and
	// stores nothing in that case; no files at all are ErrInvalid.
	Create(ctx context.Context, sessionID string, files [][]byte) error

	// Delete removes every file of the session; ErrNotFound if it has none.
	Delete(ctx context.Context, sessionID string) error
}

// PartReader is an optional ability of a [Store]: ReadParts hands one file
// to part a part at a time, in order, so that a reader holds a part rather
// than the file ([Resume] uses it when present; other stores are read
// through ReadFile). A part is valid only during its call: part must not
// keep it. An error part returns ends the read and is returned as it is;
// the others are ReadFile's (ErrNotFound, ErrTooLarge, the store's own).
// [FileStore] and [MemStore] are PartReaders: a Store that embeds one and
// replaces its ReadFile must replace ReadParts too, or a resume reads
// through the embedded one's.
type PartReader interface {
	ReadParts(ctx context.Context, sessionID string, index int, part func([]byte) error) error
}

// partBytes is the size of the parts MemStore and FileStore hand over.
const partBytes = 64 << 10

// readParts reads file index of the session into part: a part at a time
// from a [PartReader], whole from another store.
func readParts(ctx context.Context, store Store, id string, index int, part func([]byte) error) error {
	if pr, ok := store.(PartReader); ok {
		return pr.ReadParts(ctx, id, index, part)
	}
	data, err := store.ReadFile(ctx, id, index)
	if err != nil {
		return err
	}
	return part(data)
}

// AppendResult describes what one Store.Append did.
type AppendResult struct {
	Created bool // the append created the file
	Healed  bool // a "\n" was written first to end a torn last line (P-13)
}

// FileInfo describes one Trace file.
type FileInfo struct {
	Index    int
	Size     int64     // bytes
	Modified time.Time // zero when the store does not know
}

// SessionInfo summarizes one stored session for a session list.
type SessionInfo struct {
	ID           string
	Files        int       // number of files (the highest index is the current context)
	Size         int64     // total bytes over all files
	LastActivity time.Time // last modification; zero when the store does not know
}
