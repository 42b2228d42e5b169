package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/enginetest"
	"github.com/floehq/floe/engine/omni"
)

// compactAll runs a manual compaction to its end.
func compactAll(t *testing.T, s *engine.Session) []omni.Message {
	t.Helper()
	r, err := s.Compact(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []omni.Message
	for m := range r.All() {
		got = append(got, m)
	}
	return got
}

// Manual compaction (E-13.13), summarize mode: a no-op before any
// completed turn; afterwards the carry-over is folded into the request, the
// summary becomes the next run's first input and the Trace rotates;
// Compactability follows (ok → just_compacted).
func TestManualCompactionSummarize(t *testing.T) {
	var contexts []*enginetest.LLM
	first := enginetest.NewLLM(
		enginetest.Reply{Emit: []omni.Message{omni.ToolCallMsg("A", "echo", `{}`), enginetest.Usage(10)}},
		enginetest.Reply{Emit: []omni.Message{omni.AssistantText("[summary]we echoed[/summary]", omni.StatusCompleted), enginetest.Usage(12)}},
	)
	sink := &enginetest.Sink{}
	s, err := engine.New(engine.Config{
		Meta: enginetest.Meta("mc"), LLM: first, Trace: sink, Clock: enginetest.NewClock(t0), MaxTurns: 1,
		Compaction: &engine.Compaction{Mode: omni.ModeSummarize, Prompt: "Summarize."},
		NewLLM: func(omni.TokenCounts) engine.LLM {
			l := enginetest.NewLLM(enginetest.Reply{Emit: enginetest.TextReply(3, "ok")})
			contexts = append(contexts, l)
			return l
		},
		Environment: enginetest.Tools{"echo": func(ctx context.Context, c omni.Message, emit func(omni.Message)) error {
			emit(omni.ToolOutput("A", "echoed", omni.StatusCompleted))
			return nil
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Compactability(); got != engine.CompactEmpty {
		t.Fatalf("before any turn: %s", got)
	}
	if got := compactAll(t, s); len(got) != 0 {
		t.Fatalf("compaction of an empty context streamed %s", kinds(got))
	}
	// max_turns 1 leaves A's output as carry-over.
	collect(t, s, engine.RunOptions{Approve: allow}, omni.UserText("go"))
	if c := s.Snapshot().CarryOver; len(c) != 1 || s.Compactability() != engine.CompactOK {
		t.Fatalf("carry %v, compactability %s", c, s.Compactability())
	}
	got := compactAll(t, s)
	if kinds(got) != "compaction_begin token_usage compaction_end" || got[0].Payload.Reason() != omni.ReasonManual || got[2].Payload.Status() != omni.StatusCompleted {
		t.Fatalf("manual compaction stream: %s %+v", kinds(got), got[len(got)-1].Payload)
	}
	if in := first.Calls()[1]; kinds(in) != "tool_call_output@A text" || in[1].Payload.Text != "Summarize." {
		t.Fatalf("compaction request input: %s", kinds(in))
	}
	snap := s.Snapshot()
	if len(snap.CarryOver) != 0 || snap.PendingSummary == nil || !snap.ContextClosed || s.Compactability() != engine.CompactJustCompacted {
		t.Fatalf("after: %+v, compactability %s", snap, s.Compactability())
	}
	collect(t, s, engine.RunOptions{}, omni.UserText("next"))
	if in := contexts[0].Calls()[0]; len(in) != 2 || in[0].Payload.Text != "[context_summary]\nwe echoed\n[/context_summary]" {
		t.Fatalf("first input of the new context: %s", kinds(in))
	}
	if files := sink.Files(); len(files) != 2 || files[1][0].Type != omni.TypeSessionMeta {
		t.Fatalf("trace files: %d", len(files))
	}
}

// Manual compaction, discard mode, drops the carried tool outputs and
// starts a new context; a session without compaction answers unsupported.
func TestManualCompactionDiscard(t *testing.T) {
	s, err := engine.New(engine.Config{
		Meta: enginetest.Meta("md"), Clock: enginetest.NewClock(t0), MaxTurns: 1,
		LLM:        enginetest.NewLLM(enginetest.Reply{Emit: []omni.Message{omni.ToolCallMsg("A", "x", `{}`), enginetest.Usage(4)}}),
		Compaction: &engine.Compaction{Mode: omni.ModeDiscard},
		NewLLM:     func(omni.TokenCounts) engine.LLM { return enginetest.NewLLM() },
	})
	if err != nil {
		t.Fatal(err)
	}
	collect(t, s, engine.RunOptions{}, omni.UserText("go")) // denied: A's denial is carried
	got := compactAll(t, s)
	if kinds(got) != "compaction_begin compaction_end" || got[1].Payload.Mode() != omni.ModeDiscard {
		t.Fatalf("stream: %s", kinds(got))
	}
	if c := s.Snapshot().CarryOver; len(c) != 0 {
		t.Fatalf("tool outputs kept after discard: %v", c)
	}
	plain, _ := engine.New(engine.Config{Meta: enginetest.Meta("p"), LLM: enginetest.NewLLM()})
	if got := plain.Compactability(); got != engine.CompactUnsupported {
		t.Fatalf("without compaction: %s", got)
	}
}

// A resumed session compacted in discard mode before its first request
// starts its new context empty: the history replayed from the Trace was
// never handed to the old context, and it is not handed to the new one
// either (E-13.10). It was, so the discarded conversation came back.
func TestDiscardAfterResumeDropsTheHistory(t *testing.T) {
	var contexts []*enginetest.LLM
	old := enginetest.NewLLM()
	s, err := engine.New(engine.Config{
		Meta: enginetest.Meta("rd"), LLM: old, Clock: enginetest.NewClock(t0),
		Compaction: &engine.Compaction{Mode: omni.ModeDiscard},
		NewLLM: func(omni.TokenCounts) engine.LLM {
			l := enginetest.NewLLM(enginetest.Reply{Emit: enginetest.TextReply(3, "fresh")})
			contexts = append(contexts, l)
			return l
		},
		Resume: &engine.Snapshot{
			MetaWritten: true, SessionTurns: 1, LastRequestTotal: 40,
			History: []omni.Message{omni.UserText("old question"), omni.AssistantText("old answer", omni.StatusCompleted)},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := compactAll(t, s); kinds(got) != "compaction_begin compaction_end" {
		t.Fatalf("discard stream: %s", kinds(got))
	}
	collect(t, s, engine.RunOptions{}, omni.UserText("new question"))
	if len(contexts) != 1 || len(contexts[0].Calls()) != 1 {
		t.Fatalf("new contexts %d", len(contexts))
	}
	if h := contexts[0].History(); len(h) != 0 {
		t.Errorf("the new context was handed the discarded history: %s", kinds(h))
	}
	if len(old.History()) != 0 || len(old.Calls()) != 0 {
		t.Errorf("the old context was used after the discard: history %d, calls %d", len(old.History()), len(old.Calls()))
	}
}

// A Config.NewLLM that returns nil (a factory whose model could not be
// made) fails the new context's requests permanently, naming NewLLM: each
// attempt panicked on the nil LLM, was retried MaxReconnects times over
// the backoff, and the run ended "llm callback panicked: … nil pointer
// dereference", naming nothing of the embedder's.
func TestNilLLMFromNewLLM(t *testing.T) {
	clk := enginetest.NewClock(t0)
	var ds diags
	s, err := engine.New(engine.Config{
		Meta: enginetest.Meta("s1"), LLM: enginetest.NewLLM(enginetest.Reply{Emit: enginetest.TextReply(5, "hi")}),
		Compaction: &engine.Compaction{Mode: omni.ModeDiscard},
		NewLLM:     func(omni.TokenCounts) engine.LLM { return nil },
		Clock:      clk, OnDiagnostic: ds.add,
	})
	if err != nil {
		t.Fatal(err)
	}
	collect(t, s, engine.RunOptions{}, omni.UserText("a"))
	compactAll(t, s)
	got := collect(t, s, engine.RunOptions{}, omni.UserText("b"))
	ends := requestEnds(got)
	const want = "engine: Config.NewLLM returned a nil LLM"
	if len(ends) != 1 || ends[0].Status() != omni.StatusFailed || ends[0].ErrorMessage() != want {
		t.Fatalf("request_ends %+v, want one failed %q\n%s", ends, want, show(got))
	}
	if last := got[len(got)-1]; !last.IsEvent(omni.Abort) || !strings.Contains(last.Payload.Reason(), want) {
		t.Fatalf("last message %s, want an abort naming %q", last.AppendJSON(nil), want)
	}
	if sl := clk.Sleeps(); len(sl) != 0 {
		t.Errorf("backoff waits %v: a nil LLM is no failure a retry mends", sl)
	}
	if k := ds.kinds(); k != "" {
		t.Errorf("diagnostics %s, want none", k)
	}
}

// A compaction request's retry waits the provider's Retry-After
// (Outcome.RetryAfter) when it is longer than the backoff's delay, as a
// turn's does.
func TestCompactionRetryAfterWaited(t *testing.T) {
	llm := enginetest.NewLLM(
		enginetest.Reply{Emit: enginetest.TextReply(10, "Hi.")},
		enginetest.Reply{Outcome: engine.Outcome{Status: omni.StatusTimeout, ErrorMessage: "HTTP 429", RetryAfter: 45 * time.Second}},
		enginetest.Reply{Emit: []omni.Message{omni.AssistantText("[summary]hi[/summary]", omni.StatusCompleted), enginetest.Usage(12)}},
	)
	clk := enginetest.NewClock(t0)
	s, err := engine.New(engine.Config{
		Meta: enginetest.Meta("mc-retry-after"), LLM: llm, Clock: clk,
		Compaction: &engine.Compaction{Mode: omni.ModeSummarize, Prompt: "Summarize."},
		NewLLM:     func(omni.TokenCounts) engine.LLM { return enginetest.NewLLM() },
	})
	if err != nil {
		t.Fatal(err)
	}
	collect(t, s, engine.RunOptions{}, omni.UserText("go"))
	got := compactAll(t, s)
	if kinds(got) != "compaction_begin token_usage compaction_end" || got[len(got)-1].Payload.Status() != omni.StatusCompleted {
		t.Fatalf("compaction stream: %s", kinds(got))
	}
	if sl := clk.Sleeps(); len(sl) != 1 || sl[0] != 45*time.Second {
		t.Errorf("waits %v, want [45s]", sl)
	}
}
