package engine

import (
	"context"
	"errors"
	"time"

	"github.com/floehq/floe/engine/omni"
)

// Outcome is the terminal result of one LLM request (ENGINE.md §1).
type Outcome struct {
	Status       string // one of the six stop reasons (omni.Status*)
	ErrorMessage string // optional detail; "" = absent
	Permanent    bool   // only meaningful with Status "failed": do not retry
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
// the session's cumulative tokens (E-13.10).
type LLMFactory func(sessionTokens omni.TokenCounts) LLM

// ToolRequest is one approved tool call handed to the Environment.
type ToolRequest struct {
	ToolCall omni.Message // the tool_call message as streamed
	Approve  Approver     // the run's approver (nil = deny all), for tools that spawn subagents
}

// Environment runs approved tool calls (ENGINE.md §1, §6). ExecuteTool emits
// the tool's messages in order; returning an error is a tool failure (E-6.5).
type Environment interface {
	ExecuteTool(ctx context.Context, req ToolRequest, emit func(omni.Message)) error
}

// EnvironmentFunc adapts a function to Environment.
type EnvironmentFunc func(ctx context.Context, req ToolRequest, emit func(omni.Message)) error

// ExecuteTool calls f.
func (f EnvironmentFunc) ExecuteTool(ctx context.Context, req ToolRequest, emit func(omni.Message)) error {
	return f(ctx, req, emit)
}

// Approver decides one real tool call: omni.DecisionAllow, DecisionDeny or
// DecisionForbidden. An error, a panic or any other value means deny (E-5.4).
type Approver func(ctx context.Context, toolCall omni.Message) (string, error)

// TraceSink receives the session's Trace records in order (ENGINE.md §16).
// Writes are best-effort: an error is reported as a diagnostic and the run
// goes on (E-16.7). Rotate makes the next Write go to the next file.
type TraceSink interface {
	Write(msg omni.Message) error
	Rotate() error
}

// Clock is the engine's only source of time and of waiting (E-1.4).
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
	ToolList    []omni.ToolDefinition

	MaxTurns                int // turns per run; ≤ 0 = no cap
	MaxReconnects           int // retries per turn; 0 = default 5; < 0 = none
	ReconnectBackoffMs      int // backoff base; 0 = default 2000; < 0 = 0
	ReconnectBackoffMaxMs   int // backoff ceiling; 0 = default 30000; < 0 = 0
	CompactionMaxReconnects int // retries per compaction; 0 = MaxReconnects; < 0 = none
	Compaction              *Compaction

	Clock Clock     // nil = the system clock
	Trace TraceSink // nil = no Trace

	// Resume, when set, starts the session from replayed state (ENGINE.md §17).
	Resume *Snapshot

	// OnDiagnostic receives failures that do not change the stream: trace
	// write errors, approver errors, recovered panics. May be nil.
	OnDiagnostic func(Diagnostic)
}

// Snapshot is the state a resumed session starts from (ENGINE.md E-17.5).
type Snapshot struct {
	History          []omni.Message // injected into the LLM before the first request (HistoryLoader)
	CarryOver        []omni.Message
	PendingSummary   *omni.Message
	SessionTurns     int64
	SessionTokens    omni.TokenCounts
	LastRequestTotal int64
	ContextClosed    bool // the next Trace write rotates first
	MetaWritten      bool // the Trace already holds this session's session_meta
}

// RunOptions are the per-run options (ENGINE.md §3).
type RunOptions struct {
	Approve       Approver // nil ⇒ deny everything (E-5.3)
	ThinkingLevel string   // forwarded to every turn request of the run
}

// Diagnostic is a failure that the engine reports but that does not change
// the stream.
type Diagnostic struct {
	Kind  string // "trace", "approver", "tool", "llm", "panic"
	Err   error
	Stack []byte // for Kind "panic"
}

// Errors returned by the Session API.
var (
	// ErrBusy: a run or manual compaction is already in flight (E-3.3).
	ErrBusy = errors.New("engine: session busy: a run is already in flight")
	// ErrClosed: the session was closed.
	ErrClosed = errors.New("engine: session closed")
)

// Compactability answers Session.Compactability (E-13.13).
const (
	CompactOK            = "ok"
	CompactUnsupported   = "unsupported"
	CompactEmpty         = "empty"
	CompactJustCompacted = "just_compacted"
)
