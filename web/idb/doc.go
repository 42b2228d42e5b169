//go:build js && wasm

// Package idb is a [trace.Store] over IndexedDB, for the browser build.
//
// # Layout
//
// One database per origin (the name given to [New]; Floe uses "floe"),
// whose version is the schema version ([Version]); opening an older
// database runs the upgrade steps from its version on, so later versions
// can migrate what earlier ones stored. Three object stores, with keys
// given on each put:
//
//   - "records": [session id, file index, ordinal] → Uint8Array, the bytes
//     of one append (one or more whole records). Key order is file order,
//     so a file reads back with one getAll over its key range.
//   - "files": [session id, file index] → [index, size, chunks, last,
//     modified]: the size, the next ordinal, the last byte (to heal a torn
//     tail, PROTOCOL.md P-13) and the modification time in ms.
//   - "sessions": session id → [id, firstPrompt, lastActivity, size,
//     files]: what a session list shows, kept as appends land, so that
//     listing reads one small row per session.
//
// Rows are arrays rather than objects: less code in the WebAssembly build.
//
// # Guarantees
//
// Each method is one transaction: an append writes its records, the file
// row and the session row together or not at all, so a crash loses at most
// appends whose transaction had not committed, never a record in the
// middle. Read-modify-write steps run inside the transaction's success
// callbacks (one js.Func per transaction receives all its events), so concurrent appends (several goroutines, several tabs) are
// serialized by IndexedDB and never interleave inside a record. A file
// this Store wrote, created or listed that another Store (another tab)
// deleted is made again only by an append that starts it with a
// session_meta; any other fails wrapping [trace.ErrNotFound], so that a
// session deleted elsewhere does not come back without its head.
//
// Every method blocks its goroutine until the transaction has completed
// (or ctx is done, which aborts it): call it from a goroutine, never from a
// js.FuncOf body. Wrap the Store in a [trace.Batcher] so that a run does
// not wait for IndexedDB per record.
//
// # Errors
//
// Errors are [*trace.Error] values naming the operation and the session:
// IndexedDB missing (private browsing in some browsers, or no browser)
// wraps [ErrUnavailable]; an upgrade blocked by another tab that keeps an
// older version open wraps [ErrBlocked]; a database created by a newer
// version, a full quota (QuotaExceededError) and other failures carry the
// DOMException's name and message. A Store is safe for concurrent use.
package idb
