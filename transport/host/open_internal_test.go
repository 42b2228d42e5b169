package host

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/internal/leakcheck"
)

// bound is how long a test waits for what must come before it calls it a
// failure: a bound on a failure, not an ordering.
const bound = 5 * time.Second

// gatedStore's Files of session slow (set once the sessions are made)
// is told on reads, then waits until gate is closed (only the first call
// waits when once is set) and fails with fail when it is set.
type gatedStore struct {
	trace.Store
	slow  string
	once  bool
	reads chan struct{}
	gate  chan struct{}
	n     atomic.Int32
	mu    sync.Mutex
	fail  error
}

func newGatedStore(once bool) *gatedStore {
	return &gatedStore{Store: &trace.MemStore{}, once: once, reads: make(chan struct{}, 16), gate: make(chan struct{})}
}

func (s *gatedStore) Files(ctx context.Context, id string) ([]trace.FileInfo, error) {
	if id == s.slow {
		if n := s.n.Add(1); n == 1 || !s.once {
			s.reads <- struct{}{}
			<-s.gate
		}
		s.mu.Lock()
		err := s.fail
		s.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
	return s.Store.Files(ctx, id)
}

func (s *gatedStore) failWith(err error) {
	s.mu.Lock()
	s.fail = err
	s.mu.Unlock()
}

// askedCtx closes asked the first time its Done is called: when a Get
// waits on it (it does not before).
type askedCtx struct {
	context.Context
	once  sync.Once
	asked chan struct{}
}

func newAskedCtx() *askedCtx {
	return &askedCtx{Context: context.Background(), asked: make(chan struct{})}
}

func (c *askedCtx) Done() <-chan struct{} {
	c.once.Do(func() { close(c.asked) })
	return c.Context.Done()
}

// storedRegistry is a registry over store in which ids are stored
// sessions (made by another registry) not opened yet.
func storedRegistry(t *testing.T, store trace.Store, ids ...string) *Registry {
	t.Helper()
	maker, _ := serviceRegistry(t, store, 2)
	for _, id := range ids {
		if _, err := maker.Create(context.Background(), id, ""); err != nil {
			t.Fatal(err)
		}
	}
	r, _ := serviceRegistry(t, store, 2)
	return r
}

type got struct {
	h   *Host
	err error
}

func getAsync(r *Registry, ctx context.Context, id string) chan got {
	out := make(chan got, 1)
	go func() {
		h, err := r.Get(ctx, id)
		out <- got{h, err}
	}()
	return out
}

func within[T any](t *testing.T, ch chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(bound): // a bound on a failure, not an ordering
		t.Fatal(what + " did not come")
	}
	panic("unreachable")
}

