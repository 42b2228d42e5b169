package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/enginetest"
	"github.com/floehq/floe/engine/omni"
)

// ToolRequest.EmitBatch is the tool's emit, message for message: the same
// stream, the same trace, the same output built from the deltas and the
// same diagnostics whatever the batches' size, with the call's own
// fragments (the held path) between an engine-only message and another
// call's fragment (both dropped), an invalid fragment, subagent traffic
// (its session_meta announced), a delta with images, more deltas than the
// queue holds, and a batch emitted after the tool returned (dropped).
func TestToolEmitBatchAsEmit(t *testing.T) {
	delta := func(s string) omni.Message {
		return omni.Partial(omni.PartialToolCallOutput, omni.EventDelta, s, "A", "", omni.StatusCompleted)
	}
	script := []omni.Message{
		omni.Partial(omni.PartialToolCallOutput, omni.EventStart, "", "A", "", omni.StatusCompleted),
		delta("one "),
		omni.RequestBeginMsg(), // engine-only: dropped
		delta("two "),
		omni.Partial(omni.PartialToolCallOutput, omni.EventDelta, "not mine", "Z", "", omni.StatusCompleted),                     // dropped
		{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.PartialToolCallOutput, EventType: "middle", ToolCallID: "A"}}, // invalid: dropped
	}
	child := enginetest.Meta("child")
	child.Origin = []string{"child"}
	sub := omni.Partial(omni.PartialText, omni.EventStart, "", "", "", omni.StatusCompleted)
	sub.Origin = []string{"child"}
	withImage := delta("three ")
	withImage.Payload.Rest = &omni.Rest{Images: []string{"https://example.com/a.png"}}
	script = append(script, child, sub, withImage)
	for i := range 700 {
		script = append(script, delta(fmt.Sprintf("d%d ", i)))
	}
	script = append(script, omni.Partial(omni.PartialToolCallOutput, omni.EventStop, "", "A", "", omni.StatusCompleted))
	late := []omni.Message{delta("late"), delta("later")}

	run := func(batch int) (stream, trace []string, ds string) {
		llm := enginetest.NewLLM(
			enginetest.Reply{Emit: []omni.Message{omni.ToolCallMsg("A", "echo", `{}`), enginetest.Usage(1)}},
			enginetest.Reply{Emit: enginetest.TextReply(9, "done")},
		)
		var emitLate func(ms []omni.Message)
		// The tool emits once its request's request_end is taken, so that
		// its messages follow it in every run.
		ended := make(chan struct{})
		env := engine.EnvironmentFunc(func(ctx context.Context, req engine.ToolRequest, emit func(omni.Message)) error {
			select {
			case <-ended:
			case <-ctx.Done():
				return ctx.Err()
			}
			if req.EmitBatch == nil {
				t.Fatal("the engine gave the tool no EmitBatch")
			}
			send := func(ms []omni.Message) { emitIn(batch, ms, emit, req.EmitBatch) }
			emitLate = send
			send(script)
			return nil
		})
		var d diags
		sink := &enginetest.Sink{}
		s, err := engine.New(engine.Config{Meta: enginetest.Meta("b"), LLM: llm, Environment: env, Clock: enginetest.NewClock(t0), Trace: sink, OnDiagnostic: d.add})
		if err != nil {
			t.Fatal(err)
		}
		allow := func(context.Context, omni.Message) (engine.Decision, error) { return omni.DecisionAllow, nil }
		seq, err := s.Run(context.Background(), []omni.Message{omni.UserText("go")}, engine.RunOptions{Approve: allow})
		if err != nil {
			t.Fatal(err)
		}
		last, first := "", true
		for m := range seq {
			if m.IsEvent(omni.RequestEnd) && first { // the tool call's request
				close(ended)
				first = false
			}
			if m.Timestamp < last {
				t.Fatalf("batch %d: timestamp %s after %s", batch, m.Timestamp, last)
			}
			last, m.Timestamp = m.Timestamp, ""
			stream = append(stream, string(m.AppendJSON(nil)))
		}
		emitLate(late)
		for _, f := range sink.Files() {
			for _, m := range f {
				m.Timestamp = ""
				trace = append(trace, string(m.AppendJSON(nil)))
			}
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		var lines []string
		for _, x := range d.ds {
			lines = append(lines, string(x.Kind)+": "+x.Err.Error())
		}
		return stream, trace, strings.Join(lines, "\n")
	}
	wantStream, wantTrace, wantDiags := run(0)
	joined := strings.Join(wantStream, "\n") + "\n" + strings.Join(wantTrace, "\n")
	for _, want := range []string{`"output":"one two three d0 d1 `, `"images":["https://example.com/a.png"]`, `"origin":["child"]`, `"type":"subagent","session_id":"child"`} {
		if !strings.Contains(joined, want) {
			t.Fatalf("emit's stream and trace have no %s:\n%s\n%s", want, joined, wantDiags)
		}
	}
	if n := strings.Count(wantDiags, "\n") + 1; n != 5 || !strings.Contains(wantDiags, "emitted after it returned") {
		t.Fatalf("emit's diagnostics (want 5: engine-only, another call's, invalid, two late):\n%s", wantDiags)
	}
	sameAsEmit(t, run, wantStream, wantTrace, wantDiags)
}
