package engine_test

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/enginetest"
	"github.com/floehq/floe/engine/omni"
)

// Rules of ENGINE.md that the scenarios cannot express (the thinking
// level, a Config without NewLLM, a Trace that fails, a subagent handle's
// second run) or that no other test pins.

// paramsLLM serves one function per call, in order, and records each
// call's GenerateParams.
type paramsLLM struct {
	mu     sync.Mutex
	calls  []engine.GenerateParams
	script []func(emit func(omni.Message)) engine.Outcome
}

func (l *paramsLLM) StreamGenerate(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
	l.mu.Lock()
	n := len(l.calls)
	l.calls = append(l.calls, p)
	l.mu.Unlock()
	if n >= len(l.script) {
		return engine.Outcome{Status: omni.StatusFailed, Permanent: true, ErrorMessage: "unscripted call"}
	}
	return l.script[n](emit)
}

func (l *paramsLLM) levels() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, p := range l.calls {
		out = append(out, p.ThinkingLevel)
	}
	return out
}

func completedWith(ms ...omni.Message) func(func(omni.Message)) engine.Outcome {
	return func(emit func(omni.Message)) engine.Outcome {
		for _, m := range ms {
			emit(m)
		}
		return engine.Outcome{Status: omni.StatusCompleted}
	}
}

func usageOf(request, session int64) omni.Message {
	return omni.TokenUsageMsg(omni.TokenCounts{Total: session}, omni.TokenCounts{Total: request})
}

