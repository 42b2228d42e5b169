package api_test

import (
	"context"
	"sync"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/transport/host"
	"github.com/floehq/floe/transport/server"
)

// counting is a model context whose session totals start at session and
// grow by ten tokens a request, as a provider adapter's do.
func counting(session omni.TokenCounts) engine.LLM {
	return engine.LLMFunc(func(_ context.Context, _ engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		req := omni.TokenCounts{Output: 2, Total: 10}
		session.Output += req.Output
		session.Total += req.Total
		emit(omni.AssistantText("ok", omni.StatusCompleted))
		emit(omni.TokenUsageMsg(session, req))
		return engine.Outcome{Status: omni.StatusCompleted}
	})
}

// A session resumed by another server (a restart) gets a model context
// that goes on from the session totals its Trace holds (ENGINE.md E-17.5):
// from a fresh context they restarted at zero, and the next resume read
// those.
func TestResumedModelGoesOnFromTheSessionTotals(t *testing.T) {
	store := &trace.MemStore{}
	var mu sync.Mutex
	var resumed []omni.TokenCounts
	wire := func(omni.Message) (host.Wiring, error) {
		w := server.Scripted(0)
		w.LLM = counting(omni.TokenCounts{})
		w.Resume = func(session omni.TokenCounts) engine.LLM {
			mu.Lock()
			resumed = append(resumed, session)
			mu.Unlock()
			return counting(session)
		}
		return w, nil
	}
	a := newEnv(t, server.Config{Store: store, Mode: "deny-all", Wire: wire})
	id := a.create("")
	a.runOnce(id, "first")
	b := newEnv(t, server.Config{Store: store, Mode: "deny-all", Wire: wire})
	b.runOnce(id, "second")
	c := newEnv(t, server.Config{Store: store, Mode: "deny-all", Wire: wire})
	c.runOnce(id, "third")
	mu.Lock()
	defer mu.Unlock()
	want := []omni.TokenCounts{{Output: 2, Total: 10}, {Output: 4, Total: 20}}
	if len(resumed) != len(want) || resumed[0] != want[0] || resumed[1] != want[1] {
		t.Fatalf("the resumed contexts started from %+v, want %+v", resumed, want)
	}
}
