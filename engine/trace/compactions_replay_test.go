package trace_test

import (
	"context"
	"testing"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/enginetest"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

// TestReplayOfCompactions: a Trace the engine wrote through compactions
// (two mid-task ones and one at the task's end in one run, mid-task and
// boundary ones that failed, with and without a committed attempt) replays
// from its last file to the state the engine was left in: carry-over
// (repairs included), pending summary, counters and tokens, a closed
// context.
func TestReplayOfCompactions(t *testing.T) {
	summary := func(s string, total int64) enginetest.Reply {
		return enginetest.Reply{Emit: []omni.Message{omni.AssistantText("[summary]"+s+"[/summary]", omni.StatusCompleted), enginetest.Usage(total)}}
	}
	callA := func(id string, total int64) enginetest.Reply {
		return enginetest.Reply{Emit: []omni.Message{omni.ToolCallMsg(id, "echo", `{}`), enginetest.Usage(total)}}
	}
	text := func(s string, total int64) enginetest.Reply {
		return enginetest.Reply{Emit: []omni.Message{omni.AssistantText(s, omni.StatusCompleted), enginetest.Usage(total)}}
	}
	auth := enginetest.Reply{Outcome: engine.Outcome{Status: omni.StatusAuth, ErrorMessage: "no key"}}
	fail := enginetest.Reply{Outcome: engine.Outcome{Status: omni.StatusFailed, ErrorMessage: "boom"}}
	cases := []struct {
		name     string
		contexts [][]enginetest.Reply
		maxRec   int
		files    int
	}{
		{"mid-task twice then boundary", [][]enginetest.Reply{
			{callA("A", 10), summary("s1", 11)},
			{callA("B", 12), summary("s2", 13)},
			{text("done", 14), summary("s3", 15)},
			{},
		}, 0, 3},
		{"mid-task auth", [][]enginetest.Reply{{callA("A", 10), auth}}, 0, 1},
		{"mid-task unusable then failed", [][]enginetest.Reply{{callA("A", 10), callA("X", 11), fail}}, 1, 1},
		{"boundary unusable then failed", [][]enginetest.Reply{{text("hi", 10), callA("X", 11), fail}}, 1, 1},
		{"mid-task compacted then unusable, failed", [][]enginetest.Reply{
			{callA("A", 10), summary("s1", 11)},
			{callA("B", 12), callA("X", 11), fail},
		}, 1, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			next := 0
			mk := func() engine.LLM {
				l := enginetest.NewLLM(c.contexts[next]...)
				next++
				return l
			}
			sink := &enginetest.Sink{}
			s, err := engine.New(engine.Config{
				Meta: enginetest.Meta("x"), LLM: mk(), Trace: sink, Clock: enginetest.NewClock(time.Unix(0, 0)),
				Compaction:              &engine.Compaction{Mode: omni.ModeSummarize, Prompt: "Summarize.", MaxSessionTurns: 1},
				CompactionMaxReconnects: c.maxRec,
				NewLLM:                  func(omni.TokenCounts) engine.LLM { return mk() },
				Environment: enginetest.Tools{"echo": func(ctx context.Context, m omni.Message, emit func(omni.Message)) error {
					emit(omni.ToolOutput(m.Payload.ToolCallID, "echoed", omni.StatusCompleted))
					return nil
				}},
			})
			if err != nil {
				t.Fatal(err)
			}
			r, err := s.Start(context.Background(), []omni.Message{omni.UserText("go")}, engine.RunOptions{Approve: func(context.Context, omni.Message) (engine.Decision, error) { return omni.DecisionAllow, nil }})
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for m := range r.All() {
				kinds = append(kinds, m.Payload.Type)
			}
			files := sink.Files()
			got, want := trace.Replay(files[len(files)-1], time.Unix(0, 0)).Snapshot, s.Snapshot()
			sameJSON(t, "carry_over", messagesJSON(got.CarryOver), mustJSON(t, messagesJSON(want.CarryOver)))
			var gs, ws any
			if got.PendingSummary != nil {
				gs = messageJSON(*got.PendingSummary)
			}
			if want.PendingSummary != nil {
				ws = messageJSON(*want.PendingSummary)
			}
			sameJSON(t, "pending_summary", gs, mustJSON(t, ws))
			if got.SessionTurns != want.SessionTurns || got.LastRequestTotal != want.LastRequestTotal || got.SessionTokens != want.SessionTokens ||
				got.ContextClosed != want.ContextClosed || (got.Compacted || len(files) > 1) != want.Compacted {
				t.Errorf("replayed: turns %d last %d tokens %+v closed %v compacted %v; the engine had %d %d %+v %v %v (stream %v)",
					got.SessionTurns, got.LastRequestTotal, got.SessionTokens, got.ContextClosed, got.Compacted,
					want.SessionTurns, want.LastRequestTotal, want.SessionTokens, want.ContextClosed, want.Compacted, kinds)
			}
			if len(files) != c.files {
				t.Errorf("%d Trace files, want %d", len(files), c.files)
			}
		})
	}
}
