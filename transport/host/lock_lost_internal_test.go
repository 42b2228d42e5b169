//go:build !js

package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/playground"
	"github.com/floehq/floe/transport"
)

// lostStore's Lock fails once when armed, as a FileStore's does after
// another process took the lock from this one (trace.ErrLockLost).
type lostStore struct {
	trace.Store
	mu   sync.Mutex
	lost bool
}

func (s *lostStore) Lock(string) (func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lost {
		s.lost = false
		return nil, fmt.Errorf("%w: %w", trace.ErrBusy, trace.ErrLockLost)
	}
	return func() {}, nil
}

// theirs is a turn another process wrote: a prompt of its own, answered.
const theirs = `{"timestamp":"2026-01-02T03:04:05.000Z","type":"model_msg","payload":{"type":"text","role":"user","text":"theirs","stop_reason":"completed"}}
{"timestamp":"2026-01-02T03:04:05.001Z","type":"event_msg","payload":{"type":"request_begin"}}
{"timestamp":"2026-01-02T03:04:05.002Z","type":"model_msg","payload":{"type":"text","role":"assistant","text":"ok","stop_reason":"completed"}}
{"timestamp":"2026-01-02T03:04:05.003Z","type":"event_msg","payload":{"type":"token_usage","session":{"cache_read":0,"cache_write":0,"output":5,"total":1000000},"request":{"cache_read":0,"cache_write":0,"output":5,"total":120}}}
{"timestamp":"2026-01-02T03:04:05.004Z","type":"event_msg","payload":{"type":"request_end","status":"completed"}}
`

// runTask runs "Read main.go" on h to its end and returns the session's
// turns then.
func runTask(t *testing.T, h *Host) int64 {
	t.Helper()
	if _, err := h.Start(Task{Input: []omni.Message{omni.UserText("Read main.go")}}); err != nil {
		t.Fatal(err)
	}
	if err := h.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sess.Snapshot().SessionTurns
}

// lostAfterATask makes session "s" and runs a task on it (its engine kept
// warm); then another process writes a turn of its own to the Trace and
// this one's lock is found lost. It returns the turns of one task.
func lostAfterATask(t *testing.T) (*Registry, *Host, int64) {
	t.Helper()
	store := &lostStore{Store: &trace.MemStore{}}
	r, _ := serviceRegistry(t, store, 2)
	h, err := r.Create(context.Background(), "s", "")
	if err != nil {
		t.Fatal(err)
	}
	turns := runTask(t, h)
	if _, err := store.Append(context.Background(), "s", 1, []byte(theirs)); err != nil {
		t.Fatal(err)
	}
	store.mu.Lock()
	store.lost = true
	store.mu.Unlock()
	return r, h, turns
}

// A session whose lock another process took while this one was stopped
// is refused once (session_busy), then resumed from its Trace: its warm
// engine, which knew nothing of what the other process wrote, ran the
// next task from its own state, beside the other's records.
func TestLockLostDropsTheWarmEngine(t *testing.T) {
	_, h, turns := lostAfterATask(t)
	if _, err := h.Start(Task{Input: []omni.Message{omni.UserText("Count the lines of main.go")}}); !errors.Is(err, ErrBusy) {
		t.Fatalf("Start after the lock was lost: %v, want session_busy", err)
	}
	if got, want := runTask(t, h), 2*turns+1; got != want {
		t.Fatalf("%d turns, want %d (the first task's, the other process's, the same task's again): the next task ran on the engine kept from before the lock was lost, which knew nothing of the other process's turn", got, want)
	}
}

// A Delete that finds the lock lost (said once) is refused, session_busy,
// and lets the warm engine go as a run would: the next run resumes from
// the Trace rather than running on beside the other process's records.
func TestLockLostFoundByDeleteDropsTheWarmEngine(t *testing.T) {
	r, h, turns := lostAfterATask(t)
	if err := r.Delete(context.Background(), "s"); !errors.Is(err, ErrBusy) || !errors.Is(err, trace.ErrLockLost) {
		t.Fatalf("Delete after the lock was lost: %v, want session_busy", err)
	}
	if got, want := runTask(t, h), 2*turns+1; got != want {
		t.Fatalf("%d turns, want %d (the first task's, the other process's, the same task's again): the run after the refused Delete ran on the engine kept from before the lock was lost", got, want)
	}
}

