package engine_test

import (
	"context"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/enginetest"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

// scriptLLM answers request n (from 1) with replies(n), recording each
// request's input; stop, when set, is called during request stopAt.
type scriptLLM struct {
	inputs [][]omni.Message
	reply  func(n int, emit func(omni.Message))
	stopAt int
	stop   func()
}

func (l *scriptLLM) StreamGenerate(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
	l.inputs = append(l.inputs, append([]omni.Message(nil), p.NewMessages...))
	n := len(l.inputs)
	if n == l.stopAt && l.stop != nil {
		l.stop() // the user presses Stop while the request completes
	}
	l.reply(n, emit)
	return engine.Outcome{Status: omni.StatusCompleted}
}

func emitAll(emit func(omni.Message), ms []omni.Message) {
	for _, m := range ms {
		emit(m)
	}
}

func runCtx(t *testing.T, s *engine.Session, ctx context.Context, input ...omni.Message) []omni.Message {
	t.Helper()
	return collectCtx(t, ctx, s, engine.RunOptions{Approve: allow}, input...)
}

// stopAtCompaction returns the script of reply and a context it cancels
// during its second request, the compaction's.
func stopAtCompaction(t *testing.T, reply func(n int, emit func(omni.Message))) (context.Context, *scriptLLM) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx, &scriptLLM{stopAt: 2, stop: cancel, reply: reply}
}

