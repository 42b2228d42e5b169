//go:build !js || floenode

package trace_test

import (
	"context"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

// TestInteropRoundTrip: a Trace the reference wrote, continued by one run
// of Floe, resumes again to the context that run's model holds: the
// history it was handed, the run's request and its reply, with nothing
// left to carry over.
func TestInteropRoundTrip(t *testing.T) {
	dir := interopDir(t)
	for name, want := range loadResumes(t, dir) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store := storeKinds[0].new(t, want.SessionID, fixtureFiles(t, dir, want))
			r, err := trace.Resume(context.Background(), store, want.SessionID, fixedNow)
			if err != nil {
				t.Fatal(err)
			}
			llm := newRecordingLLM(r.Snapshot.SessionTokens)
			snap := r.Snapshot
			sess, err := engine.New(engine.Config{Meta: r.Meta, LLM: llm, Trace: r.Writer, MaxTurns: -1, Clock: fixedClock{resumeAt}, Resume: &snap})
			if err != nil {
				t.Fatal(err)
			}
			run, err := sess.Start(context.Background(), []omni.Message{userText("Continue.")}, engine.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, ok := run.Next(); ok; _, ok = run.Next() {
			}
			after := sess.Snapshot()

			again, err := trace.Resume(context.Background(), store, want.SessionID, fixedNow)
			if err != nil {
				t.Fatal(err)
			}
			llm.mu.Lock()
			context := append(append(llm.history, llm.requests[0]...), omni.AssistantText("Resumed.", omni.StatusCompleted))
			llm.mu.Unlock()
			s := again.Snapshot
			sameJSON(t, "history", messagesJSON(s.History), mustJSON(t, messagesJSON(context)))
			sameJSON(t, "carry_over", messagesJSON(s.CarryOver), mustJSON(t, []any{}))
			if s.PendingSummary != nil || s.ContextClosed || again.Dangling != nil || len(again.Writes) > 0 {
				t.Errorf("resumed again: summary %v, closed %v, dangling %v, writes %d", s.PendingSummary, s.ContextClosed, again.Dangling, len(again.Writes))
			}
			if s.SessionTurns != after.SessionTurns || s.SessionTokens != after.SessionTokens || s.LastRequestTotal != after.LastRequestTotal {
				t.Errorf("resumed again: turns %d tokens %+v last %d; the engine had %d %+v %d",
					s.SessionTurns, s.SessionTokens, s.LastRequestTotal, after.SessionTurns, after.SessionTokens, after.LastRequestTotal)
			}
		})
	}
}
