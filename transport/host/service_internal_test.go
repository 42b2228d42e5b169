package host

import (
	"context"
	"errors"
	"fmt"
	"io"
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

// serviceRegistry is a registry of playground sessions (the scripted
// model, no delay, discard compaction) over store, keeping keepWarm
// engines warm.
func serviceRegistry(t *testing.T, store trace.Store, keepWarm int) (*Registry, *transport.Hub) {
	t.Helper()
	hub := transport.NewHub(transport.Options{})
	r, err := NewRegistry(Config{
		Store: store, Hub: hub, Mode: ModeAllowAll, KeepWarm: keepWarm,
		NewMeta: func(id string, now time.Time) omni.Message {
			m := playground.Meta(now)
			if id != "" {
				m.Payload.Edit().SessionID = id
			}
			return m
		},
		Wire: func(omni.Message) (Wiring, error) {
			ws := playground.NewWorkspace(nil)
			return Wiring{
				LLM: playground.NewModel(ws, nil), Environment: ws, Tools: ws.Tools(), MaxTurns: 8,
				NewLLM:     func(omni.TokenCounts) engine.LLM { return playground.NewModel(ws, nil) },
				Compaction: &engine.Compaction{Mode: omni.ModeDiscard},
			}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hub.Close)
	return r, hub
}

// use drives session id from one goroutine (g of several) for rounds.
func use(t *testing.T, r *Registry, id string, g, rounds int) {
	ctx := context.Background()
	for n := range rounds {
		h, err := r.Get(ctx, id)
		if err != nil {
			t.Errorf("Get %s: %v", id, err)
			return
		}
		switch (g + n) % 6 {
		case 0:
			h.Start(Task{Input: []omni.Message{omni.UserText("Count the lines of main.go")}, QueueIfBusy: n%2 == 0})
		case 1:
			h.Steer("and the tests", nil)
			h.Abort()
		case 2:
			h.Compact()
		case 3:
			sub, _ := h.Subscribe("", false)
			h.Messages(ctx)
			sub.Close()
		case 4:
			h.SetMode(ModeDenyAll)
			h.SetMode(ModeAllowAll)
			r.History(ctx, id)
			h.RetryNow()
		case 5:
			h.Start(Task{Input: []omni.Message{omni.UserText("Read main.go")}})
			r.List(ctx)
		}
		if err := h.Wait(ctx); err != nil {
			t.Error(err)
		}
	}
}

// hookedStore calls onDelete before a Delete and onLock at a Lock (it
// holds nothing: a MemStore has no lock), each once armed.
type hookedStore struct {
	trace.Store
	mu               sync.Mutex
	onDelete, onLock func()
}

func (s *hookedStore) take(f *func()) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := *f
	*f = nil
	return g
}

func (s *hookedStore) Delete(ctx context.Context, id string) error {
	if f := s.take(&s.onDelete); f != nil {
		f()
	}
	return s.Store.Delete(ctx, id)
}

func (s *hookedStore) Lock(string) (func(), error) {
	if f := s.take(&s.onLock); f != nil {
		f()
	}
	return func() {}, nil
}

// A session opened (Get) while Delete removes it is not kept as a host
// of a session that no longer is: Delete let the host go before the
// Trace, a Get in between found the Trace and made a new host, and every
// later Get returned that one (its messages an empty history, where the
// session was gone).
func TestGetDuringDelete(t *testing.T) {
	store := &hookedStore{Store: &trace.MemStore{}}
	r, _ := serviceRegistry(t, store, 2)
	ctx := context.Background()
	h, err := r.Create(ctx, "doomed", "")
	if err != nil {
		t.Fatal(err)
	}
	store.onDelete = func() {
		if g, err := r.Get(ctx, "doomed"); err == nil && g != h {
			t.Log("Get during Delete made a new host")
		}
	}
	if err := r.Delete(ctx, "doomed"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Get(ctx, "doomed"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after Delete: %v, want ErrNotFound", err)
	}
}

// A stream that found its session before a Delete and subscribes after
// it gets no channel: it ends at once, as one open at the delete does.
// Hub.Channel made a new channel for the deleted session, and the stream
// waited on it for good (a client connecting as the session was deleted).
func TestSubscribeAfterDelete(t *testing.T) {
	r, hub := serviceRegistry(t, &trace.MemStore{}, 2)
	ctx := context.Background()
	h, err := r.Create(ctx, "doomed", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Delete(ctx, "doomed"); err != nil {
		t.Fatal(err)
	}
	sub, _ := h.Subscribe("", false)
	if _, ok := hub.Lookup("doomed"); ok {
		t.Error("the deleted session has a channel again")
	}
	served := make(chan error, 1)
	go func() { served <- sub.Serve(ctx, io.Discard, func() error { return nil }) }()
	select {
	case err := <-served:
		if !errors.Is(err, transport.ErrClosed) {
			t.Errorf("Serve: %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		sub.Close()
		t.Fatal("the stream of a deleted session still waits")
	}
}

// A compaction asked for while Delete removes the session is refused as
// a run is: it started, on a session whose Trace went away under it.
func TestCompactDuringDelete(t *testing.T) {
	store := &hookedStore{Store: &trace.MemStore{}}
	r, _ := serviceRegistry(t, store, 2)
	ctx := context.Background()
	h, err := r.Create(ctx, "doomed", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Start(Task{Input: []omni.Message{omni.UserText("Count the lines of main.go")}}); err != nil {
		t.Fatal(err)
	}
	if err := h.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	var compact error
	store.onLock = func() { compact = h.Compact() } // Delete takes the session's lock
	if err := r.Delete(ctx, "doomed"); err != nil {
		t.Fatal(err)
	}
	h.Wait(ctx)
	if !errors.Is(compact, ErrNotFound) {
		t.Fatalf("Compact during Delete: %v, want ErrNotFound", compact)
	}
	if _, err := store.Files(ctx, "doomed"); !errors.Is(err, trace.ErrNotFound) {
		t.Fatalf("the deleted session's Trace: %v, want ErrNotFound", err)
	}
}

// stuckStore's Append for session stuck blocks, once armed, until gate
// is closed; blocked is closed when one does.
type stuckStore struct {
	trace.Store
	armed   sync.Once
	on      chan struct{} // closed to arm it
	blocked chan struct{}
	gate    chan struct{}
}

func (s *stuckStore) Append(ctx context.Context, id string, index int, data []byte) (trace.AppendResult, error) {
	select {
	case <-s.on:
		if id == "stuck" {
			s.armed.Do(func() { close(s.blocked) })
			<-s.gate
		}
	default:
	}
	return s.Store.Append(ctx, id, index, data)
}

// The session list, and the other sessions, are served while one
// session's Trace write hangs (a network file system that stopped
// answering): List waited for that session's state while it held the
// registry, and every request to every session then waited behind it.
func TestListWhileAWriteHangs(t *testing.T) {
	store := &stuckStore{Store: &trace.MemStore{}, on: make(chan struct{}), blocked: make(chan struct{}), gate: make(chan struct{})}
	r, _ := serviceRegistry(t, store, 2)
	ctx := context.Background()
	stuck, err := r.Create(ctx, "stuck", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Create(ctx, "other", ""); err != nil {
		t.Fatal(err)
	}
	close(store.on)
	if _, err := stuck.Start(Task{Input: []omni.Message{omni.UserText("Count the lines of main.go")}}); err != nil {
		t.Fatal(err)
	}
	<-store.blocked
	done := make(chan error, 1)
	go func() {
		infos, err := r.List(ctx)
		for _, in := range infos {
			if in.ID == "stuck" && in.State != "running" {
				err = fmt.Errorf("the hanging session is listed %s, want running", in.State)
			}
		}
		if err == nil {
			_, err = r.Get(ctx, "other")
		}
		if err == nil {
			_, err = r.Create(ctx, "new", "")
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(5 * time.Second): // a bound on a failure, not an ordering
		t.Error("List, Get and Create waited for a session whose Trace write hangs")
		defer func() { <-done }()
	}
	close(store.gate)
	stuck.Wait(ctx)
}

// A Delete whose context ends while it waits for the session's run to end
// leaves the session as it was, not deleted and usable: it stayed marked
// deleted, and every later run or compaction of it was refused as not
// found while its Trace, its history and its stream were there.
func TestDeleteCancelledLeavesTheSessionUsable(t *testing.T) {
	r, _ := serviceRegistry(t, &trace.MemStore{}, 1)
	ctx := context.Background()
	warm, err := r.Create(ctx, "warm", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := warm.Start(Task{Input: []omni.Message{omni.UserText("Read main.go")}}); err != nil {
		t.Fatal(err)
	}
	warm.Wait(ctx)
	h, err := r.Create(ctx, "kept", "")
	if err != nil {
		t.Fatal(err)
	}
	idle := idleSeen(t, r, "kept")
	// The run's end waits (its done unclosed) for warm, let go past
	// KeepWarm 1, whose lock the test holds.
	warm.mu.Lock()
	if _, err := h.Start(Task{Input: []omni.Message{omni.UserText("Count the lines of main.go")}}); err != nil {
		t.Fatal(err)
	}
	within(t, idle, "the run's end")
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	err = r.Delete(cctx, "kept")
	warm.mu.Unlock()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Delete cancelled while the run ends: %v, want context.Canceled", err)
	}
	if err := h.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Start(Task{Input: []omni.Message{omni.UserText("Read main.go")}}); err != nil {
		t.Fatalf("a run after a Delete that did not happen: %v", err)
	}
	h.Wait(ctx)
	if err := r.Delete(ctx, "kept"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
}

// idleSeen is closed when the user channel says session id went from
// running to idle.
func idleSeen(t *testing.T, r *Registry, id string) chan struct{} {
	t.Helper()
	sub, _ := r.UserChannel().Subscribe("", false, nil)
	pr, pw := io.Pipe()
	go sub.Serve(context.Background(), pw, nil)
	seen := make(chan struct{})
	go func() {
		defer pr.Close() // a write still under way fails rather than blocks Serve
		defer sub.Close()
		rd := transport.NewReader(pr)
		running := false
		for {
			ev, err := rd.Next()
			if err != nil {
				return // the hub closed: the test's bound tells
			}
			if !strings.Contains(ev.Data, `"sessionId":"`+id+`"`) {
				continue
			}
			if strings.Contains(ev.Data, `"state":"running"`) {
				running = true
			} else if running && strings.Contains(ev.Data, `"state":"idle"`) {
				close(seen)
				return
			}
		}
	}()
	return seen
}

// Deletes of one session go one at a time, and one that comes second finds
// the session gone (not found): it went on beside the first, and with a
// session of the same id created in between it removed the new one's
// Trace and host.
func TestDeletesOfOneSessionOneAtATime(t *testing.T) {
	store := &hookedStore{Store: &trace.MemStore{}}
	r, _ := serviceRegistry(t, store, 2)
	ctx := context.Background()
	if _, err := r.Create(ctx, "doomed", ""); err != nil {
		t.Fatal(err)
	}
	actx := newAskedCtx()
	second := make(chan error, 1)
	store.onDelete = func() {
		go func() { second <- r.Delete(actx, "doomed") }()
		select {
		case <-actx.asked:
		case err := <-second:
			second <- err
			t.Error("a second Delete went on while the first removed the session")
		case <-time.After(bound): // a bound on a failure, not an ordering
			t.Error("a second Delete did not wait for the first")
		}
	}
	if err := r.Delete(ctx, "doomed"); err != nil {
		t.Fatal(err)
	}
	h2, err := r.Create(ctx, "doomed", "")
	if err != nil {
		t.Fatalf("Create after Delete: %v", err)
	}
	if err := within(t, second, "the second Delete"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the second Delete: %v, want ErrNotFound", err)
	}
	if g, err := r.Get(ctx, "doomed"); err != nil || g != h2 {
		t.Errorf("the session made again after its Delete: %v (its host: %v)", err, g == h2)
	}
	if _, err := store.Files(ctx, "doomed"); err != nil {
		t.Errorf("the Trace of the session made again: %v", err)
	}
}

// After Shutdown no run or compaction starts: a task posted while the
// server goes down is refused, 503, rather than started under it.
func TestShutdownRefusesNewRuns(t *testing.T) {
	r, _ := serviceRegistry(t, &trace.MemStore{}, 0)
	ctx := context.Background()
	h, err := r.Create(ctx, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Start(Task{Input: []omni.Message{omni.UserText("Read main.go")}}); !errors.Is(err, ErrShuttingDown) {
		t.Fatalf("Start after Shutdown: %v, want ErrShuttingDown", err)
	}
	if err := h.Compact(); !errors.Is(err, ErrShuttingDown) {
		t.Fatalf("Compact after Shutdown: %v, want ErrShuttingDown", err)
	}
	if h.State() != transport.StateIdle {
		t.Fatalf("state %s", h.State())
	}
}

// appendHeld blocks the store's appends while hold is set (until it is
// closed), each appender saying so on entered.
type appendHeld struct {
	trace.Store
	mu      sync.Mutex
	hold    chan struct{}
	entered chan struct{}
}

func (s *appendHeld) Append(ctx context.Context, id string, index int, data []byte) (trace.AppendResult, error) {
	s.mu.Lock()
	hold := s.hold
	s.mu.Unlock()
	if hold != nil {
		select {
		case s.entered <- struct{}{}:
		default:
		}
		<-hold
	}
	return s.Store.Append(ctx, id, index, data)
}

// Shutdown does as its doc says: with a run that cannot end yet (its
// Trace write hangs) it returns ctx's error once ctx is done (it waited
// for the write, whose abort takes the session's lock, whatever ctx: a
// floe-server whose Trace directory stopped answering never exited on
// SIGTERM); once the run has ended, nil, and so again; the sessions
// still answer Get, History and Delete.
func TestShutdownWaitsForTheRunsOrCtx(t *testing.T) {
	store := &appendHeld{Store: &trace.MemStore{}, entered: make(chan struct{}, 1)}
	r, _ := serviceRegistry(t, store, 2)
	ctx := context.Background()
	h, err := r.Create(ctx, "s", "")
	if err != nil {
		t.Fatal(err)
	}
	hold := make(chan struct{})
	store.mu.Lock()
	store.hold = hold
	store.mu.Unlock()
	if _, err := h.Start(Task{Input: []omni.Message{omni.UserText("Read main.go")}}); err != nil {
		t.Fatal(err)
	}
	within(t, store.entered, "the run's first write")
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	shut := make(chan error, 1)
	go func() { shut <- r.Shutdown(cctx) }()
	if err := within(t, shut, "Shutdown's return once its ctx was done, a Trace write hanging"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Shutdown while the run cannot end: %v, want context.Canceled", err)
	}
	close(hold)
	if err := r.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown once the run can end: %v", err)
	}
	if err := r.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown again: %v", err)
	}
	history, err := r.History(ctx, "s")
	if err != nil || len(history) == 0 || history[len(history)-1].Payload.Type != omni.Abort {
		t.Fatalf("History after Shutdown: %d records, %v; want the run's abort last", len(history), err)
	}
	if _, err := r.Get(ctx, "s"); err != nil {
		t.Fatalf("Get after Shutdown: %v", err)
	}
	if err := r.Delete(ctx, "s"); err != nil {
		t.Fatalf("Delete after Shutdown: %v", err)
	}
}

// A task sent with queueIfBusy while the server goes down is refused,
// 503, as one sent to an idle session is: it was queued behind the run
// being aborted (202, queued), then dropped when that run ended, no run
// starting after Shutdown, and the last task_state still listed it.
func TestShutdownRefusesQueuedTasks(t *testing.T) {
	r, h, gate := gatedRun(t)
	ctx := context.Background()
	down, cancel := context.WithCancel(ctx)
	cancel() // Shutdown returns at once; the run goes on ending
	r.Shutdown(down)
	queued, err := h.Start(Task{Input: []omni.Message{omni.UserText("and then the tests")}, QueueIfBusy: true})
	close(gate)
	if !errors.Is(err, ErrShuttingDown) || queued {
		t.Fatalf("a task queued while the server goes down: queued %v, %v; want ErrShuttingDown", queued, err)
	}
	if err := h.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if h.State() != transport.StateIdle {
		t.Fatalf("state %s", h.State())
	}
}

// gatedRegistry is a registry whose model says so on asked at each
// request and answers once gate is closed, its abort aside (the engine
// waits its abort grace for it): a run is in flight until then.
func gatedRegistry(t *testing.T) (r *Registry, asked chan struct{}, gate chan struct{}) {
	t.Helper()
	asked, gate = make(chan struct{}, 1), make(chan struct{})
	hub := transport.NewHub(transport.Options{})
	t.Cleanup(hub.Close)
	r, err := NewRegistry(Config{
		Store: &trace.MemStore{}, Hub: hub, Mode: ModeAllowAll,
		NewMeta: func(string, time.Time) omni.Message { return playground.Meta(time.Now()) },
		Wire: func(omni.Message) (Wiring, error) {
			return Wiring{LLM: engine.LLMFunc(func(context.Context, engine.GenerateParams, func(omni.Message)) engine.Outcome {
				asked <- struct{}{}
				<-gate
				return engine.Outcome{Status: omni.StatusAborted}
			})}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return r, asked, gate
}

// A session whose model gives no way to compact (no NewLLM: a wiring of
// one's own) refuses a compaction, 409 compaction_not_configured, as the
// README's table says, and stays usable.
func TestCompactNotConfigured(t *testing.T) {
	r, _, _ := gatedRegistry(t)
	h, err := r.Create(context.Background(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	var e *Error
	if err := h.Compact(); !errors.As(err, &e) || e.Status != 409 || e.Code != "compaction_not_configured" {
		t.Fatalf("Compact: %v, want 409 compaction_not_configured", err)
	}
}

// gatedRun makes a session of a gatedRegistry and starts a task on it: it
// returns once the run's model was asked, the run waiting on gate.
func gatedRun(t *testing.T) (*Registry, *Host, chan struct{}) {
	t.Helper()
	r, asked, gate := gatedRegistry(t)
	h, err := r.Create(context.Background(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Start(Task{Input: []omni.Message{omni.UserText("Read main.go")}}); err != nil {
		t.Fatal(err)
	}
	within(t, asked, "the run's request")
	return r, h, gate
}

// A steer is blank, and refused, by the engine's measure (E-11.1, the
// white space JavaScript's trim removes): "\ufeff" was taken, 202, and
// the engine queued nothing; "\u0085", which the engine queues, was
// refused.
func TestSteerBlankAsTheEngineSaysIt(t *testing.T) {
	_, h, gate := gatedRun(t)
	ctx := context.Background()
	defer h.Wait(ctx)
	defer close(gate)
	for _, text := range []string{"\ufeff", " \u3000\u2028\ufeff"} {
		if err := h.Steer(text, nil); err == nil || !strings.Contains(err.Error(), "want a non-blank text") {
			t.Errorf("Steer(%q): %v, want it refused as blank", text, err)
		}
	}
	if err := h.Steer("\u0085", nil); err != nil {
		t.Errorf("Steer(%q), which the engine queues: %v", "\u0085", err)
	}
}
