package engine_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/enginetest"
	"github.com/floehq/floe/engine/omni"
)

// taskShape is a W1-like task of the shared peers benchmark: T requests; D
// text deltas per request; K tool calls per request but the last, each
// with 4 argument deltas; F output fragments per call.
type taskShape struct{ T, D, K, F int }

// BenchmarkTask runs whole W1-shaped tasks through the engine with Go
// callbacks (no JavaScript): the engine's own share of a request and of a
// tool call, against which the WebAssembly bridge's figures are read.
func BenchmarkTask(b *testing.B) {
	for _, c := range []struct {
		name string
		s    taskShape
	}{
		{"W1", taskShape{20, 200, 4, 10}},
		{"requests", taskShape{60, 10, 1, 1}},
		{"tools", taskShape{20, 10, 16, 1}},
	} {
		b.Run(c.name, func(b *testing.B) { benchTask(b, c.s) })
	}
}

func benchTask(b *testing.B, s taskShape) {
	const delta = "abcdefg "
	text := strings.Repeat(delta, s.D)
	turn := 0
	llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		t := turn
		turn++
		emit(omni.Partial(omni.PartialText, omni.EventStart, "", "", "", omni.StatusCompleted))
		for i := 0; i < s.D; i++ {
			emit(omni.Partial(omni.PartialText, omni.EventDelta, delta, "", "", omni.StatusCompleted))
		}
		emit(omni.Partial(omni.PartialText, omni.EventStop, "", "", "", omni.StatusCompleted))
		emit(omni.AssistantText(text, omni.StatusCompleted))
		if t < s.T-1 {
			for k := 0; k < s.K; k++ {
				id := "call_" + strconv.Itoa(t) + "_" + strconv.Itoa(k)
				args := `{"path":"file_` + strconv.Itoa(k) + `.txt","n":12345}`
				emit(omni.Partial(omni.PartialToolCall, omni.EventStart, "", id, "work", omni.StatusCompleted))
				q := len(args) / 4
				for i := 0; i < 4; i++ {
					end := (i + 1) * q
					if i == 3 {
						end = len(args)
					}
					emit(omni.Partial(omni.PartialToolCall, omni.EventDelta, args[i*q:end], id, "work", omni.StatusCompleted))
				}
				emit(omni.Partial(omni.PartialToolCall, omni.EventStop, "", id, "work", omni.StatusCompleted))
				emit(omni.ToolCallMsg(id, "work", args))
			}
		}
		emit(enginetest.Usage(int64(100 * (t + 1))))
		return engine.Outcome{Status: omni.StatusCompleted}
	})
	env := engine.EnvironmentFunc(func(ctx context.Context, req engine.ToolRequest, emit func(omni.Message)) error {
		id := req.ToolCall.Payload.ToolCallID
		emit(omni.Partial(omni.PartialToolCallOutput, omni.EventStart, "", id, "", omni.StatusCompleted))
		for i := 0; i < s.F; i++ {
			emit(omni.Partial(omni.PartialToolCallOutput, omni.EventDelta, "0123456789abcdef", id, "", omni.StatusCompleted))
		}
		emit(omni.Partial(omni.PartialToolCallOutput, omni.EventStop, "", id, "", omni.StatusCompleted))
		emit(omni.ToolOutput(id, strings.Repeat("0123456789abcdef", s.F), omni.StatusCompleted))
		return nil
	})
	allow := func(context.Context, omni.Message) (engine.Decision, error) { return engine.DecisionAllow, nil }
	in := []omni.Message{omni.UserText("go")}
	b.ReportAllocs()
	msgs := 0
	for b.Loop() {
		turn = 0
		sess, err := engine.New(engine.Config{Meta: enginetest.Meta("bench"), LLM: llm, Environment: env, Clock: enginetest.NewClock(t0)})
		if err != nil {
			b.Fatal(err)
		}
		seq, err := sess.Run(context.Background(), in, engine.RunOptions{Approve: allow})
		if err != nil {
			b.Fatal(err)
		}
		for m := range seq {
			msgs++
			if m.IsEvent(omni.RequestEnd) && m.Payload.Status() != omni.StatusCompleted {
				b.Fatalf("request ended %s: %s", m.Payload.Status(), m.Payload.ErrorMessage())
			}
		}
		if turn != s.T {
			b.Fatalf("%d requests, want %d", turn, s.T)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/task")
	b.ReportMetric(float64(msgs)/float64(b.N), "msgs/task")
}

// TestRequestReusesQueueBuffers checks that a request does not grow its
// merge queue's buffers from nothing: with 200 deltas a request allocated
// about 410 KB before a run kept the buffers between its attempts, 43 KB
// after (the first attempt of each run still grows them).
func TestRequestReusesQueueBuffers(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation count")
	}
	res := testing.Benchmark(func(b *testing.B) { benchTask(b, taskShape{T: 20, D: 200, K: 1, F: 1}) })
	perRequest := res.AllocedBytesPerOp() / 20
	if res.N == 0 || perRequest > 100_000 {
		t.Fatalf("a request allocates %d bytes (N=%d), want under 100 KB", perRequest, res.N)
	}
	t.Logf("%d bytes a request", perRequest)
}
