package engine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/enginetest"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

// BenchmarkTurnAfterHistory is one short turn (a prompt, a two-delta
// answer, token_usage) of a session that has already run 0, 1,000 or
// 10,000 such turns, its Trace written to a memory store: a turn's cost
// should not grow with the history (the engine sends only the new input,
// E-3.1, and the Trace is appended to).
func BenchmarkTurnAfterHistory(b *testing.B) {
	for _, prior := range []int{0, 1_000, 10_000} {
		b.Run(fmt.Sprintf("turns=%d", prior), func(b *testing.B) {
			llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
				emit(omni.Partial(omni.PartialText, omni.EventStart, "", "", "", omni.StatusCompleted))
				emit(omni.Partial(omni.PartialText, omni.EventDelta, "hi ", "", "", omni.StatusCompleted))
				emit(omni.Partial(omni.PartialText, omni.EventDelta, "there", "", "", omni.StatusCompleted))
				emit(omni.Partial(omni.PartialText, omni.EventStop, "", "", "", omni.StatusCompleted))
				emit(omni.AssistantText("hi there", omni.StatusCompleted))
				emit(enginetest.Usage(1))
				return engine.Outcome{Status: omni.StatusCompleted}
			})
			store := &trace.MemStore{}
			s, err := engine.New(engine.Config{Meta: enginetest.Meta("bench-history"), LLM: llm, Trace: trace.NewWriter(store, "bench-history", 1), Clock: enginetest.NewClock(t0)})
			if err != nil {
				b.Fatal(err)
			}
			turn := func(i int) {
				seq, err := s.Run(context.Background(), []omni.Message{omni.UserText(fmt.Sprint("prompt ", i))}, engine.RunOptions{})
				if err != nil {
					b.Fatal(err)
				}
				for m := range seq {
					if m.IsEvent(omni.RequestEnd) && m.Payload.Status() != omni.StatusCompleted {
						b.Fatalf("request ended %s: %s", m.Payload.Status(), m.Payload.ErrorMessage())
					}
				}
			}
			for i := range prior {
				turn(i)
			}
			b.ReportAllocs()
			i := prior
			for b.Loop() {
				turn(i)
				i++
			}
		})
	}
}
