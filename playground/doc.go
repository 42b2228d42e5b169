// Package playground is the offline demo behind the playground page: a
// scripted model, a small in-memory workspace with its file tools, the view model
// that turns the engine's ordered stream into bubbles and tool cards, and a
// runner that drives one engine session for a user interface.
//
// It is pure Go (no syscall/js), so everything here is tested natively; the
// browser side (package web/ui) only renders what this package produces.
//
// # The scripted model
//
// [Model] is an [engine.LLM] that needs no network. For a new prompt it
// streams its thinking and a short reply, then calls list_files and
// count_lines; once the tool outputs come back it streams a summary built from
// those outputs (and from any steering the engine delivered) and ends the
// task. It honours cancellation the way ENGINE.md §1 asks: an open fragment is
// closed with stop_reason "aborted" and the outcome is "aborted".
//
// # Pacing
//
// Model and tools wait between fragments through a [Pace] so that a person can
// watch the stream; tests use no pacing. Waiting is the only use of time.
//
// # Order and concurrency
//
// [Transcript] is not safe for concurrent use: feed it from the one goroutine
// that owns the view. [Runner] is safe for concurrent use; it calls its
// deliver function from one goroutine, in stream order.
package playground