// summarizing is a session of llm that compacts by summary, after every
// turn when everyTurn is set.
func summarizing(t *testing.T, llm engine.LLM, env engine.Environment, sink engine.TraceSink, everyTurn bool) *engine.Session {
	t.Helper()
	c := &engine.Compaction{Mode: omni.ModeSummarize, Prompt: "summarize"}
	if everyTurn {
		c.MaxSessionTurns = 1
	}
	s, err := engine.New(engine.Config{Meta: enginetest.Meta("s1"), LLM: llm, Environment: env, Trace: sink, Clock: enginetest.NewClock(t0), Compaction: c,
		NewLLM: func(omni.TokenCounts) engine.LLM { return llm }})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func hasOutput(ms []omni.Message, id string) bool {
	for _, m := range ms {
		if m.IsModel(omni.ToolCallOutput) && m.Payload.ToolCallID == id {
			return true
		}
	}
	return false
}

var echoTool = enginetest.Tools{"t": func(ctx context.Context, c omni.Message, emit func(omni.Message)) error {
	emit(omni.ToolOutput(c.Payload.ToolCallID, "out", omni.StatusCompleted))
	return nil
}}

// A mid-task compaction whose attempt completes as the run is aborted: the
// old context committed it (request_end completed, E-16.6), so the turn's
// outputs it absorbed are not carried over again (E-13.12), as a resume of
// the same Trace rebuilds (before, the next request sent output A twice).
func TestCompactionCommittedThenAborted(t *testing.T) {
	ctx, llm := stopAtCompaction(t, func(n int, emit func(omni.Message)) {
		switch n {
		case 1:
			emit(omni.ToolCallMsg("A", "t", `{}`))
			emit(enginetest.Usage(10))
		case 2:
			emitAll(emit, enginetest.TextReply(20, "[summary]S[/summary]"))
		default:
			emitAll(emit, enginetest.TextReply(5, "x"))
		}
	})
	sink := &enginetest.Sink{}
	s := summarizing(t, llm, echoTool, sink, true)
	runCtx(t, s, ctx, omni.UserText("go"))
	if !hasOutput(llm.inputs[1], "A") {
		t.Fatalf("the compaction request did not absorb output A: %v", llm.inputs[1])
	}
	if c := s.Snapshot().CarryOver; len(c) != 0 {
		t.Errorf("carry-over %v, want none: the compaction request committed output A", c)
	}
	if c := trace.Replay(sink.Files()[0], t0).Snapshot.CarryOver; len(c) != 0 {
		t.Errorf("a resume rebuilds carry-over %v, want none", c)
	}
	runCtx(t, s, context.Background(), omni.UserText("next"))
	if hasOutput(llm.inputs[2], "A") {
		t.Errorf("the next request sent output A again: %v", llm.inputs[2])
	}
}

// A compaction attempt that completes with a tool call as the run is
// aborted: the call gets its Trace-written repair, carried over to the
// context that committed it (E-13.7); before, it was never answered.
func TestCompactionToolCallThenAborted(t *testing.T) {
	ctx, llm := stopAtCompaction(t, func(n int, emit func(omni.Message)) {
		switch n {
		case 2:
			emit(omni.ToolCallMsg("K", "t", `{}`))
			emit(enginetest.Usage(20))
		default:
			emitAll(emit, enginetest.TextReply(10, "answer"))
		}
	})
	sink := &enginetest.Sink{}
	s := summarizing(t, llm, echoTool, sink, true)
	runCtx(t, s, ctx, omni.UserText("go"))
	if !hasOutput(sink.Files()[0], "K") {
		t.Errorf("no repair of call K in the Trace")
	}
	runCtx(t, s, context.Background(), omni.UserText("next"))
	if !hasOutput(llm.inputs[2], "K") {
		t.Errorf("call K is never answered: the next request is %v", llm.inputs[2])
	}
}

// A manual compaction whose attempt completes as it is aborted: the
// carry-over it sent was committed, so it is dropped, not restored
// (E-13.13).
func TestManualCompactionCommittedThenAborted(t *testing.T) {
	ctx, llm := stopAtCompaction(t, func(n int, emit func(omni.Message)) {
		switch n {
		case 1:
			emit(omni.ToolCallMsg("A", "slow", `{}`))
			emit(enginetest.Usage(10))
		case 2:
			emitAll(emit, enginetest.TextReply(20, "[summary]S[/summary]"))
		default:
			emitAll(emit, enginetest.TextReply(5, "x"))
		}
	})
	runContext, abortRun := context.WithCancel(context.Background())
	defer abortRun()
	tools := enginetest.Tools{"slow": func(c context.Context, call omni.Message, emit func(omni.Message)) error {
		abortRun()
		<-c.Done()
		emit(omni.ToolOutput(call.Payload.ToolCallID, "cut", omni.StatusAborted))
		return nil
	}}
	s := summarizing(t, llm, tools, nil, false)
	runCtx(t, s, runContext, omni.UserText("go"))
	if len(s.Snapshot().CarryOver) == 0 {
		t.Fatal("the aborted run left no carry-over")
	}
	r, err := s.Compact(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range r.All() {
	}
	if !hasOutput(llm.inputs[1], "A") {
		t.Fatalf("the compaction request did not carry output A: %v", llm.inputs[1])
	}
	if c := s.Snapshot().CarryOver; len(c) != 0 {
		t.Errorf("carry-over %v restored, want it dropped: the compaction request committed it", c)
	}
}

// Steer during a manual compaction returns false (E-11.1: it is no run);
// before, it returned true and the input was dropped when it ended.
func TestSteerDuringManualCompaction(t *testing.T) {
	var s *engine.Session
	var steered bool
	var steeredID engine.SteerID
	llm := &scriptLLM{reply: func(n int, emit func(omni.Message)) {
		if n == 2 {
			steered, _ = s.Steer([]omni.Message{omni.UserText("hello")})
			steeredID, _ = s.SteerWithID([]omni.Message{omni.UserText("hello")})
			emitAll(emit, enginetest.TextReply(3, "[summary]S[/summary]"))
			return
		}
		emitAll(emit, enginetest.TextReply(3, "hi"))
	}}
	var err error
	s, err = engine.New(engine.Config{Meta: enginetest.Meta("s1"), LLM: llm, Clock: enginetest.NewClock(t0),
		Compaction: &engine.Compaction{Mode: omni.ModeSummarize, Prompt: "sum"},
		NewLLM:     func(omni.TokenCounts) engine.LLM { return llm }})
	if err != nil {
		t.Fatal(err)
	}
	runCtx(t, s, context.Background(), omni.UserText("go"))
	compactAll(t, s)
	if steered || steeredID != 0 {
		t.Errorf("Steer during a manual compaction = %v, SteerWithID = %d; want false and 0", steered, steeredID)
	}
}
