package engine_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/enginetest"
	"github.com/floehq/floe/engine/omni"
)

// An LLM that streams several tool calls at once from as many goroutines
// (emit serializes its callers), while another goroutine sends complete
// tool calls, each held for its approval: each stream's deltas keep their
// order, every call is approved, run and answered, and the stream keeps
// the discipline (a stop must be followed by its complete message, so the
// streams end one after another). The fragments take emit's fast path
// while a complete tool_call holds the slow path for its approval: run
// under -race, this checks that the two never share the driver's checks.
func TestConcurrentEmits(t *testing.T) { testConcurrentEmits(t, 0) }

// The same through GenerateParams.EmitBatch, three messages a batch: the
// batches' holds of the queue's lock, the slow path's release of it for
// each complete tool call and the other goroutines' batches interleave.
func TestConcurrentEmitBatches(t *testing.T) { testConcurrentEmits(t, 3) }

// testConcurrentEmits is TestConcurrentEmits; with batch > 0 each
// goroutine hands its messages over batch at a time (EmitBatch).
func testConcurrentEmits(t *testing.T, batch int) {
	const streams, deltas, whole = 3, 40, 4
	args := func(k int) (parts []string, all string) {
		parts = append(parts, `{"k":"`)
		for i := 0; i < deltas; i++ {
			parts = append(parts, fmt.Sprintf("%d.%02d ", k, i))
		}
		parts = append(parts, `"}`)
		for _, p := range parts {
			all += p
		}
		return parts, all
	}
	first := true
	llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		if !first {
			for _, m := range enginetest.TextReply(2, "do", "ne") {
				emit(m)
			}
			return engine.Outcome{Status: engine.StatusCompleted}
		}
		first = false
		send := func(ms []omni.Message) { emitIn(batch, ms, emit, p.EmitBatch) }
		var wg sync.WaitGroup
		for k := 0; k < streams; k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id := "c" + strconv.Itoa(k)
				parts, _ := args(k)
				ms := []omni.Message{omni.Partial(omni.PartialToolCall, omni.EventStart, "", id, "echo", omni.StatusCompleted)}
				for _, a := range parts {
					ms = append(ms, omni.Partial(omni.PartialToolCall, omni.EventDelta, a, id, "echo", omni.StatusCompleted))
				}
				send(ms)
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ms []omni.Message
			for j := 0; j < whole; j++ {
				ms = append(ms, omni.ToolCallMsg("d"+strconv.Itoa(j), "echo", "{}"))
			}
			send(ms)
		}()
		wg.Wait()
		for k := 0; k < streams; k++ {
			id := "c" + strconv.Itoa(k)
			_, all := args(k)
			emit(omni.Partial(omni.PartialToolCall, omni.EventStop, "", id, "echo", omni.StatusCompleted))
			emit(omni.ToolCallMsg(id, "echo", all))
		}
		emit(enginetest.Usage(1))
		return engine.Outcome{Status: engine.StatusCompleted}
	})
	tools := enginetest.Tools{"echo": func(ctx context.Context, c omni.Message, emit func(omni.Message)) error {
		emit(omni.ToolOutput(c.Payload.ToolCallID, "ok", omni.StatusCompleted))
		return nil
	}}
	s, err := engine.New(engine.Config{Meta: enginetest.Meta("concurrent"), LLM: llm, Environment: tools, Clock: enginetest.NewClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, s, engine.RunOptions{Approve: allow}, omni.UserText("go"))
	var fromLLM []omni.Message // the tools' outputs may come between a stop and its complete message
	for _, m := range got {
		if !m.IsModel(omni.ToolCallOutput) && !m.IsModel(omni.PartialToolCallOutput) {
			fromLLM = append(fromLLM, m)
		}
	}
	checkDiscipline(t, fromLLM)
	seen := map[string][]string{}
	var decisions, outputs int
	for _, m := range got {
		switch {
		case m.IsModel(omni.PartialToolCall) && m.Payload.EventType == omni.EventDelta:
			id := m.Payload.ToolCallID
			seen[id] = append(seen[id], m.Payload.Arguments)
		case m.IsEvent(omni.ApprovalDecision):
			decisions++
		case m.IsModel(omni.ToolCallOutput):
			outputs++
		}
	}
	for k := 0; k < streams; k++ {
		parts, _ := args(k)
		if ds := seen["c"+strconv.Itoa(k)]; fmt.Sprint(ds) != fmt.Sprint(parts) {
			t.Fatalf("call c%d: deltas %q, want %q\n%s", k, ds, parts, show(got))
		}
	}
	ends := requestEnds(got)
	if decisions != streams+whole || outputs != streams+whole || len(ends) != 2 || ends[0].Status() != omni.StatusCompleted {
		t.Fatalf("%d decisions, %d outputs, request_end %+v\n%s", decisions, outputs, ends, show(got))
	}
}
