package engine

import (
	"context"
	"errors"
	"time"

	"github.com/floehq/floe/engine/omni"
)

// Status is the status of an LLM request: one of the six stop reasons
// (PROTOCOL.md §4). The omni.Status* constants are untyped and convert
// implicitly.
type Status string

// The six statuses of an Outcome.
const (
	StatusCompleted Status = omni.StatusCompleted
	StatusFailed    Status = omni.StatusFailed
	StatusAborted   Status = omni.StatusAborted
	StatusTimeout   Status = omni.StatusTimeout
	StatusMalformed Status = omni.StatusMalformed
	StatusAuth      Status = omni.StatusAuth
)

// Outcome is the terminal result of one LLM request (ENGINE.md §1).
type Outcome struct {
	Status       Status // one of the six stop reasons; any other value is a failed attempt (E-1.2)
	ErrorMessage string // optional detail; "" = absent
	Permanent    bool   // only meaningful with Status "failed": do not retry
	// Cut, with Status "completed", says why the provider cut the reply
	// short (its output-token limit, its context window, its content
	// filter, a refusal, a pause of its own tools), as the provider put
	// it (`stop_reason "max_tokens"`); PROTOCOL.md has no stop reason for
	// that, so the engine reports it as a DiagLLM diagnostic wrapping
	// ErrReplyCut, which names the cause of a reason it knows (the first
	// quoted word of Cut: length, max_tokens, max_output_tokens,
	// model_context_window_exceeded, model_length, content_filter,
	// sensitive, refusal, pause_turn). A Cut with another Status is
	// ignored. "" = not cut.
	Cut string
	// RetryAfter, with a retryable Status, is the wait the provider asked
	// for before another request (an HTTP Retry-After): the engine's
	// retry waits it when it is longer than the backoff's delay, and
	// announces it as retry_in_ms. 0 = none.
	RetryAfter time.Duration
}

// GenerateParams is the input of one LLM request.
type GenerateParams struct {
	NewMessages   []omni.Message // only the new input, never history (E-3.1)
	ThinkingLevel string         // "" = the LLM's default; compaction requests never set it

	// SystemPrompt is the session_meta's system_prompt and Tools the
	// session's tool list (Config.ToolList), so a model adapter needs
	// nothing passed to it separately. Both are the same on every request
	// of a session; adapters must not modify Tools.
	SystemPrompt string
	Tools        []omni.ToolDefinition

	// Abandoned is closed when the engine abandons this request: the LLM
	// did not return within Config.AbortGrace of the run's abort, and the
	// request has ended without it. An adapter waiting on something the
	// call holds (a JavaScript promise) stops waiting then.
	Abandoned <-chan struct{}

	// EmitBatch emits ms in order, as emit would one message at a time,
	// but queues the streamed fragments among them under one hold of the
	// stream's lock and wakes the run's consumer once: an adapter that
	// decodes several messages at once (a network chunk, a batch from
	// JavaScript) hands them over together. It does not keep ms. Like
	// emit it may block for backpressure and never fails, and it is not
	// called once StreamGenerate has returned. The engine sets it; an LLM
	// called by other code may find it nil.
	EmitBatch func(ms []omni.Message)
}

// LLM is one stateful model context (ENGINE.md §1, E-1.1). StreamGenerate
// sends NewMessages as the next input, streams the reply through emit in
// order, and returns the outcome. It must honour ctx by closing any open
// fragment and returning Status "aborted" promptly. emit may block for
// backpressure; it never fails. A panic is recovered and treated as a failed
// attempt (E-1.2).
type LLM interface {
	StreamGenerate(ctx context.Context, p GenerateParams, emit func(omni.Message)) Outcome
}

// LLMFunc adapts a function to LLM.
type LLMFunc func(ctx context.Context, p GenerateParams, emit func(omni.Message)) Outcome

// StreamGenerate calls f.
func (f LLMFunc) StreamGenerate(ctx context.Context, p GenerateParams, emit func(omni.Message)) Outcome {
	return f(ctx, p, emit)
}

// HistoryLoader is an optional ability of an LLM: a resumed session hands
// the replayed history to a fresh context before its first request, and only
// when the history is non-empty (ENGINE.md E-17.6).
type HistoryLoader interface {
	LoadHistory(ctx context.Context, history []omni.Message) error
}

