//go:build !js || floenode

package trace_test

import (
	"context"
	"testing"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

// A crash during the first write of the file a compaction rotated to
// leaves that file without a whole record (empty, or one torn line):
// the session resumes from the file before it, closed by the compaction,
// and its next write rotates into the cut file, healing it. It was not
// resumable ("no session_meta"): the crash lost the whole session.
func TestResumeAfterACrashDuringTheRotation(t *testing.T) {
	ctx := context.Background()
	closed := jsonl(meta(), user("q"), begin(), asst("[summary]S1[/summary]"), usage(50, 50), end("completed"),
		compBegin(omni.ModeSummarize), user("Summarize."), begin(), asst("[summary]S2[/summary]"), usage(60, 60), end("completed"),
		compEnd(omni.ModeSummarize, omni.StatusCompleted))
	header := jsonl(meta())
	for name, cut := range map[string]string{"empty": "", "torn": header[:len(header)/2]} {
		for _, kind := range storeKinds {
			t.Run(name+"/"+kind.name, func(t *testing.T) {
				store := kind.new(t, "s", [][]byte{[]byte(closed), []byte(cut)})
				r, err := trace.Resume(ctx, store, "s", fixedNow)
				if err != nil {
					t.Fatal(err)
				}
				s := r.Snapshot
				if r.Index != 1 || !s.ContextClosed || s.PendingSummary == nil || s.PendingSummary.Payload.Text != "[context_summary]\nS2\n[/context_summary]" || len(r.Writes) != 0 {
					t.Fatalf("resumed file %d: closed %v, summary %v, writes %d", r.Index, s.ContextClosed, s.PendingSummary, len(r.Writes))
				}
				if err := r.Writer.Rotate(); err != nil {
					t.Fatal(err)
				}
				w, err := r.Writer.WriteRecord(ctx, stamp(r.Meta))
				if err != nil {
					t.Fatal(err)
				}
				if w.Index != 2 || w.HealNewline != (cut != "") {
					t.Fatalf("the rotation's write: %+v", w)
				}
				again, err := trace.Resume(ctx, store, "s", fixedNow)
				if err != nil || again.Index != 2 || again.Snapshot.ContextClosed {
					t.Fatalf("resumed after the rotation's write: %v, %+v", err, again)
				}
			})
		}
	}
}
