package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// epoch is the first instant of the injected clock.
var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// clock is the injected engine.Clock: Now advances by 1 ms per call from
// epoch; Sleep records the duration, runs its backoff hooks and returns at
// once. One clock serves the session and all its subagents.
type clock struct {
	w     *world
	ticks atomic.Int64
}

func (c *clock) Now() time.Time {
	return epoch.Add(time.Duration(c.ticks.Add(1)) * time.Millisecond)
}

func (c *clock) Sleep(ctx context.Context, d time.Duration) bool {
	w := c.w
	w.mu.Lock()
	w.sleeps = append(w.sleeps, d.Milliseconds())
	w.backoffs++
	n := w.backoffs
	w.mu.Unlock()
	w.fireHooks(func(t *trigger) bool { return t.kind == onBackoff && t.backoff == n })
	return ctx.Err() == nil
}

// scriptedLLM is one context object of a session: context 1 is the initial
// LLM, context k+1 the k-th NewLLM result. All objects of a session share
// the session's list of scripted requests.
type scriptedLLM struct {
	w       *world
	session string
	context int
}

func (l *scriptedLLM) StreamGenerate(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
	w := l.w
	k, req, call := w.startLLM(l.session, l.context, p.NewMessages)
	w.fireHooks(func(t *trigger) bool {
		return t.kind == onLLMRequest && t.session == l.session && t.index == k
	})
	if req == nil {
		w.fail("llm %s: request %d is not scripted", l.session, k)
		return w.endLLM(call, engine.Outcome{Status: omni.StatusFailed, ErrorMessage: "conformance: unscripted LLM request", Permanent: true})
	}
	record := func(m omni.Message) {
		w.mu.Lock()
		call.emitted = append(call.emitted, m)
		w.mu.Unlock()
		emit(m)
	}
	if err := w.play(ctx, req.steps, fmt.Sprintf("llm %s request %d", l.session, k), record, nil); err != nil {
		return w.endLLM(call, engine.Outcome{Status: omni.StatusFailed, ErrorMessage: err.Error(), Permanent: true})
	}
	return w.endLLM(call, req.outcome)
}

// llmCall is what the runner keeps of one StreamGenerate call for the
// resume check: the messages as the engine handed them over and as the
// script emitted them (timestamps included), and the outcome returned.
type llmCall struct {
	context int
	input   []omni.Message
	emitted []omni.Message
	outcome engine.Outcome
	ended   bool
}

// endLLM records the outcome of a call and returns it.
func (w *world) endLLM(call *llmCall, o engine.Outcome) engine.Outcome {
	w.mu.Lock()
	call.outcome, call.ended = o, true
	w.mu.Unlock()
	return o
}

// startLLM records one StreamGenerate call and returns its 1-based index in
// the session, its script (nil if none is left) and its record.
func (w *world) startLLM(session string, context int, msgs []omni.Message) (int, *llmRequest, *llmCall) {
	in := llmInput{context: context, messages: make([]any, len(msgs))}
	for i, m := range msgs {
		in.messages[i] = valueOf(m)
	}
	call := &llmCall{context: context, input: slices.Clone(msgs)}
	st := w.session(session)
	w.mu.Lock()
	defer w.mu.Unlock()
	st.calls++
	st.inputs = append(st.inputs, in)
	st.raw = append(st.raw, call)
	if reqs := w.s.llm[session]; st.calls <= len(reqs) {
		return st.calls, reqs[st.calls-1], call
	}
	return st.calls, nil, call
}

// newLLM is the session's LLMFactory.
func (w *world) newLLM(session string, tokens omni.TokenCounts) engine.LLM {
	st := w.session(session)
	w.mu.Lock()
	st.contexts++
	st.newTokens = append(st.newTokens, tokens)
	c := st.contexts
	w.mu.Unlock()
	return &scriptedLLM{w: w, session: session, context: c}
}

// play runs script steps. Emits and waits ignore the abort signal except
// through abort conditions (FORMAT §4). req is the tool request for tool
// scripts (subagents need its approver), nil for the LLM.
func (w *world) play(ctx context.Context, steps []*step, where string, emit func(omni.Message), req *engine.ToolRequest) error {
	for i, st := range steps {
		if w.isStopped() {
			return errStopped
		}
		at := fmt.Sprintf("%s step %d", where, i+1)
		switch {
		case st.emit != nil:
			done := w.enter(at + ": emit (blocked in the engine's emit)")
			emit(w.stamp(*st.emit))
			done()
		case st.wait != nil:
			if err := w.wait(ctx, st.wait, at); err != nil {
				return err
			}
		case st.subagent != nil:
			if err := w.runSubagent(ctx, st.subagent, req, emit, at); err != nil {
				return err
			}
		}
	}
	return nil
}

