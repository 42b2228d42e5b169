//go:build js && wasm

// Package jsbridge is the only place where JavaScript values become Go
// values and back. It adapts the JavaScript callbacks of a session (the
// model, the tools, the approver, the clock, the trace sink) to the
// engine's interfaces, and exposes sessions and runs to the thin ESM shim
// static/floe.mjs.
//
// # Shape of the boundary
//
// Crossing the boundary is costly (a JS→Go call costs about 10 µs), so the
// bridge moves messages in batches, one string per batch: streamed
// fragments as compact records, every other message as JSON (records.go):
//
//   - Consumer side: JavaScript asks for a batch (pull). A goroutine calls
//     [engine.Run.NextEach]: it waits for the next message (performing
//     run-level steps as Next does) and takes with it every message that is
//     already produced, in one coroutine switch. This keeps the pull
//     semantics of ENGINE.md E-3.2: a run-level step happens only after
//     JavaScript took every earlier message and asked for more.
//   - Producer side (the model's and the tools' async iterators): the shim
//     drains the iterator and hands Go batches of messages; one goroutine
//     per callback asks for a batch, decodes it, emits each message in
//     order and watches its context.
//
// Option objects are read field by field with a type check each, so an
// error names the field ("createSession: config.maxTurns: want a number,
// got string"); no reflection-based converter is linked (size).
//
// Every reply from JavaScript (a batch, a settled Promise) comes back
// through one exported Go function with a numeric id; no js.Func is made
// per call, so nothing can call a released function.
//
// # Guarantees
//
//   - A Go function called from JavaScript never blocks: it returns at once,
//     with a Promise when the work may wait.
//   - Every js.FuncOf body and every goroutine of the bridge opens with one
//     recover helper: a Go panic becomes a rejected Promise or a failed
//     callback result and a diagnostic, and the runtime stays alive.
//   - Misuse of the API is an Error with name "FloeError", a code
//     ("bad_argument", "session_busy", "closed", "internal") and a message
//     naming the argument.
//   - The bridge holds no protocol rule: a throwing approver is returned to
//     the engine as an error, a failing tool as an error, a throwing model
//     as a failed outcome (ENGINE.md E-1.2); what follows is the engine's.
//
// # Cancellation
//
// An AbortSignal maps to one context cancel, its cause the signal's reason;
// its listener is removed when the run ends. When a callback's context is
// cancelled the bridge aborts the AbortSignal it handed to the callback,
// with that reason when the run's signal is what cancelled it (else an
// AbortError), and keeps taking what the callback
// still produces (ENGINE.md E-9.2). When the engine abandons a callback
// that did not finish within its abort grace (engine.Config.AbortGrace,
// from abortGraceMs; the engine's timer, not the bridge's), the bridge stops
// waiting (GenerateParams.Abandoned, ToolRequest.Abandoned) and asks the
// callback's iterator to return.
package jsbridge
