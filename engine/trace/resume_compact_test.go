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

// After resuming a Trace that ends on a completed compaction, and after
// resuming the fresh context a compaction started before it had a turn,
// Compactability is just_compacted, as after the live compaction.
func TestResumeAfterCompactionIsJustCompacted(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for _, mode := range []string{omni.ModeSummarize, omni.ModeDiscard} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			store := &trace.MemStore{}
			id := "rc-" + mode
			cfg := func(meta omni.Message, llm engine.LLM) engine.Config {
				return engine.Config{
					Meta: meta, LLM: llm, Clock: enginetest.NewClock(at),
					Compaction: &engine.Compaction{Mode: mode, Prompt: "Summarize."},
					NewLLM:     func(omni.TokenCounts) engine.LLM { return enginetest.NewLLM() },
				}
			}
			c := cfg(enginetest.Meta(id), enginetest.NewLLM(
				enginetest.Reply{Emit: enginetest.TextReply(5, "done")},
				enginetest.Reply{Emit: []omni.Message{omni.AssistantText("[summary]short[/summary]", omni.StatusCompleted), enginetest.Usage(6)}},
			))
			c.Trace = trace.NewWriter(store, id, 1)
			s, err := engine.New(c)
			if err != nil {
				t.Fatal(err)
			}
			seq, _ := s.Run(ctx, []omni.Message{omni.UserText("go")}, engine.RunOptions{})
			for range seq {
			}
			r, _ := s.Compact(ctx)
			for range r.All() {
			}
			if got := s.Compactability(); got != engine.CompactJustCompacted {
				t.Fatalf("live: %s", got)
			}
			resume := func() *engine.Session {
				t.Helper()
				res, err := trace.Resume(ctx, store, id, func() time.Time { return at })
				if err != nil {
					t.Fatal(err)
				}
				c := cfg(res.Meta, enginetest.NewLLM(enginetest.Reply{Outcome: engine.Outcome{Status: engine.StatusAborted}}))
				c.Trace, c.Resume = res.Writer, &res.Snapshot
				s, err := engine.New(c)
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			s2 := resume()
			if got := s2.Compactability(); got != engine.CompactJustCompacted {
				t.Fatalf("resumed after the compaction: %s", got)
			}
			// A run of the new context that completes no turn writes its
			// first records to file 2; resuming that is still just_compacted.
			seq, _ = s2.Run(ctx, []omni.Message{omni.UserText("stop")}, engine.RunOptions{})
			for range seq {
			}
			if files, _ := store.Files(ctx, id); len(files) != 2 {
				t.Fatalf("%d files", len(files))
			}
			if got := resume().Compactability(); got != engine.CompactJustCompacted {
				t.Fatalf("resumed in the fresh context: %s", got)
			}
		})
	}
}
