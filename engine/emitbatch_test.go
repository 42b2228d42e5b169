package engine_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/enginetest"
	"github.com/floehq/floe/engine/omni"
)

// GenerateParams.EmitBatch is emit, message for message: the same
// stream, the same Trace and the same diagnostics whatever the batches'
// size, with fragments (the fast path) between complete messages, tool
// calls and their approvals, a fragment the LLM may not send (dropped), a
// fragment that breaks the discipline mid-batch (the attempt malformed,
// and retried) and a batch over the queue's capacity.
func TestEmitBatchAsEmit(t *testing.T) {
	text := func(n int) []omni.Message {
		deltas := make([]string, n)
		for i := range deltas {
			deltas[i] = fmt.Sprintf("d%d ", i)
		}
		return enginetest.TextReply(9, deltas...)
	}
	first := slices.Concat(
		[]omni.Message{
			omni.Partial(omni.PartialThinking, omni.EventStart, "", "", "", omni.StatusCompleted),
			omni.Partial(omni.PartialThinking, omni.EventDelta, "hm", "", "", omni.StatusCompleted),
			omni.Partial(omni.PartialThinking, omni.EventDelta, "m", "", "", omni.StatusCompleted),
			omni.Partial(omni.PartialThinking, omni.EventStop, "", "", "", omni.StatusCompleted),
			{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.Thinking, Role: omni.RoleAssistant, Thinking: "hmm", StopReason: omni.StatusCompleted}},
		},
		text(3)[:6], // the text, without its usage
		[]omni.Message{
			omni.Partial(omni.PartialToolCallOutput, omni.EventStart, "", "A", "", omni.StatusCompleted), // not the LLM's: dropped
			omni.Partial(omni.PartialToolCall, omni.EventStart, "", "A", "echo", omni.StatusCompleted),
			omni.Partial(omni.PartialToolCall, omni.EventDelta, `{"x":`, "A", "echo", omni.StatusCompleted),
			omni.Partial(omni.PartialToolCall, omni.EventDelta, `1}`, "A", "echo", omni.StatusCompleted),
			omni.Partial(omni.PartialToolCall, omni.EventStop, "", "A", "echo", omni.StatusCompleted),
			omni.ToolCallMsg("A", "echo", `{"x":1}`),
			omni.ToolCallMsg("B", "echo", `{}`),
			enginetest.Usage(4),
		})
	malformed := []omni.Message{
		omni.Partial(omni.PartialText, omni.EventStart, "", "", "", omni.StatusCompleted),
		omni.Partial(omni.PartialText, omni.EventDelta, "a", "", "", omni.StatusCompleted),
		omni.Partial(omni.PartialThinking, omni.EventDelta, "no start", "", "", omni.StatusCompleted),
		omni.Partial(omni.PartialText, omni.EventDelta, "b", "", "", omni.StatusCompleted),
		omni.Partial(omni.PartialText, omni.EventStop, "", "", "", omni.StatusCompleted),
	}
	run := func(batch int) (stream []string, trace []string, kinds string) {
		llm := enginetest.NewLLM(
			enginetest.Reply{Emit: first, Batch: batch},
			enginetest.Reply{Emit: malformed, Batch: batch},
			enginetest.Reply{Emit: text(700), Batch: batch}, // over the queue's capacity
		)
		tools := enginetest.Tools{"echo": func(ctx context.Context, c omni.Message, emit func(omni.Message)) error {
			emit(omni.ToolOutput(c.Payload.ToolCallID, "ok", omni.StatusCompleted))
			return nil
		}}
		var d diags
		sink := &enginetest.Sink{}
		s, err := engine.New(engine.Config{Meta: enginetest.Meta("b"), LLM: llm, Environment: tools, Clock: enginetest.NewClock(t0), Trace: sink, OnDiagnostic: d.add})
		if err != nil {
			t.Fatal(err)
		}
		approve := func(ctx context.Context, tc omni.Message) (engine.Decision, error) {
			if tc.Payload.ToolCallID == "B" {
				return omni.DecisionDeny, nil
			}
			return omni.DecisionAllow, nil
		}
		last := ""
		for _, m := range collect(t, s, engine.RunOptions{Approve: approve}, omni.UserText("go")) {
			if m.Timestamp < last {
				t.Fatalf("batch %d: timestamp %s after %s", batch, m.Timestamp, last)
			}
			last, m.Timestamp = m.Timestamp, ""
			stream = append(stream, string(m.AppendJSON(nil)))
		}
		for _, f := range sink.Files() {
			for _, m := range f {
				m.Timestamp = ""
				trace = append(trace, string(m.AppendJSON(nil)))
			}
		}
		return withoutOutputOf("A", t, stream), withoutOutputOf("A", t, trace), d.kinds()
	}
	wantStream, wantTrace, wantKinds := run(0)
	if !strings.Contains(strings.Join(wantStream, "\n"), `"status":"malformed"`) || wantKinds != "llm" {
		t.Fatalf("the script did not make a malformed attempt and one dropped message (diagnostics %q)", wantKinds)
	}
	sameAsEmit(t, run, wantStream, wantTrace, wantKinds)
}

