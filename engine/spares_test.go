package engine_test

import (
	"context"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/enginetest"
	"github.com/floehq/floe/engine/omni"
)

// Natively a run starts with the buffers a finished run left, instead of
// growing its queue's buffer from nothing. The pool may drop what it is
// given (under the race detector it does so at random, and another test's
// run may take it first), so a few runs are tried.
func TestSparesReusedAcrossRuns(t *testing.T) {
	if !engine.PoolSpares {
		t.Skip("on WebAssembly a run starts without spares")
	}
	llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		emit(omni.AssistantText("hi", omni.StatusCompleted))
		emit(enginetest.Usage(1))
		return engine.Outcome{Status: omni.StatusCompleted}
	})
	s, err := engine.New(engine.Config{Meta: enginetest.Meta("spares"), LLM: llm, Clock: enginetest.NewClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	run := func() {
		t.Helper()
		seq, err := s.Run(context.Background(), []omni.Message{omni.UserText("go")}, engine.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for range seq {
		}
	}
	pooled := false
	for range 30 { // a finished run pools its buffers, cleared
		run()
		if some, stale := engine.TakeSparesForTest(); some {
			if stale {
				t.Fatal("a pooled buffer holds a stale item")
			}
			pooled = true
			break
		}
	}
	if !pooled {
		t.Fatal("30 finished runs left no buffers for the next")
	}
	for range 30 { // the next run takes a pooled buffer, queues in it, and pools it again
		reused := engine.PutSpareForTest(300)
		run()
		if reused() {
			return
		}
	}
	t.Fatal("in 30 runs, none queued its messages in the buffer a finished run had left")
}
