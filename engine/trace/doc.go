// Package trace persists a session's Trace and resumes a session from it.
//
// A Trace is the session's record of what happened: its session_meta, its
// input, every complete model message and every event, one JSON line per
// record (PROTOCOL.md §7–§8). One file holds one model context; a completed
// compaction starts the next file. This package provides the storage
// ([Store], [MemStore], [FileStore]), the writing side ([Writer], an
// engine.TraceSink), the reading side ([ReadFile]) and resume ([Replay],
// [Resume]) of ENGINE.md §16–§17.
//
// # Storage
//
// A [Store] appends whole records to (session id, file index) and lists,
// reads, imports ([Store.Create], refusing an existing id with [ErrExists])
// and deletes sessions. Every method takes a context because the browser
// build implements Store over IndexedDB, which is asynchronous. A function
// of this package handed a nil Store returns an error wrapping
// [ErrInvalid] that names it (natively: the WebAssembly build leaves
// these checks out). [FileStore] uses the reference layout <root>/<yyyy-mm-dd>/<session_id>_<NNN>.jsonl, so
// its directories can be exchanged with the reference implementation.
// Where another process may write the same directory, hold a session with
// [FileStore.Lock] around its resume and each run: a lock another process
// holds is an error wrapping [ErrBusy], a lock file it cannot make, write
// or read one wrapping [ErrLockFile]; one it took while this process was
// stopped refuses the session's writes with [ErrLockLost], after which
// the session is resumed from its Trace.
//
// # Writing
//
// A [Writer] encodes each message with the omni codec as one line and
// appends it. Writes are serialized and a record is never split. Rotate only
// moves to the next index: the file appears with its first record, so no
// empty file is ever created. Continuing a file whose last line was torn by
// a crash heals it first (P-13); [Writer.WriteRecord] reports that.
//
// # Reading
//
// [ReadFile] is tolerant (P-12): blank lines are ignored, a torn last line
// is dropped silently, a malformed line elsewhere is skipped with a
// diagnostic, every decodable record is kept. [Parsed.Strict] turns skipped
// lines into an error for importers that refuse mid-file corruption.
//
// A [Batcher] wraps a Store whose appends must not be waited for (the
// IndexedDB store): Append queues, a goroutine writes the queue in order,
// grouped per file, and [Batcher.Flush] waits until it is written.
//
// # Sessions as a whole
//
// [List] lists the sessions with their first prompt, newest first (cheaply
// for a [Summarizer]), and says which are a subagent's child session
// (Summary.Source). [Export] returns a session's files named in the
// reference layout; [Import] checks files as one session's Trace (strictly:
// a malformed line is refused with its file and line) and stores them with
// Store.Create. [Records] reads a session's records, every file in order,
// as [ReadFile] reads each; [History] also puts each subagent child's
// records after the pointer that names it, as the parent's stream showed
// them, to render a stored session again. [ExportTree], [ImportTree] and
// [DeleteTree] take a session with its subagents' child sessions
// ([Children]) as one, following a pointer only to a Trace that starts
// with a subagent's session_meta.
//
// # Resume
//
// [Resume] reads the highest-index file of a session (a part at a time
// from a store that is a [PartReader]), replays it a record at a time
// ([Replay]: committed requests become the history, uncommitted input the
// carry-over, unanswered tool calls get "[interrupted: process exited before
// the tool finished]" outputs, a completed summarize compaction at the end
// becomes the pending [context_summary]), closes a dangling compaction as
// failed, and returns the engine.Snapshot, the session_meta and a Writer
// positioned to continue the same file. Resume matches the reference
// implementation's resume field by field.
//
// Nothing here reads the wall clock: callers pass the time, and FileStore
// dates a session by its first record.
package trace
