// Package conformance runs the engine's conformance scenarios (the JSON
// format "omni-conformance/1") against package engine.
//
// A scenario scripts everything around one session: the LLM of each session
// id, the tools by tool_call_id, the approver, and the runs with their input,
// abort and steering hooks. [Run] builds the session with those scripted
// callbacks, an injected clock whose Sleep returns at once, and one trace
// sink per session id, consumes every run, and compares what it observed
// with the scenario's expectations.
//
//	scenarios, err := conformance.LoadDir(dir)
//	for _, s := range scenarios {
//		res := conformance.Run(ctx, s, conformance.Options{})
//		if !res.Pass {
//			fmt.Println(res.ID, res.Diff)
//		}
//	}
//
// # Order and determinism
//
// The consumer takes one message at a time (Run.Next) and, before asking for
// the next one, runs the hooks that message triggers; only then are scripts
// waiting on it woken. Script waits block on a broadcast channel the consumer
// closes on every message, or on the abort signal of the callback that waits:
// nothing polls and nothing sleeps. The injected clock's Now advances 1 ms per
// call from a fixed instant; timestamps are never compared.
//
// # Comparison
//
// Messages are compared as JSON values after encoding with the omni codec:
// key order is irrelevant, an absent key differs from a null one, numbers
// compare by value, the envelope's timestamp is ignored and an empty origin is
// the same as none. Streams, trace files and LLM inputs are compared position
// by position, tool executions as a multiset, sleeps and approver calls as
// exact lists. Only the expectations a scenario lists are checked.
//
// A scenario also fails on an unscripted LLM request or tool execution, a
// tool executed twice, an approval without an entry or with the wrong
// origin, a steer whose result differs from its expect, a scripted request
// or tool left unused, a hook that never fired, and any engine diagnostic of
// kind "panic". [Result.Diff] names the first of these: where, expected, got.
//
// # Resume check
//
// With [Options.Resume] each session writes its Trace through a
// trace.Writer to a trace.Store ([StoreTrace]), and after the last run every
// session that wrote one is resumed from it (trace.Resume, ENGINE.md §17).
// The resumed history must equal the committed content of the engine's
// current LLM context — for each completed request of the last context
// object, the input the scripted LLM received followed by the complete
// model messages it emitted — and the carry-over, pending summary,
// session_turns, session_tokens, last_request_total and the pending
// rotation must equal the engine's Snapshot. What the engine held is first
// rewritten by one named rule per documented difference a resume cannot
// rebuild (synthetic [turn_aborted]/[turn_retried] blocks, case-A
// placeholders, Trace order of tool outputs, …; see normalize.go); any
// other difference fails the scenario.
//
// # Cancellation and time-outs
//
// Run never hangs: after [Options.Timeout] (or when its context is
// cancelled) it releases every script wait, aborts the run in flight and
// returns a failure listing what was still blocked, without waiting for the
// engine to unwind.
//
// # What it refuses
//
// Load refuses unknown keys, a format other than [Format], malformed
// messages and malformed conditions, so a misspelt expectation cannot pass.
// [LoadDir] turns such a file into a Scenario with Err set; Run reports it as
// that scenario's failure.
package conformance
