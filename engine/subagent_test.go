package engine_test

import (
	"context"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/enginetest"
	"github.com/floehq/floe/engine/omni"
)

// A subagent's run that its consumer leaves before the child's first
// request (a Close before any Next, a break at the child's session_meta)
// is a run aborted before its first request (E-3.3a, E-3.6.3): the child's
// Trace holds its prompt and the abort, and the prompt is carried over to
// the child's next run (E-9.7). It wrote nothing and dropped the prompt.
func TestSubagentLeftBeforeItsRunCarriesThePrompt(t *testing.T) {
	for _, leave := range []struct {
		name string
		run  func(*engine.Run)
	}{
		{"closed unread", func(r *engine.Run) { r.Close() }},
		{"break at session_meta", func(r *engine.Run) {
			for range r.All() {
				break
			}
		}},
	} {
		t.Run(leave.name, func(t *testing.T) {
			meta := enginetest.Meta("child")
			meta.Payload.Edit().Source = omni.SourceSubagent
			llm := enginetest.NewLLM(enginetest.Reply{Emit: enginetest.TextReply(3, "done")})
			sink := &enginetest.Sink{}
			h, err := engine.NewSubagent(engine.Config{Meta: meta, LLM: llm, Trace: sink, Clock: enginetest.NewClock(t0)})
			if err != nil {
				t.Fatal(err)
			}
			r, err := h.Start(context.Background(), "first task", nil)
			if err != nil {
				t.Fatal(err)
			}
			leave.run(r)
			files := sink.Files()
			if len(files) != 1 || kinds(files[0]) != " text abort" || files[0][1].Payload.Text != "first task" ||
				files[0][1].Payload.Sender() != omni.SenderParentAgent || files[0][2].Payload.Reason() != engine.ReasonUser {
				t.Fatalf("child trace: %v", files)
			}
			if c := h.Session().Snapshot().CarryOver; len(c) != 1 || c[0].Payload.Text != "first task" {
				t.Fatalf("carry-over: %s", kinds(c))
			}
			for range h.Run(context.Background(), "second task", nil) {
			}
			if in := llm.Calls(); len(in) != 1 || kinds(in[0]) != "text text" || in[0][0].Payload.Text != "first task" || in[0][1].Payload.Text != "second task" {
				t.Fatalf("the child's next request: %v", in)
			}
		})
	}
}
