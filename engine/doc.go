// Package engine is Floe's agent loop: the OmniMessage context engine of
// ENGINE.md, in pure Go. The model (LLM), the tools (Environment) and the
// approver are interfaces the host implements; the engine owns ordering,
// approvals, concurrency, retries, carry-over, steering, compaction,
// subagents and the Trace.
//
// # Sessions and runs
//
// A [Session] is one conversation with one stateful LLM context and one
// Trace. [Session.Start] begins a run with the new input (the Prompt) and
// returns a [Run], a pull stream of protocol messages; [Session.Run] returns
// the same stream as an iter.Seq for a range loop. At most one run or manual
// compaction is in flight per session ([ErrBusy]).
//
// # Order
//
// The stream is one total order. The LLM driver and every running tool push
// into one merge queue; the consumer takes messages in arrival order, so
// tool outputs appear in completion order while the next request receives
// them in call order. Every message is written to the Trace in the same
// step that hands it to the consumer, so Trace order is stream order. The
// run makes progress only as the consumer asks for messages: the next
// request, steering delivery, compaction and the end of the run happen only
// after the consumer has taken every earlier message (E-3.2).
//
// # Cancellation
//
// Cancelling the run's context is the user abort: the LLM and the tools see
// it, a pending approval stops being waited for, a backoff wait ends. The
// engine still waits for the LLM and every dispatched tool to return, builds
// the carry-over for the next run and ends the stream with an abort event.
// Leaving a range loop early ([Run.Close]) is the same abort.
//
// # Failures
//
// Callbacks never fail the run with a Go error: a failed LLM request is a
// request_end with its status (and an automatic reconnect with backoff), a
// failed tool is its tool_call_output, a failing approver denies. Panics in
// callbacks are recovered at the goroutine root and become those same
// answers, plus a "panic" [Diagnostic]. Trace write errors are diagnostics
// only, and so is a Trace sink's panic (a nil *trace.Writer in
// Config.Trace, say); a panic in OnDiagnostic itself is dropped. A message that breaks the protocol (an invalid message, a fragment
// out of discipline) ends the LLM attempt as malformed; an invalid tool
// message is dropped with a diagnostic.
//
// # Time
//
// The engine never reads the clock or sleeps except through [Clock], so
// tests drive backoff and timestamps with a fake (see package enginetest).
package engine