// A session_busy from the store's lock unwraps to the store's error, as
// Error.Unwrap says: errors.Is finds trace.ErrBusy (and host.ErrBusy, by
// code), and errors.As the *trace.Error naming the operation (it was
// stripped: Unwrap gave only what the *trace.Error wrapped).
func TestBusyUnwrapsToTheStoresError(t *testing.T) {
	root := t.TempDir()
	other := `{"pid":4242,"host":"elsewhere","token":"k2j4x0lq8mbz1"}` + "\n"
	if err := os.WriteFile(filepath.Join(root, ".s.lock"), []byte(other), 0o600); err != nil {
		t.Fatal(err)
	}
	r, _ := serviceRegistry(t, trace.NewFileStore(root, trace.FileStoreOptions{}), 2)
	_, err := r.Create(context.Background(), "s", "")
	var te *trace.Error
	if !errors.Is(err, ErrBusy) || !errors.Is(err, trace.ErrBusy) || !errors.As(err, &te) || te.Op != "lock" {
		t.Fatalf("Create of a session another process holds: %v, want session_busy unwrapping to the store's *trace.Error of lock, wrapping trace.ErrBusy", err)
	}
	if !strings.Contains(err.Error(), "pid 4242 on elsewhere") || strings.Contains(err.Error(), "trace: lock") {
		t.Fatalf("message %q, want the holder named, without the store's prefix", err)
	}
}

// A queued follow-up that cannot start when the run before it ends (the
// session's lock found lost meanwhile) is said on the session's stream, a
// task_failed naming it and why, then a task_state without it, and told
// to Config.OnDiagnostic: it was dropped without a word, the last
// task_state still listing it as queued.
func TestQueuedTaskThatCannotStartIsSaid(t *testing.T) {
	store := &lostStore{Store: &trace.MemStore{}}
	asked, gate := make(chan struct{}, 1), make(chan struct{})
	var mu sync.Mutex
	var diags []engine.Diagnostic
	hub := transport.NewHub(transport.Options{})
	t.Cleanup(hub.Close)
	r, err := NewRegistry(Config{
		Store: store, Hub: hub, Mode: ModeAllowAll,
		NewMeta: func(id string, now time.Time) omni.Message {
			m := playground.Meta(now)
			m.Payload.Edit().SessionID = id
			return m
		},
		Wire: func(omni.Message) (Wiring, error) {
			return Wiring{LLM: engine.LLMFunc(func(context.Context, engine.GenerateParams, func(omni.Message)) engine.Outcome {
				asked <- struct{}{}
				<-gate
				return engine.Outcome{Status: omni.StatusAborted}
			})}, nil
		},
		OnDiagnostic: func(d engine.Diagnostic) {
			mu.Lock()
			diags = append(diags, d)
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h, err := r.Create(ctx, "s", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Start(Task{Input: []omni.Message{omni.UserText("Read main.go")}}); err != nil {
		t.Fatal(err)
	}
	within(t, asked, "the run's request")
	if queued, err := h.Start(Task{Input: []omni.Message{omni.UserText("and then the tests")}, QueueIfBusy: true}); !queued || err != nil {
		t.Fatalf("the follow-up: queued %v, %v", queued, err)
	}
	store.mu.Lock()
	store.lost = true
	store.mu.Unlock()
	close(gate)
	if err := h.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if h.State() != transport.StateIdle {
		t.Fatalf("state %s, want idle", h.State())
	}

	// What the stream said, replayed from its start.
	sub, _ := h.Subscribe(h.channel().Epoch()+"-0", true)
	hub.Close() // Serve writes what was queued, then returns
	var out strings.Builder
	sub.Serve(ctx, &out, nil)
	rd := transport.NewReader(strings.NewReader(out.String()))
	var states []string
	for {
		ev, err := rd.Next()
		if err != nil {
			break
		}
		if ev.Name == transport.EventServer {
			states = append(states, ev.Data)
		}
	}
	const failed = `{"type":"task_failed","taskId":"task-1","error":{"code":"session_busy","message":"session \"s\" is busy: `
	i := slices.IndexFunc(states, func(s string) bool { return strings.HasPrefix(s, failed) })
	if i < 0 {
		t.Fatalf("no task_failed for the follow-up in the stream's server events: %q", states)
	}
	if i+1 >= len(states) || !strings.HasPrefix(states[i+1], `{"type":"task_state","state":"idle"}`) || strings.Contains(states[len(states)-1], "queued") {
		t.Errorf("after the task_failed: %q, want the task_state idle without the follow-up, last", states[i:])
	}
	mu.Lock()
	defer mu.Unlock()
	if len(diags) != 1 || diags[0].Kind != DiagTask || !strings.HasPrefix(diags[0].Err.Error(), `session "s": the queued task task-1 did not start: session_busy: session "s" is busy`) {
		t.Errorf("diagnostics %v, want one of kind task naming the session, the task and why", diags)
	}
}