// LLMFactory returns a fresh model context after a compaction; it receives
// the session's cumulative tokens (E-13.10). A nil LLM fails every request
// of the new context permanently, naming Config.NewLLM (no retry).
type LLMFactory func(sessionTokens omni.TokenCounts) LLM

// ToolRequest is one approved tool call handed to the Environment.
type ToolRequest struct {
	ToolCall omni.Message // the tool_call message as streamed
	Approve  Approver     // the run's approver (nil = deny all), for tools that spawn subagents

	// Abandoned is closed when the engine abandons this tool call (see
	// GenerateParams.Abandoned); the call already has its failed output.
	Abandoned <-chan struct{}

	// EmitBatch emits ms in order, as the tool's emit would one message
	// at a time, but queues the fragments of the call's output among them
	// under one hold of the stream's lock: an environment that receives
	// several messages at once (a batch from JavaScript) hands them over
	// together. It does not keep ms. Like emit it may block for
	// backpressure and never fails. The engine sets it; a tool called by
	// other code may find it nil.
	EmitBatch func(ms []omni.Message)
}

// Environment runs approved tool calls (ENGINE.md §1, §6). ExecuteTool emits
// the tool's messages in order; returning an error is a tool failure (E-6.5).
//
// Each allowed call runs on a goroutine of its own, concurrently with the
// model's stream and the other calls, so ExecuteTool must be safe for
// concurrent use. Its output is the last tool_call_output it emits for
// req.ToolCall's tool_call_id, else one built from its
// partial_tool_call_output deltas (NoOutput for none); a returned error
// then adds ToolErrorPrefix and the error's text, status failed (after a
// tool_call_output it is only a DiagTool diagnostic). ctx is done when the run is
// aborted: a tool should return then (a call still running
// Config.AbortGrace later is abandoned with a failed output). emit must
// not be called after ExecuteTool has returned: such messages are dropped
// with a DiagTool diagnostic.
type Environment interface {
	ExecuteTool(ctx context.Context, req ToolRequest, emit func(omni.Message)) error
}

// EnvironmentFunc adapts a function to Environment.
type EnvironmentFunc func(ctx context.Context, req ToolRequest, emit func(omni.Message)) error

// ExecuteTool calls f.
func (f EnvironmentFunc) ExecuteTool(ctx context.Context, req ToolRequest, emit func(omni.Message)) error {
	return f(ctx, req, emit)
}

// Decision is an approver's answer about one real tool call (ENGINE.md §5).
type Decision string

// The three decisions (the omni.Decision* constants convert implicitly).
const (
	DecisionAllow     Decision = omni.DecisionAllow
	DecisionDeny      Decision = omni.DecisionDeny
	DecisionForbidden Decision = omni.DecisionForbidden
)

// Approver decides one real tool call: DecisionAllow, DecisionDeny or
// DecisionForbidden. An error, a panic or any other value means deny (E-5.4).
//
// The engine asks as the model's stream delivers the complete tool_call,
// which is already in the run's stream: the consumer may take it before
// or after the approver is called (a prompt printed by the approver can
// come before the consumer prints the call). Calls are asked one at a
// time, in call order, and the model's stream waits for each answer.
// ctx is the run's and is done on abort; the engine then stops waiting
// (E-5.5), but the approver's own goroutine runs on until it returns, so
// an approver that blocks (on stdin, on a user) should return once ctx is
// done (and may say so with RunOptions.ApproveHonorsCancel).
type Approver func(ctx context.Context, toolCall omni.Message) (Decision, error)

// TraceSink receives the session's Trace records in order (ENGINE.md §16).
// Writes are best-effort: an error is reported as a diagnostic and the run
// goes on (E-16.7). Rotate makes the next Write go to the next file.
//
// ctx is context.WithoutCancel of the run's context: it carries the run's
// values but never its cancellation, so a sink that honours cancellation
// still writes every record, the one being written when the abort lands
// and those that end the aborted run (its request_end, synthesized outputs,
// the final abort record) alike.
type TraceSink interface {
	Write(ctx context.Context, msg omni.Message) error
	Rotate() error
}