// E-4.6, E-13.5, E-13.10, E-1.4: the run's thinking level goes with every
// turn request, the retry's included, and with the new context's; the
// compaction request never carries it. The new context is made from the
// session tokens of the compaction's own token_usage, and the one backoff
// wait is the clock's one Sleep.
func TestThinkingLevelOnRetriesNotOnCompaction(t *testing.T) {
	old := &paramsLLM{script: []func(func(omni.Message)) engine.Outcome{
		func(emit func(omni.Message)) engine.Outcome { return engine.Outcome{Status: omni.StatusTimeout} },
		completedWith(omni.ToolCallMsg("A", "echo", `{}`), usageOf(100, 100)),
		completedWith(omni.AssistantText("[summary]so far[/summary]", omni.StatusCompleted), usageOf(40, 140)),
	}}
	fresh := &paramsLLM{script: []func(func(omni.Message)) engine.Outcome{
		completedWith(omni.AssistantText("done", omni.StatusCompleted), usageOf(10, 150)),
	}}
	var made []omni.TokenCounts
	clk := enginetest.NewClock(t0)
	tools := enginetest.Tools{"echo": func(ctx context.Context, c omni.Message, emit func(omni.Message)) error {
		emit(omni.ToolOutput(c.Payload.ToolCallID, "hi", omni.StatusCompleted))
		return nil
	}}
	s, err := engine.New(engine.Config{
		Meta: enginetest.Meta("s1"), LLM: old, Environment: tools, Clock: clk,
		Compaction: &engine.Compaction{MaxContextLength: 50, Mode: omni.ModeSummarize, Prompt: "Summarize."},
		NewLLM: func(tc omni.TokenCounts) engine.LLM {
			made = append(made, tc)
			return fresh
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, s, engine.RunOptions{Approve: allow, ThinkingLevel: "high"}, omni.UserText("go"))
	if last := got[len(got)-1]; !last.IsEvent(omni.RequestEnd) || last.Payload.Status() != omni.StatusCompleted {
		t.Fatalf("stream: %s", kinds(got))
	}
	if g := old.levels(); len(g) != 3 || g[0] != "high" || g[1] != "high" || g[2] != "" {
		t.Fatalf("old context's thinking levels %q, want [high high \"\"] (turn, retry, compaction)", g)
	}
	if g := fresh.levels(); len(g) != 1 || g[0] != "high" {
		t.Fatalf("new context's thinking levels %q, want [high]", g)
	}
	if len(made) != 1 || made[0].Total != 140 {
		t.Fatalf("NewLLM got %+v, want the compaction's session total 140", made)
	}
	if g := clk.Sleeps(); len(g) != 1 || g[0] != 2000*time.Millisecond {
		t.Fatalf("sleeps %v, want the one backoff of 2s", g)
	}
}

// E-13.1: compaction is available only with both Compaction and NewLLM.
// With Compaction alone the threshold triggers nothing, Compactability
// says unsupported and a manual Compact streams and writes nothing.
func TestCompactionNeedsNewLLM(t *testing.T) {
	llm := enginetest.NewLLM(
		enginetest.Reply{Emit: enginetest.TextReply(500, "one")},
		enginetest.Reply{Emit: enginetest.TextReply(900, "two")},
	)
	sink := &enginetest.Sink{}
	s, err := engine.New(engine.Config{
		Meta: enginetest.Meta("s1"), LLM: llm, Trace: sink, Clock: enginetest.NewClock(t0),
		Compaction: &engine.Compaction{MaxContextLength: 10, MaxSessionTurns: 1, Mode: omni.ModeSummarize, Prompt: "Summarize."},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"a", "b"} {
		got := collect(t, s, engine.RunOptions{}, omni.UserText(p))
		want := "request_begin partial_text:start partial_text:delta partial_text:stop text token_usage request_end"
		if g := kinds(got); g != want {
			t.Fatalf("run %s:\n got %s\nwant %s", p, g, want)
		}
	}
	if g := s.Compactability(); g != engine.CompactUnsupported {
		t.Fatalf("Compactability %q", g)
	}
	before := len(sink.Files()[0])
	r, err := s.Compact(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for m := range r.All() {
		t.Fatalf("manual compaction streamed %s", kinds([]omni.Message{m}))
	}
	if f := sink.Files(); len(f) != 1 || len(f[0]) != before {
		t.Fatalf("manual compaction wrote to the Trace: %d files, %d records (had %d)", len(f), len(f[len(f)-1]), before)
	}
	if llm.Left() != 0 || len(llm.Calls()) != 2 {
		t.Fatalf("requests %d, want the two turns only", len(llm.Calls()))
	}
}

// flakySink fails the writes whose 1-based numbers are in fail.
type flakySink struct {
	enginetest.Sink
	n    int
	fail map[int]bool
}

func (f *flakySink) Write(ctx context.Context, m omni.Message) error {
	f.n++
	if f.fail[f.n] {
		return errors.New("disk full")
	}
	return f.Sink.Write(ctx, m)
}

// E-16.7: a write that fails is a diagnostic; the writes after it are
// still attempted and land, in order.
func TestTraceWritesGoOnAfterAFailure(t *testing.T) {
	var d diags
	sink := &flakySink{fail: map[int]bool{2: true, 4: true}} // the Prompt, the text
	s, err := engine.New(engine.Config{
		Meta: enginetest.Meta("t"), LLM: enginetest.NewLLM(enginetest.Reply{Emit: enginetest.TextReply(3, "hi")}),
		Trace: sink, Clock: enginetest.NewClock(t0), OnDiagnostic: d.add,
	})
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, s, engine.RunOptions{}, omni.UserText("go"))
	if last := got[len(got)-1]; !last.IsEvent(omni.RequestEnd) || last.Payload.Status() != omni.StatusCompleted {
		t.Fatalf("run disturbed: %s", kinds(got))
	}
	if g := kinds(sink.Files()[0]); g != " request_begin token_usage request_end" {
		t.Fatalf("records %q, want session_meta, request_begin, token_usage, request_end", g)
	}
	if g := d.kinds(); g != "trace,trace" {
		t.Fatalf("diagnostics %q, want one per failed write", g)
	}
}

// E-15.4: the child's session_meta is yielded on the handle's first run
// only; each run yields its prompt first (sender parent_agent). Without an
// approver the child denies its calls, and the denial carries the child's
// origin like the rest of its stream.
func TestSubagentSecondRunHasNoSessionMeta(t *testing.T) {
	llm := enginetest.NewLLM(
		enginetest.Reply{Emit: enginetest.TextReply(3, "first")},
		enginetest.Reply{Emit: []omni.Message{omni.ToolCallMsg("C", "echo", `{}`), enginetest.Usage(4)}},
		enginetest.Reply{Emit: enginetest.TextReply(5, "second")},
	)
	tools := enginetest.Tools{"echo": func(ctx context.Context, c omni.Message, emit func(omni.Message)) error {
		panic("a denied call ran")
	}}
	meta := enginetest.Meta("child")
	meta.Payload.Edit().Source = omni.SourceSubagent
	h, err := engine.NewSubagent(engine.Config{Meta: meta, LLM: llm, Environment: tools, Clock: enginetest.NewClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	var runs [][]omni.Message
	for _, p := range []string{"one", "two"} {
		var got []omni.Message
		for m := range h.Run(context.Background(), p, nil) {
			if len(m.Origin) != 1 || m.Origin[0] != "child" {
				t.Fatalf("origin %v on %s", m.Origin, m.Payload.Type)
			}
			got = append(got, m)
		}
		runs = append(runs, got)
	}
	if g := kinds(runs[0]); g != " text request_begin partial_text:start partial_text:delta partial_text:stop text token_usage request_end" {
		t.Fatalf("first run %s", g)
	}
	if runs[0][0].Type != omni.TypeSessionMeta {
		t.Fatalf("first run starts with %s", runs[0][0].Type)
	}
	want := "text request_begin tool_call@C approval_decision@C tool_call_output@C token_usage request_end request_begin partial_text:start partial_text:delta partial_text:stop text token_usage request_end"
	if g := kinds(runs[1]); g != want {
		t.Fatalf("second run:\n got %s\nwant %s", g, want)
	}
	if p := runs[1][0].Payload; p.Text != "two" || p.Sender() != omni.SenderParentAgent {
		t.Fatalf("second run's first message %+v", p)
	}
	if d := runs[1][3].Payload; d.Decision() != omni.DecisionDeny {
		t.Fatalf("decision %+v", d)
	}
}

// E-13.11: a rotation is owed, not done: a run that ends with a discard
// leaves one file; the next write (the next run's) opens the second.
func TestNoEmptyFileAfterCompaction(t *testing.T) {
	sink := &enginetest.Sink{}
	s, err := engine.New(engine.Config{
		Meta: enginetest.Meta("s1"), LLM: enginetest.NewLLM(enginetest.Reply{Emit: enginetest.TextReply(500, "a")}),
		Trace: sink, Clock: enginetest.NewClock(t0),
		Compaction: &engine.Compaction{MaxContextLength: 10, Mode: omni.ModeDiscard},
		NewLLM: func(omni.TokenCounts) engine.LLM {
			return enginetest.NewLLM(enginetest.Reply{Emit: enginetest.TextReply(5, "b")})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, s, engine.RunOptions{}, omni.UserText("go"))
	if last := got[len(got)-1]; !last.IsEvent(omni.CompactionEnd) {
		t.Fatalf("stream %s", kinds(got))
	}
	if f := sink.Files(); len(f) != 1 {
		t.Fatalf("%d files after the discard, want 1", len(f))
	}
	collect(t, s, engine.RunOptions{}, omni.UserText("more"))
	f := sink.Files()
	if len(f) != 2 || kinds(f[1][:2]) != " text" || f[1][0].Type != omni.TypeSessionMeta {
		t.Fatalf("%d files; the second starts %s", len(f), kinds(f[len(f)-1]))
	}
}

// E-3.7: once the stream has ended the run has exited: Steer returns false
// and queues nothing for the next run.
func TestSteerAfterTheRunEnded(t *testing.T) {
	llm := enginetest.NewLLM(
		enginetest.Reply{Emit: enginetest.TextReply(3, "one")},
		enginetest.Reply{Emit: enginetest.TextReply(4, "two")},
	)
	s := newSession(t, llm, nil, &enginetest.Sink{})
	collect(t, s, engine.RunOptions{}, omni.UserText("go"))
	if steer(s, []omni.Message{omni.UserText("late")}) {
		t.Fatal("Steer after the stream ended reported true")
	}
	got := collect(t, s, engine.RunOptions{}, omni.UserText("again"))
	if g := kinds(got); g != "request_begin partial_text:start partial_text:delta partial_text:stop text token_usage request_end" {
		t.Fatalf("next run %s", g)
	}
	if c := llm.Calls(); len(c) != 2 || len(c[1]) != 1 || c[1][0].Payload.Text != "again" {
		t.Fatalf("next request %v", c)
	}
}

// §2, E-4.8, E-10.4: delay(n) = min(base × 2^(n−1), max) for every n, a
// ceiling as large as an int included: the doubling saturates at the
// ceiling instead of overflowing into a negative retry_in_ms, and the
// clock is asked for the same delay, never a negative duration.
func TestBackoffSaturatesAtALargeCeiling(t *testing.T) {
	const retries = 70
	var replies []enginetest.Reply
	for range retries + 1 {
		replies = append(replies, enginetest.Reply{Outcome: engine.Outcome{Status: omni.StatusTimeout}})
	}
	clk := enginetest.NewClock(t0)
	s, err := engine.New(engine.Config{
		Meta: enginetest.Meta("b"), LLM: enginetest.NewLLM(replies...), Clock: clk,
		MaxReconnects: retries, ReconnectBackoffMs: 2000, ReconnectBackoffMaxMs: math.MaxInt,
	})
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, s, engine.RunOptions{})
	var announced []int
	for _, m := range got {
		if m.IsEvent(omni.RequestEnd) {
			if v := m.Payload.RetryInMs(); v != nil {
				announced = append(announced, *v)
			}
		}
	}
	sleeps := clk.Sleeps()
	if len(announced) != retries || len(sleeps) != retries {
		t.Fatalf("%d announced, %d sleeps, want %d of each", len(announced), len(sleeps), retries)
	}
	for i, v := range announced {
		want := math.MaxInt
		if i < 62 && 2000<<i>>i == 2000 {
			want = 2000 << i
		}
		if v != want {
			t.Fatalf("retry %d announced %d ms, want %d", i+1, v, want)
		}
		wantSleep := time.Duration(min(int64(v), math.MaxInt64/int64(time.Millisecond))) * time.Millisecond
		if sleeps[i] != wantSleep {
			t.Fatalf("retry %d slept %v, want %v", i+1, sleeps[i], wantSleep)
		}
	}
}
