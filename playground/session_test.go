package playground

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

// lastUsage returns the last token_usage of msgs: the request's and the
// session's counts.
func lastUsage(t *testing.T, msgs []omni.Message) (req, session omni.TokenCounts) {
	t.Helper()
	for _, m := range msgs {
		if m.Payload.Type == omni.TokenUsage {
			req, session = *m.Payload.Request(), *m.Payload.Session()
		}
	}
	if session.Total == 0 {
		t.Fatal("no token_usage in the run")
	}
	return req, session
}

// compactNow runs a manual compaction to its end.
func compactNow(t *testing.T, r *Runner) {
	t.Helper()
	ended := make(chan error, 1)
	var mu sync.Mutex
	status := ""
	if err := r.StartCompact(func(m omni.Message) {
		if m.Payload.Type == omni.CompactionEnd {
			mu.Lock()
			status = m.Payload.Status()
			mu.Unlock()
		}
	}, func(err error) { ended <- err }); err != nil {
		t.Fatal(err)
	}
	if err := <-ended; err != nil {
		t.Fatal(err)
	}
	if status != omni.StatusCompleted {
		t.Fatalf("compaction ended %q", status)
	}
}

func TestScriptedTokensContinueAfterCompaction(t *testing.T) {
	sess, _, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := NewRunner(sess)
	allow := func(omni.Message) string { return omni.DecisionAllow }
	_, before := lastUsage(t, collect(t, r, "echo: before the compaction", allow))
	compactNow(t, r)
	if got := sess.Snapshot().SessionTokens; got.Output <= before.Output {
		t.Fatalf("the compaction's tokens are not counted: %+v after %+v", got, before)
	}
	req, after := lastUsage(t, collect(t, r, "echo: after the compaction", allow))
	if after.Output < before.Output+req.Output || after.Total < before.Total+req.Total {
		t.Errorf("session tokens after the compaction = %+v; want at least %+v plus this request's %+v", after, before, req)
	}
}

func TestScriptedTokensContinueAfterResume(t *testing.T) {
	ctx := context.Background()
	store := &trace.MemStore{}
	meta := Meta(time.Now())
	id := meta.Payload.SessionID()
	sess, _, err := Open(Options{Meta: &meta, Trace: trace.NewWriter(store, id, 1)})
	if err != nil {
		t.Fatal(err)
	}
	allow := func(omni.Message) string { return omni.DecisionAllow }
	_, before := lastUsage(t, collect(t, NewRunner(sess), "echo: before the reload", allow))

	res, err := trace.Resume(ctx, store, id, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if res.Snapshot.SessionTokens != before {
		t.Fatalf("stored session tokens %+v, want %+v", res.Snapshot.SessionTokens, before)
	}
	resumed, _, err := Open(Options{Meta: &res.Meta, Resume: &res.Snapshot, Trace: res.Writer})
	if err != nil {
		t.Fatal(err)
	}
	req, after := lastUsage(t, collect(t, NewRunner(resumed), "echo: after the reload", allow))
	if want := before.Add(req); after != want {
		t.Errorf("session tokens after the resume = %+v, want %+v (the stored %+v plus this request's)", after, want, before)
	}
}
