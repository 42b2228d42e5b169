package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/enginetest"
	"github.com/floehq/floe/engine/omni"
)

// A message the engine stamps carries the time it entered the engine, not
// the time a slow consumer reads it: the fragments an LLM and a tool emit
// while the consumer holds the stream keep their own times, and the
// stream's timestamps never go back.
func TestStampsAreTimesOfEntry(t *testing.T) {
	clk := enginetest.NewClock(t0)
	tick := func() { clk.Sleep(context.Background(), time.Second) }
	// The gates make every clock change happen at one point of the run:
	// the LLM emits while the consumer holds the stream at its first
	// fragment; the tool starts once the request has ended, and emits
	// while the consumer holds the stream at the tool's first fragment.
	llmDone, toolGo, toolDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
	turn := 0
	llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		turn++
		if turn > 1 {
			emit(omni.AssistantText("done", omni.StatusCompleted))
			return engine.Outcome{Status: omni.StatusCompleted}
		}
		emit(omni.Partial(omni.PartialText, omni.EventStart, "", "", "", omni.StatusCompleted)) // t0
		tick()
		emit(omni.Partial(omni.PartialText, omni.EventDelta, "a", "", "", omni.StatusCompleted)) // t0+1s
		tick()
		emit(omni.Partial(omni.PartialText, omni.EventStop, "", "", "", omni.StatusCompleted)) // t0+2s
		emit(omni.AssistantText("a", omni.StatusCompleted))
		emit(omni.ToolCallMsg("c1", "work", "{}"))
		close(llmDone)
		return engine.Outcome{Status: omni.StatusCompleted}
	})
	env := engine.EnvironmentFunc(func(ctx context.Context, req engine.ToolRequest, emit func(omni.Message)) error {
		<-toolGo
		tick()
		emit(omni.Partial(omni.PartialToolCallOutput, omni.EventStart, "", "c1", "", omni.StatusCompleted)) // t0+3s
		tick()
		emit(omni.Partial(omni.PartialToolCallOutput, omni.EventDelta, "x", "c1", "", omni.StatusCompleted)) // t0+4s
		tick()
		emit(omni.Partial(omni.PartialToolCallOutput, omni.EventStop, "", "c1", "", omni.StatusCompleted)) // t0+5s
		emit(omni.ToolOutput("c1", "x", omni.StatusCompleted))
		close(toolDone)
		return nil
	})
	allow := func(context.Context, omni.Message) (engine.Decision, error) { return engine.DecisionAllow, nil }
	s, err := engine.New(engine.Config{Meta: enginetest.Meta("stamps"), LLM: llm, Environment: env, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	seq, err := s.Run(context.Background(), []omni.Message{omni.UserText("go")}, engine.RunOptions{Approve: allow})
	if err != nil {
		t.Fatal(err)
	}
	at := func(sec int) string { return omni.FormatTimestamp(t0.Add(time.Duration(sec) * time.Second)) }
	want := map[string]string{ // a fragment's type and event → its time of entry
		"partial_text/start": at(0), "partial_text/delta": at(1), "partial_text/stop": at(2),
		"partial_tool_call_output/start": at(3), "partial_tool_call_output/delta": at(4), "partial_tool_call_output/stop": at(5),
	}
	last := ""
	for m := range seq {
		if m.Timestamp < last { // one format, so the strings order as the times
			t.Errorf("%s %s stamped %s after a message stamped %s", m.Payload.Type, m.Payload.EventType, m.Timestamp, last)
		}
		last = m.Timestamp
		k := m.Payload.Type + "/" + m.Payload.EventType
		if w, ok := want[k]; ok {
			if m.Timestamp != w {
				t.Errorf("%s stamped %s, want %s, the time it was emitted", k, m.Timestamp, w)
			}
			delete(want, k)
		}
		switch {
		case k == "partial_text/start": // hold the stream while the LLM emits the rest, then read it late
			<-llmDone
		case m.IsEvent(omni.RequestEnd) && turn == 1:
			close(toolGo)
		case k == "partial_tool_call_output/start":
			<-toolDone
		}
	}
	if len(want) > 0 {
		t.Fatalf("fragments missing from the stream: %v", want)
	}
}
