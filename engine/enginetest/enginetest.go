// Package enginetest provides deterministic fakes for the engine's
// interfaces: a scripted LLM, a scripted tool Environment, an in-memory
// Trace sink and a fake Clock. Users of the engine need them too, to test
// their own embeddings. None of them sleeps; order comes from the scripts.
package enginetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// Reply is one scripted LLM request: the messages to emit, in order, and
// the outcome to return (Status "" means completed). With Batch > 0 the
// messages go through GenerateParams.EmitBatch, Batch at a time (emit
// when the engine gives no EmitBatch), as an adapter that decodes several
// at once hands them over.
type Reply struct {
	Emit    []omni.Message
	Outcome engine.Outcome
	Batch   int
}

// LLM replays Replies, one per StreamGenerate call, and records each call's
// NewMessages. It is safe for concurrent use.
type LLM struct {
	mu      sync.Mutex
	replies []Reply
	calls   [][]omni.Message
	history []omni.Message
}

// NewLLM returns an LLM that serves replies in order.
func NewLLM(replies ...Reply) *LLM { return &LLM{replies: replies} }

// StreamGenerate serves the next reply. With no reply left it fails the
// request permanently, naming the call.
func (l *LLM) StreamGenerate(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
	l.mu.Lock()
	l.calls = append(l.calls, p.NewMessages)
	n := len(l.calls)
	if len(l.replies) == 0 {
		l.mu.Unlock()
		return engine.Outcome{Status: omni.StatusFailed, ErrorMessage: fmt.Sprintf("enginetest: no scripted reply for request %d", n), Permanent: true}
	}
	r := l.replies[0]
	l.replies = l.replies[1:]
	l.mu.Unlock()
	if r.Batch > 0 && p.EmitBatch != nil {
		for ms := range slices.Chunk(r.Emit, r.Batch) {
			p.EmitBatch(ms)
		}
	} else {
		for _, m := range r.Emit {
			emit(m)
		}
	}
	if r.Outcome.Status == "" {
		r.Outcome.Status = omni.StatusCompleted
	}
	return r.Outcome
}

// LoadHistory records a resumed history (engine.HistoryLoader).
func (l *LLM) LoadHistory(ctx context.Context, h []omni.Message) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.history = append(l.history, h...)
	return nil
}

// Calls returns the NewMessages of every request so far.
func (l *LLM) Calls() [][]omni.Message {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([][]omni.Message(nil), l.calls...)
}

// History returns what LoadHistory received.
func (l *LLM) History() []omni.Message {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]omni.Message(nil), l.history...)
}

// Left reports how many replies were not used.
func (l *LLM) Left() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.replies)
}

// ToolFunc scripts one tool: it emits through emit and returns an error to
// fail the call.
type ToolFunc func(ctx context.Context, call omni.Message, emit func(omni.Message)) error

// Tools is an Environment dispatching by tool name. A call to an unknown
// tool fails with an error naming it.
type Tools map[string]ToolFunc

// ExecuteTool runs the tool named by the call.
func (t Tools) ExecuteTool(ctx context.Context, req engine.ToolRequest, emit func(omni.Message)) error {
	f, ok := t[req.ToolCall.Payload.Name]
	if !ok {
		return fmt.Errorf("unknown tool %q", req.ToolCall.Payload.Name)
	}
	return f(ctx, req.ToolCall, emit)
}

// Sink is an in-memory engine.TraceSink: one slice of records per file. It
// is safe for concurrent use.
type Sink struct {
	mu    sync.Mutex
	files [][]omni.Message
}

// Write appends to the current file.
func (s *Sink) Write(_ context.Context, m omni.Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.files) == 0 {
		s.files = append(s.files, nil)
	}
	s.files[len(s.files)-1] = append(s.files[len(s.files)-1], m)
	return nil
}

// Rotate starts a new file.
func (s *Sink) Rotate() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.files) == 0 {
		s.files = append(s.files, nil)
	}
	s.files = append(s.files, nil)
	return nil
}

// Files returns the records of every file.
func (s *Sink) Files() [][]omni.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([][]omni.Message, len(s.files))
	for i, f := range s.files {
		out[i] = append([]omni.Message(nil), f...)
	}
	return out
}

// Clock is a fake engine.Clock: Now returns a fixed instant advanced by
// each Sleep; Sleep records its duration and returns at once (false if ctx
// is done).
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

// NewClock returns a Clock at t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now returns the fake time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep records d and returns at once.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) bool {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	c.mu.Unlock()
	return ctx.Err() == nil
}

// Sleeps returns every duration Sleep was asked for.
func (c *Clock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// Meta is a session_meta message for tests.
func Meta(sessionID string) omni.Message {
	return omni.Message{Type: omni.TypeSessionMeta, Payload: omni.Payload{
		Rest: &omni.Rest{SessionID: sessionID, Provider: "test", ModelID: "test-model", ModelContextWindow: []byte("200000"), SystemPrompt: "You are a test agent.", AgentState: "/agents/test", Workspace: "/ws"},
	}}
}

// TextReply streams text as partial_text start/delta…/stop, then the
// complete text, then token_usage with the given request total.
func TextReply(total int64, deltas ...string) []omni.Message {
	var ms []omni.Message
	ms = append(ms, omni.Partial(omni.PartialText, omni.EventStart, "", "", "", omni.StatusCompleted))
	full := ""
	for _, d := range deltas {
		full += d
		ms = append(ms, omni.Partial(omni.PartialText, omni.EventDelta, d, "", "", omni.StatusCompleted))
	}
	ms = append(ms, omni.Partial(omni.PartialText, omni.EventStop, "", "", "", omni.StatusCompleted))
	ms = append(ms, omni.AssistantText(full, omni.StatusCompleted))
	return append(ms, Usage(total))
}

// Usage is a token_usage whose request and session totals are total.
func Usage(total int64) omni.Message {
	c := omni.TokenCounts{Total: total}
	return omni.TokenUsageMsg(c, c)
}

// Timer is a manual engine.Timer (Config.Timer): nothing fires until Fire,
// so a test of the abort grace needs no real wait. It is safe for
// concurrent use.
type Timer struct {
	mu      sync.Mutex
	pending []*timerEntry
	armed   chan time.Duration
}

type timerEntry struct {
	d       time.Duration
	f       func()
	stopped bool
}

// NewTimer returns a Timer; Armed reports each AfterFunc call.
func NewTimer() *Timer { return &Timer{armed: make(chan time.Duration, 64)} }

// AfterFunc records f; it runs when Fire is called, unless stopped first.
func (t *Timer) AfterFunc(d time.Duration, f func()) func() bool {
	e := &timerEntry{d: d, f: f}
	t.mu.Lock()
	t.pending = append(t.pending, e)
	t.mu.Unlock()
	select {
	case t.armed <- d:
	default:
	}
	return func() bool {
		t.mu.Lock()
		defer t.mu.Unlock()
		was := !e.stopped
		e.stopped = true
		return was
	}
}

// Armed receives the duration of each AfterFunc call, as it is made.
func (t *Timer) Armed() <-chan time.Duration { return t.armed }

// Fire runs every pending timer that was not stopped, each on its own
// goroutine as time.AfterFunc does, and returns how many it started.
func (t *Timer) Fire() int {
	t.mu.Lock()
	var due []*timerEntry
	for _, e := range t.pending {
		if !e.stopped {
			e.stopped = true
			due = append(due, e)
		}
	}
	t.pending = nil
	t.mu.Unlock()
	for _, e := range due {
		go e.f()
	}
	return len(due)
}