// executeTool is the scripted Environment.
func (w *world) executeTool(ctx context.Context, req engine.ToolRequest, emit func(omni.Message)) error {
	id := req.ToolCall.Payload.ToolCallID
	w.mu.Lock()
	w.toolRuns[id]++
	n := w.toolRuns[id]
	w.toolOrder = append(w.toolOrder, id)
	script := w.s.tools[id]
	w.mu.Unlock()
	switch {
	case script == nil:
		w.fail("tool %s: executed without a script", id)
		return fmt.Errorf("conformance: no script for tool call %q", id)
	case n > 1:
		w.fail("tool %s: executed %d times", id, n)
		return fmt.Errorf("conformance: tool call %q executed again", id)
	}
	record := func(m omni.Message) {
		if m.IsModel(omni.ToolCallOutput) && len(m.Origin) == 0 {
			w.mu.Lock()
			w.toolOutputs[m.Payload.ToolCallID] = append(w.toolOutputs[m.Payload.ToolCallID], m)
			w.mu.Unlock()
		}
		emit(m)
	}
	if err := w.play(ctx, script.steps, "tool "+id, record, &req); err != nil {
		return err
	}
	if script.throw != nil {
		return errors.New(*script.throw)
	}
	return nil
}

// approve is the scripted Approver.
func (w *world) approve(ctx context.Context, toolCall omni.Message) (engine.Decision, error) {
	id := toolCall.Payload.ToolCallID
	w.mu.Lock()
	w.approverCalls = append(w.approverCalls, id)
	a := w.s.approvals[id]
	w.mu.Unlock()
	switch {
	case a == nil:
		w.fail("approval %s: no entry", id)
	case !slices.Equal(a.expectOrigin, toolCall.Origin):
		w.fail("approval %s: origin: expected %s got %s", id, showOrigin(a.expectOrigin), showOrigin(toolCall.Origin))
	}
	w.fireHooks(func(t *trigger) bool { return t.kind == onApproval && t.approval == id })
	switch {
	case a == nil:
		return "", fmt.Errorf("conformance: no approval scripted for %q", id)
	case a.decision == "throw":
		return "", errors.New(a.message)
	}
	return engine.Decision(a.decision), nil
}

func showOrigin(o []string) string {
	if len(o) == 0 {
		return "none"
	}
	v := make([]any, len(o))
	for i, s := range o {
		v[i] = s
	}
	return show(v)
}

// runSubagent runs a child session through the engine's subagent facility
// and forwards every message it yields to the tool's emit.
func (w *world) runSubagent(ctx context.Context, sa *subagentSpec, req *engine.ToolRequest, emit func(omni.Message), at string) error {
	id := sa.session.meta.Payload.SessionID()
	h, err := w.handle(sa)
	if err != nil {
		w.fail("%s: subagent %s: %v", at, id, err)
		return err
	}
	var approve engine.Approver
	if req != nil {
		approve = req.Approve
	}
	defer w.enter(at + ": subagent " + id + " running")()
	for m := range h.Run(ctx, sa.prompt, approve) {
		emit(m)
	}
	return nil
}

// handle returns the subagent handle of a child session id, creating it on
// first use; a later step naming the same child reuses it.
func (w *world) handle(sa *subagentSpec) (*engine.SubagentHandle, error) {
	w.handleMu.Lock()
	defer w.handleMu.Unlock()
	id := sa.session.meta.Payload.SessionID()
	if h := w.handles[id]; h != nil {
		return h, nil
	}
	h, err := engine.NewSubagent(w.config(sa.session))
	if err != nil {
		return nil, err
	}
	w.handles[id] = h
	return h, nil
}

// config builds the engine configuration of a session or subagent.
func (w *world) config(ss sessionSpec) engine.Config {
	id := ss.meta.Payload.SessionID()
	st := w.session(id)
	cfg := engine.Config{
		Meta:         w.stamp(ss.meta),
		LLM:          &scriptedLLM{w: w, session: id, context: 1},
		Environment:  w.env,
		ToolList:     ss.toolList,
		Clock:        w.clock,
		Trace:        st.sink,
		OnDiagnostic: w.diagnostic,
	}
	ss.config.apply(&cfg)
	if cfg.Compaction != nil {
		cfg.NewLLM = func(tokens omni.TokenCounts) engine.LLM { return w.newLLM(id, tokens) }
		w.mu.Lock()
		st.compactionPrompt = &cfg.Compaction.Prompt
		w.mu.Unlock()
	}
	return cfg
}
