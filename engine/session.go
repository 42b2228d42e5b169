package engine

import (
	"context"
	"errors"
	"iter"

	"github.com/floehq/floe/engine/omni"
)

// Session is one conversation: one engine, one Trace, one LLM context at a
// time (ENGINE.md §0). Its methods are safe for concurrent use; at most one
// run or manual compaction is in flight at a time.
type Session struct{ cfg Config }

// New validates cfg and returns a Session.
func New(cfg Config) (*Session, error) { return &Session{cfg: cfg}, nil }

// ID returns the session id of the session_meta.
func (s *Session) ID() string { return s.cfg.Meta.Payload.SessionID }

// Start begins a run with newMessages as its input (E-3.6). The returned
// Run must be consumed (Next / All) or closed. ErrBusy if a run is in flight.
func (s *Session) Start(ctx context.Context, newMessages []omni.Message, opts RunOptions) (*Run, error) {
	return nil, errors.New("engine: not implemented")
}

// Run is Start followed by Run.All.
func (s *Session) Run(ctx context.Context, newMessages []omni.Message, opts RunOptions) (iter.Seq[omni.Message], error) {
	r, err := s.Start(ctx, newMessages, opts)
	if err != nil {
		return nil, err
	}
	return r.All(), nil
}

// Steer queues steering input for the run in flight (E-11.1).
func (s *Session) Steer(input []omni.Message) bool { return false }

// Unsteer removes a not yet delivered Steer entry, matched by identity
// (the same slice passed to Steer) (E-11.2).
func (s *Session) Unsteer(input []omni.Message) bool { return false }

// SkipReconnectWait wakes a pending backoff early (E-10.7).
func (s *Session) SkipReconnectWait() bool { return false }

// Compact runs a manual compaction between runs (E-13.13).
func (s *Session) Compact(ctx context.Context) (*Run, error) {
	return nil, errors.New("engine: not implemented")
}

// Compactability answers CompactOK, CompactUnsupported, CompactEmpty or
// CompactJustCompacted (E-13.13).
func (s *Session) Compactability() string { return CompactUnsupported }

// Snapshot returns the session's state between runs: carry-over, pending
// summary, counters and tokens. History is the committed context as the
// engine fed it (for resume comparisons).
func (s *Session) Snapshot() Snapshot { return Snapshot{} }

// Run is one run's output stream (ENGINE.md §3). Its consumer methods must be
// called from one goroutine at a time.
type Run struct{}

// Next returns the next message; false when the run has ended. It performs
// run-level steps only when called after every earlier message was taken
// (E-3.2).
func (r *Run) Next() (omni.Message, bool) { return omni.Message{}, false }

// Buffered reports whether Next would return a message that is already
// produced, without waiting and without performing a run-level step. A
// batching consumer (the JS bridge) takes messages while Buffered is true.
func (r *Run) Buffered() bool { return false }

// All returns the remaining stream as a sequence. Breaking out of the loop
// is a user abort (E-3.3a): the run finishes before the loop statement ends.
func (r *Run) All() iter.Seq[omni.Message] {
	return func(yield func(omni.Message) bool) {}
}

// Close abandons the run: if it has not ended it is aborted (E-3.3a) and
// Close returns once the engine has finished. Safe to call more than once.
func (r *Run) Close() {}

// SubagentHandle runs a child session for a tool of the parent (E-15.4).
type SubagentHandle struct{ child *Session }

// NewSubagent creates the child session; cfg.Meta should carry
// source "subagent".
func NewSubagent(cfg Config) (*SubagentHandle, error) {
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	return &SubagentHandle{child: s}, nil
}

// Session returns the child session.
func (h *SubagentHandle) Session() *Session { return h.child }

// Run runs the child with prompt and yields its messages with the child id
// prepended to origin (E-15.4).
func (h *SubagentHandle) Run(ctx context.Context, prompt string, approve Approver) iter.Seq[omni.Message] {
	return func(yield func(omni.Message) bool) {}
}
