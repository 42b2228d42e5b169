package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/enginetest"
	"github.com/floehq/floe/engine/omni"
)

const benchDeltas = 100_000

const benchDelta = "abcdefg "

var benchFull = strings.Repeat(benchDelta, benchDeltas)

// deltaProducer is the producer both benchmarks share: it builds and emits
// one partial_text delta per step, framed by start/stop, the complete text
// (the deltas' concatenation, P-7) and token_usage.
func deltaProducer(n int, emit func(omni.Message)) {
	emit(omni.Partial(omni.PartialText, omni.EventStart, "", "", "", omni.StatusCompleted))
	for i := 0; i < n; i++ {
		emit(omni.Partial(omni.PartialText, omni.EventDelta, benchDelta, "", "", omni.StatusCompleted))
	}
	emit(omni.Partial(omni.PartialText, omni.EventStop, "", "", "", omni.StatusCompleted))
	emit(omni.AssistantText(benchFull[:n*len(benchDelta)], omni.StatusCompleted))
	emit(enginetest.Usage(1))
}

// BenchmarkStream100kEngine streams 100,000 text deltas through a whole run
// (driver, merge queue, Trace filter, consumer). Compare msgs/s with
// BenchmarkStream100kChannel.
func BenchmarkStream100kEngine(b *testing.B) {
	// A fake clock: a request that is not clean would retry at once
	// instead of waiting, and the check below fails the benchmark.
	benchStream100k(b, enginetest.NewClock(t0))
}

// BenchmarkStream100kEngineSystemClock is BenchmarkStream100kEngine with
// the engine's default clock, the system's, read as each fragment is
// queued.
func BenchmarkStream100kEngineSystemClock(b *testing.B) { benchStream100k(b, nil) }

func benchStream100k(b *testing.B, clock engine.Clock) {
	llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		deltaProducer(benchDeltas, emit)
		return engine.Outcome{Status: omni.StatusCompleted}
	})
	s, err := engine.New(engine.Config{Meta: enginetest.Meta("bench"), LLM: llm, Trace: &enginetest.Sink{}, Clock: clock})
	if err != nil {
		b.Fatal(err)
	}
	in := []omni.Message{omni.UserText("go")}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		seq, err := s.Run(context.Background(), in, engine.RunOptions{})
		if err != nil {
			b.Fatal(err)
		}
		for m := range seq {
			if m.Payload.Type == omni.PartialText {
				n++
			}
			if m.IsEvent(omni.RequestEnd) && m.Payload.Status() != omni.StatusCompleted {
				b.Fatalf("request ended %s: %s", m.Payload.Status(), m.Payload.ErrorMessage())
			}
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkStream100kChannel is the baseline: the same producer feeding a
// plain buffered channel to a consumer goroutine.
func BenchmarkStream100kChannel(b *testing.B) {
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		ch := make(chan omni.Message, 256)
		go func() {
			deltaProducer(benchDeltas, func(m omni.Message) { ch <- m })
			close(ch)
		}()
		for m := range ch {
			if m.Payload.Type == omni.PartialText {
				n++
			}
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "msgs/s")
}