// The other sessions are served while one session's store read hangs (a
// network file system that stopped answering, a big session's files):
// Get and Create read the store with the registry's lock held, and every
// request to every session waited behind that one read.
func TestOtherSessionsServedWhileOneOpens(t *testing.T) {
	store := newGatedStore(true)
	r := storedRegistry(t, store, "slow", "other")
	store.slow = "slow"
	ctx := context.Background()
	slow := getAsync(r, ctx, "slow")
	<-store.reads
	done := make(chan error, 1)
	go func() {
		_, err := r.Get(ctx, "other")
		if err == nil {
			_, err = r.Create(ctx, "new", "")
		}
		if err == nil {
			_, err = r.List(ctx)
		}
		if err == nil {
			err = r.Delete(ctx, "other")
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(bound): // a bound on a failure, not an ordering
		t.Error("Get, Create, List and Delete of other sessions waited for one session's store read")
		defer func() { <-done }()
	}
	close(store.gate)
	if g := within(t, slow, "the slow Get"); g.err != nil || g.h == nil {
		t.Fatalf("the slow Get: %v", g.err)
	}
}

// Gets of one session while it is being opened wait for that open (one
// store read) and are given its host; one whose context ends while it
// waits returns at once with the context's error, and nothing is left
// behind it.
func TestOpenSharedByItsWaiters(t *testing.T) {
	goroutines := runtime.NumGoroutine()
	store := newGatedStore(false)
	r := storedRegistry(t, store, "slow")
	store.slow = "slow"
	first := getAsync(r, context.Background(), "slow")
	<-store.reads
	actx := newAskedCtx()
	second := getAsync(r, actx, "slow")
	select {
	case <-actx.asked:
	case <-store.reads:
		t.Fatal("a second Get read the store while the first was opening the session")
	case <-time.After(bound): // a bound on a failure, not an ordering
		t.Fatal("a second Get did not wait for the first")
	}
	cctx, cancel := context.WithCancel(context.Background())
	third := getAsync(r, cctx, "slow")
	cancel()
	if g := within(t, third, "the cancelled Get"); !errors.Is(g.err, context.Canceled) || !strings.Contains(g.err.Error(), `"slow"`) {
		t.Fatalf("a Get cancelled while it waited: %v, want context.Canceled naming the session", g.err)
	}
	close(store.gate)
	a, b := within(t, first, "the first Get"), within(t, second, "the second Get")
	if a.err != nil || b.err != nil || a.h != b.h {
		t.Fatalf("Gets of one session: %v, %v (same host: %v)", a.err, b.err, a.h == b.h)
	}
	if n := store.n.Load(); n != 1 {
		t.Errorf("the store was read %d times, want 1", n)
	}
	r.mu.Lock()
	left := len(r.opening)
	r.mu.Unlock()
	if left != 0 {
		t.Errorf("%d opens left", left)
	}
	leakcheck.Until(t, bound, "the goroutines of before", func() bool { return runtime.NumGoroutine() <= goroutines })
}

// An open that fails tells its error to those that waited on it and
// leaves nothing behind: the next Get reads the store again.
func TestFailedOpenIsTriedAgain(t *testing.T) {
	store := newGatedStore(true)
	r := storedRegistry(t, store, "slow")
	store.slow = "slow"
	store.failWith(errors.New("disk on fire"))
	first := getAsync(r, context.Background(), "slow")
	<-store.reads
	actx := newAskedCtx()
	second := getAsync(r, actx, "slow")
	within(t, actx.asked, "the second Get's wait")
	close(store.gate)
	for _, g := range []got{within(t, first, "the first Get"), within(t, second, "the second Get")} {
		if !errors.Is(g.err, newErr(500, "store_failed", "")) || !strings.Contains(g.err.Error(), "disk on fire") {
			t.Errorf("Get of a session whose store read fails: %v, want store_failed naming the failure", g.err)
		}
	}
	store.failWith(nil)
	if _, err := r.Get(context.Background(), "slow"); err != nil {
		t.Fatalf("Get after the failure passed: %v", err)
	}
	if n := store.n.Load(); n != 2 {
		t.Errorf("the store was read %d times, want 2", n)
	}
}

// A Delete asked while the session is being opened waits for the open,
// then deletes the session it opened: no host is kept of the deleted
// session (a ghost a later Get would return), and a run or compaction
// asked of the opened host is refused as not found.
func TestDeleteDuringOpen(t *testing.T) {
	store := newGatedStore(true)
	r := storedRegistry(t, store, "doomed")
	store.slow = "doomed"
	first := getAsync(r, context.Background(), "doomed")
	<-store.reads
	actx := newAskedCtx()
	deleted := make(chan error, 1)
	go func() { deleted <- r.Delete(actx, "doomed") }()
	within(t, actx.asked, "Delete's wait for the open")
	close(store.gate)
	g := within(t, first, "the Get")
	if g.err != nil {
		t.Fatalf("the Get: %v", g.err)
	}
	if err := within(t, deleted, "the Delete"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := r.Get(context.Background(), "doomed"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after Delete: %v, want ErrNotFound", err)
	}
	if err := g.h.Compact(); !errors.Is(err, ErrNotFound) {
		t.Errorf("Compact of the deleted session: %v, want ErrNotFound", err)
	}
	r.mu.Lock()
	left := len(r.hosts) + len(r.opening)
	r.mu.Unlock()
	if left != 0 {
		t.Errorf("%d hosts or opens left after Delete", left)
	}
}

// panicStore's Files panics while armed.
type panicStore struct {
	trace.Store
	armed atomic.Bool
}

func (s *panicStore) Files(ctx context.Context, id string) ([]trace.FileInfo, error) {
	if s.armed.Load() {
		panic("store broke")
	}
	return s.Store.Files(ctx, id)
}

// An open whose store read panics (the panic is the caller's, as it was)
// leaves no opening behind that every later Get of the session would wait
// on for good.
func TestOpenThatPanicsLeavesNothingBehind(t *testing.T) {
	store := &panicStore{Store: &trace.MemStore{}}
	r := storedRegistry(t, store, "brittle")
	store.armed.Store(true)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the store's panic did not reach the caller")
			}
		}()
		r.Get(context.Background(), "brittle")
	}()
	store.armed.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), bound) // a bound on a failure
	defer cancel()
	if _, err := r.Get(ctx, "brittle"); err != nil {
		t.Fatalf("Get after a panicking open: %v", err)
	}
}
