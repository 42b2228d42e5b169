package engine_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/enginetest"
	"github.com/floehq/floe/engine/omni"
)

// With ApproveHonorsCancel the approver is called without a goroutine of
// its own; the run must not tell the difference: the same stream for the
// same decisions, a panic is a deny with a diagnostic, and an abort while
// the approver waits on its ctx ends the run as before.
func TestApproveHonorsCancel(t *testing.T) {
	run := func(inline bool) ([]string, string) {
		llm := enginetest.NewLLM(
			enginetest.Reply{Emit: []omni.Message{omni.ToolCallMsg("A", "echo", `{}`), omni.ToolCallMsg("B", "echo", `{}`), omni.ToolCallMsg("C", "echo", `{}`), enginetest.Usage(3)}},
			enginetest.Reply{Emit: enginetest.TextReply(5, "done")},
		)
		tools := enginetest.Tools{"echo": func(ctx context.Context, c omni.Message, emit func(omni.Message)) error {
			emit(omni.ToolOutput(c.Payload.ToolCallID, "ok", omni.StatusCompleted))
			return nil
		}}
		var d diags
		s, err := engine.New(engine.Config{Meta: enginetest.Meta("a"), LLM: llm, Environment: tools, Clock: enginetest.NewClock(t0), OnDiagnostic: d.add})
		if err != nil {
			t.Fatal(err)
		}
		approve := func(ctx context.Context, tc omni.Message) (engine.Decision, error) {
			switch tc.Payload.ToolCallID {
			case "B":
				panic("approver exploded")
			case "C":
				return omni.DecisionForbidden, nil
			}
			return omni.DecisionAllow, nil
		}
		var out []string
		for _, m := range collect(t, s, engine.RunOptions{Approve: approve, ApproveHonorsCancel: inline}, omni.UserText("go")) {
			m.Timestamp = ""
			out = append(out, string(m.AppendJSON(nil)))
		}
		return out, d.kinds()
	}
	// The allowed tool runs concurrently: where its output lands varies.
	withoutA := func(ms []string) []string {
		out := slices.DeleteFunc(slices.Clone(ms), func(m string) bool {
			return strings.Contains(m, `"tool_call_output"`) && strings.Contains(m, `"tool_call_id":"A"`)
		})
		if len(out) != len(ms)-1 {
			t.Fatalf("want one output of the allowed call in %q", ms)
		}
		return out
	}
	viaGoroutine, dg := run(false)
	inline, di := run(true)
	if !slices.Equal(withoutA(viaGoroutine), withoutA(inline)) {
		t.Fatalf("streams differ:\ngoroutine %q\ninline    %q", viaGoroutine, inline)
	}
	if di != dg || !strings.Contains(di, "panic") {
		t.Fatalf("diagnostics: goroutine %q, inline %q", dg, di)
	}
	if !strings.Contains(strings.Join(inline, "\n"), `"tool_call_id":"B"`) {
		t.Fatal("no answer for the call whose approver panicked")
	}

	// An abort while the approver waits for its ctx.
	asked := make(chan struct{})
	llm := enginetest.NewLLM(enginetest.Reply{Emit: []omni.Message{omni.ToolCallMsg("A", "echo", `{}`), enginetest.Usage(3)}})
	s, err := engine.New(engine.Config{Meta: enginetest.Meta("b"), LLM: llm, Environment: enginetest.Tools{}, Clock: enginetest.NewClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	approve := func(ctx context.Context, tc omni.Message) (engine.Decision, error) {
		close(asked)
		<-ctx.Done()
		return "", ctx.Err()
	}
	rn, err := s.Start(ctx, []omni.Message{omni.UserText("go")}, engine.RunOptions{Approve: approve, ApproveHonorsCancel: true})
	if err != nil {
		t.Fatal(err)
	}
	go func() { <-asked; cancel() }()
	var last omni.Message
	for m := range rn.All() {
		last = m
	}
	if !last.IsEvent(omni.Abort) {
		t.Fatalf("last message %s, want abort", last.AppendJSON(nil))
	}
}