// Timer starts the engine's one timeout that is not a backoff wait: the
// abort grace (Config.AbortGrace). It is apart from Clock, whose Sleep
// serves the backoff waits only (E-1.4).
type Timer interface {
	// AfterFunc calls f on its own goroutine once d has elapsed, unless
	// stop is called first; stop reports whether it prevented the call.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// Clock is the engine's only source of time and of waiting (E-1.4). A
// message without a timestamp is stamped with Now as it enters the engine
// (a callback's emit, the engine's own events), never when the consumer
// reads it.
type Clock interface {
	Now() time.Time
	// Sleep waits d; it returns false if ctx was cancelled first.
	Sleep(ctx context.Context, d time.Duration) bool
}

// Compaction configures automatic compaction (ENGINE.md §13).
type Compaction struct {
	MaxContextLength int64  // > 0: compact when the last request's total reaches it
	MaxSessionTurns  int64  // > 0: compact when the context's turn count reaches it
	Mode             string // omni.ModeSummarize or omni.ModeDiscard
	Prompt           string // the summarize request's prompt
}

// Config configures a Session (ENGINE.md §2).
type Config struct {
	Meta        omni.Message // the session's session_meta message (required)
	LLM         LLM          // the initial model context (required)
	NewLLM      LLMFactory   // fresh context after compaction; compaction needs it
	Environment Environment  // runs approved tools; nil fails every call
	// ToolList is the tools the model is offered: GenerateParams.Tools of
	// every request, and the tool_list_ready that the session's first run
	// streams and each Trace file holds after its session_meta.
	// The engine does not check a call's name against it: every approved
	// call goes to Environment, which fails a name it does not know.
	ToolList []omni.ToolDefinition

	MaxTurns int // turns per run; ≤ 0 = no cap
	// MaxReconnects is the retries per turn (ENGINE.md §10): 0 = default
	// 5; < 0 = none, for a program that should fail at once. An attempt
	// that ends timeout (the network: a refused connection, a wrong
	// port), malformed or failed (not Permanent) is tried again after
	// ReconnectBackoffMs, doubled at each retry up to
	// ReconnectBackoffMaxMs: with the defaults a server that is not there
	// ends the run about a minute later (2+4+8+16+30 s), with the abort
	// "reconnect failed after 5 retries". Each attempt's request_end says
	// why (ErrorMessage: a built-in adapter names the URL, without its
	// query or credentials, and the network's error) and, when a retry
	// follows, the wait before it (RetryInMs): print them to show the
	// retries. Session.SkipReconnectWait ends a wait.
	MaxReconnects           int
	ReconnectBackoffMs      int // backoff base; 0 = default 2000; < 0 = 0
	ReconnectBackoffMaxMs   int // backoff ceiling; 0 = default 30000; < 0 = 0
	CompactionMaxReconnects int // retries per compaction; 0 = MaxReconnects; < 0 = none
	Compaction              *Compaction

	Clock Clock     // nil = the system clock
	Trace TraceSink // nil = no Trace

	// AbortGrace is how long an LLM or tool callback may run on after the
	// run's abort before the engine abandons it: the request ends aborted,
	// or the tool's call gets a failed output, at once, and whatever the
	// callback emits later is dropped. 0 = 1 s; < 0 = never abandon.
	// Timer (nil = real time) measures it.
	AbortGrace time.Duration
	Timer      Timer

	// FoldInputImages is set for a model without vision (ENGINE.md
	// E-11.6): the engine hands it each steering entry that holds an
	// image_url, before wrapping the entry into its [user_steering] block,
	// and delivers what it returns instead — typically the entry with each
	// image saved somewhere and replaced by a user text
	// "[attached image: <path>]", so the path lands inside the block. A run's
	// own input is the host's to fold before Start, as in the reference. An
	// error, a panic or a result that still holds an image_url drops the
	// entry's images: the block says so and a DiagLLM diagnostic names why.
	// It must not modify its argument.
	FoldInputImages func(ctx context.Context, input []omni.Message) ([]omni.Message, error)

	// Resume, when set, starts the session from replayed state (ENGINE.md §17).
	Resume *Snapshot

	// OnDiagnostic receives failures that do not change the stream: trace
	// write errors, approver errors, recovered panics. May be nil.
	OnDiagnostic func(Diagnostic)
}

// Snapshot is the state a resumed session starts from (ENGINE.md E-17.5).
type Snapshot struct {
	History []omni.Message // injected into the LLM before the first request (HistoryLoader)
	// CarryOver is input the model never answered (an aborted or failed
	// run's prompt, tool outputs a cut-off run left, interrupted calls'
	// outputs): sent first in the next request, before its new messages.
	CarryOver []omni.Message
	// PendingSummary is the user text "[context_summary]…" a summarize
	// compaction left for the next request (it goes before CarryOver);
	// nil = none.
	PendingSummary *omni.Message
	// SessionTurns counts the requests of the current model context that
	// reported token_usage (a compaction starts it again at 0): what
	// Compaction.MaxSessionTurns is compared with.
	SessionTurns int64
	// SessionTokens are the session's totals, the last token_usage's
	// session counts: a resumed model adapter counts on from them
	// (openai.Options.SessionTokens and the others').
	SessionTokens omni.TokenCounts
	// LastRequestTotal is the last request's total tokens (the size of
	// the context): what Compaction.MaxContextLength is compared with.
	LastRequestTotal int64
	ContextClosed    bool // the next Trace write rotates first
	MetaWritten      bool // the Trace already holds this session's session_meta
	// Compacted: the current context was started by a completed compaction
	// (or the next one will be, ContextClosed), so Compactability answers
	// CompactJustCompacted until its first turn, as after a live compaction.
	Compacted bool
}

// RunOptions are the per-run options (ENGINE.md §3).
type RunOptions struct {
	Approve       Approver // nil ⇒ deny everything (E-5.3)
	ThinkingLevel string   // forwarded to every turn request of the run

	// ApproveHonorsCancel promises that Approve returns as soon as its ctx
	// is done (the JavaScript bridge's approver does). The engine then
	// calls it directly instead of on a goroutine of its own that it can
	// stop waiting for (E-5.5): one goroutine less per tool call.
	ApproveHonorsCancel bool
}

// DiagnosticKind names what a Diagnostic is about.
type DiagnosticKind string

// Every kind a Diagnostic has.
const (
	DiagTrace    DiagnosticKind = "trace"    // a Trace write or rotation failed (E-16.7)
	DiagApprover DiagnosticKind = "approver" // an approver failed or answered neither allow, deny nor forbidden: deny (E-5.4)
	DiagTool     DiagnosticKind = "tool"     // a tool's message was dropped, or it failed after its output (E-6.6)
	DiagLLM      DiagnosticKind = "llm"      // an LLM's message was dropped or not dispatched; LoadHistory failed
	DiagPanic    DiagnosticKind = "panic"    // a callback or the engine panicked (Stack is set)
	DiagSubagent DiagnosticKind = "subagent" // a subagent run could not start
	DiagClock    DiagnosticKind = "clock"    // an embedding's Clock failed (reported by adapters such as the JavaScript bridge)
)

// Diagnostic is a failure that the engine reports but that does not change
// the stream.
type Diagnostic struct {
	Kind  DiagnosticKind
	Err   error  // what failed, for a person to read
	Stack []byte // for Kind DiagPanic
}

// Errors returned by the Session API.
var (
	// ErrBusy: a run or manual compaction is already in flight (E-3.3).
	ErrBusy = errors.New("engine: session busy: a run is already in flight")
	// ErrClosed: the session was closed.
	ErrClosed = errors.New("engine: session closed")
	// errNotNew and errNilContext: Start, Compact or a SubagentHandle's
	// Start of a Session (handle) New (NewSubagent) did not make, or with
	// a nil context.
	errNotNew     = errors.New("engine: Session not made by engine.New")
	errNilContext = errors.New("engine: nil context")
	// ErrInvalidInput: a message handed to Start or Steer is not a valid
	// OmniMessage. The errors wrap it (errors.Is) and the validation error.
	ErrInvalidInput = errors.New("engine: invalid input")
	// ErrReplyCut is wrapped by the DiagLLM diagnostic of a reply the
	// provider cut short: an Outcome with Status "completed" and a Cut,
	// which the error names. Test Diagnostic.Err with errors.Is. The
	// reply itself stays completed, as far as it went, in the stream
	// and the Trace.
	ErrReplyCut = errors.New("the provider cut the reply short")
)

// Compactability answers Session.Compactability (E-13.13).
const (
	CompactOK            = "ok"
	CompactUnsupported   = "unsupported"
	CompactEmpty         = "empty"
	CompactJustCompacted = "just_compacted"
)