// sameAsEmit runs run with batches of 1, 2, 5 and 1,000 messages and
// compares each run's stream, trace and diagnostics with emit's.
func sameAsEmit(t *testing.T, run func(batch int) (stream, trace []string, diags string), wantStream, wantTrace []string, wantDiags string) {
	t.Helper()
	for _, batch := range []int{1, 2, 5, 1000} {
		stream, trace, diags := run(batch)
		if i := firstDiff(stream, wantStream); i >= 0 {
			t.Errorf("batch %d: the stream differs from emit's at message %d of %d (want %d):\n%s", batch, i, len(stream), len(wantStream), around(stream, wantStream, i))
		}
		if i := firstDiff(trace, wantTrace); i >= 0 {
			t.Errorf("batch %d: the trace differs from emit's at record %d of %d (want %d):\n%s", batch, i, len(trace), len(wantTrace), around(trace, wantTrace, i))
		}
		if diags != wantDiags {
			t.Errorf("batch %d: diagnostics\n%s\nwant\n%s", batch, diags, wantDiags)
		}
	}
}

// emitIn hands ms over through emit one at a time (batch 0), or through
// emitBatch batch at a time.
func emitIn(batch int, ms []omni.Message, emit func(omni.Message), emitBatch func([]omni.Message)) {
	if batch == 0 {
		for _, m := range ms {
			emit(m)
		}
		return
	}
	for c := range slices.Chunk(ms, batch) {
		emitBatch(c)
	}
}

// withoutOutputOf drops the one tool_call_output of call id: the allowed
// tool runs concurrently, and where its output lands varies.
func withoutOutputOf(id string, t *testing.T, ms []string) []string {
	t.Helper()
	out := slices.DeleteFunc(slices.Clone(ms), func(m string) bool {
		return strings.Contains(m, `"tool_call_output"`) && strings.Contains(m, `"tool_call_id":"`+id+`"`)
	})
	if len(out) != len(ms)-1 {
		t.Fatalf("want one output of call %s, got %d in %d messages", id, len(ms)-len(out), len(ms))
	}
	return out
}

// firstDiff returns the index of the first difference of a and b, or -1.
func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// around shows a and b at index i.
func around(a, b []string, i int) string {
	at := func(ms []string) string {
		if i < len(ms) {
			return ms[i]
		}
		return "(none)"
	}
	return "got  " + at(a) + "\nwant " + at(b)
}

// A batch the run's abort interrupts: EmitBatch returns (the messages
// queued before the abort are in the stream, in order, none after), and
// the request ends aborted.
func TestEmitBatchAbort(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	llm := engine.LLMFunc(func(lctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		ms := []omni.Message{omni.Partial(omni.PartialText, omni.EventStart, "", "", "", omni.StatusCompleted)}
		for i := 0; i < 2000; i++ {
			ms = append(ms, omni.Partial(omni.PartialText, omni.EventDelta, "x", "", "", omni.StatusCompleted))
		}
		p.EmitBatch(ms[:600])
		cancel() // the consumer has not read all of it: the queue is full
		p.EmitBatch(ms[600:])
		<-lctx.Done()
		return engine.Outcome{Status: omni.StatusAborted}
	})
	s, err := engine.New(engine.Config{Meta: enginetest.Meta("a"), LLM: llm, Clock: enginetest.NewClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	seq, err := s.Run(ctx, []omni.Message{omni.UserText("go")}, engine.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deltas, ended := 0, ""
	for m := range seq {
		if m.Payload.Type == omni.PartialText && m.Payload.EventType == omni.EventDelta {
			deltas++
		}
		if m.IsEvent(omni.RequestEnd) {
			ended = m.Payload.Status()
		}
	}
	if deltas < 600 || deltas > 2000 || ended != omni.StatusAborted {
		t.Fatalf("%d deltas, request ended %q; want 600 to 2000 and aborted", deltas, ended)
	}
}
