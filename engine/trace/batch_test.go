package trace_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/engine/trace/tracetest"
)

// gatedStore is a MemStore whose Append records its calls and waits for
// the test to open the gate.
type gatedStore struct {
	trace.MemStore
	gate chan struct{}
	fail error // returned by Append when set

	mu    sync.Mutex
	calls [][]byte
}

func (s *gatedStore) Append(ctx context.Context, id string, index int, data []byte) (trace.AppendResult, error) {
	<-s.gate
	s.mu.Lock()
	s.calls = append(s.calls, slices.Clone(data))
	fail := s.fail
	s.mu.Unlock()
	if fail != nil {
		return trace.AppendResult{}, fail
	}
	return s.MemStore.Append(ctx, id, index, data)
}

func (s *gatedStore) callCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls)
}

func TestBatcherGroupsInOrderWithoutWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		store := &gatedStore{gate: make(chan struct{})}
		b := trace.NewBatcher(store, trace.BatcherOptions{})
		mustQueue(t, b, "s", 1, 1) // taken by the goroutine, blocked at the gate
		synctest.Wait()
		for n := 2; n <= 5; n++ {
			mustQueue(t, b, "s", 1, n) // returns although the store is blocked
		}
		mustQueue(t, b, "s", 2, 6)
		mustQueue(t, b, "s", 2, 7)

		flushed := make(chan error, 1)
		go func() { flushed <- b.Flush(ctx) }()
		synctest.Wait()
		select {
		case <-flushed:
			t.Fatal("Flush returned before the records were written")
		default:
		}
		close(store.gate)
		if err := <-flushed; err != nil {
			t.Fatal(err)
		}
		want := [][]byte{
			tracetest.Record(1),
			slices.Concat(tracetest.Record(2), tracetest.Record(3), tracetest.Record(4), tracetest.Record(5)),
			slices.Concat(tracetest.Record(6), tracetest.Record(7)),
		}
		if !slices.EqualFunc(store.calls, want, bytes.Equal) {
			t.Errorf("store appends = %q, want %q", store.calls, want)
		}
		got, _ := b.ReadFile(ctx, "s", 1)
		if want := slices.Concat(want[0], want[1]); !bytes.Equal(got, want) {
			t.Errorf("file 1 = %q, want %q", got, want)
		}
	})
}

func mustQueue(t *testing.T, b *trace.Batcher, id string, index, n int) {
	t.Helper()
	if _, err := b.Append(context.Background(), id, index, tracetest.Record(n)); err != nil {
		t.Fatal(err)
	}
}

func TestBatcherCapsAGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &gatedStore{gate: make(chan struct{})}
		rec := len(tracetest.Record(1))
		b := trace.NewBatcher(store, trace.BatcherOptions{MaxBatchBytes: 2 * rec})
		mustQueue(t, b, "s", 1, 1) // taken alone by the goroutine
		synctest.Wait()
		for n := 2; n <= 6; n++ {
			mustQueue(t, b, "s", 1, n)
		}
		close(store.gate)
		if err := b.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		var sizes []int
		for _, c := range store.calls {
			sizes = append(sizes, len(c)/rec)
		}
		if !slices.Equal(sizes, []int{1, 2, 2, 1}) {
			t.Errorf("records per append = %v, want [1 2 2 1]", sizes)
		}
	})
}

func TestBatcherReportsAndGoesOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		quota := errors.New("quota exceeded")
		store := &gatedStore{gate: make(chan struct{}), fail: quota}
		var reported []error
		b := trace.NewBatcher(store, trace.BatcherOptions{Report: func(err error) { reported = append(reported, err) }})
		mustQueue(t, b, "s", 1, 1)
		synctest.Wait()
		mustQueue(t, b, "s", 2, 2)
		close(store.gate)
		if err := b.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		if len(reported) != 2 || !errors.Is(reported[0], quota) {
			t.Errorf("reported %v, want the quota error twice", reported)
		}
		if store.callCount() != 2 {
			t.Errorf("%d appends attempted, want 2 (the second after the first failed)", store.callCount())
		}
	})
}

func TestBatcherFlushCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &gatedStore{gate: make(chan struct{})}
		b := trace.NewBatcher(store, trace.BatcherOptions{})
		mustQueue(t, b, "s", 1, 1)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := b.Flush(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Flush = %v, want context.Canceled", err)
		}
		if _, err := b.Files(ctx, "s"); !errors.Is(err, context.Canceled) {
			t.Errorf("Files = %v, want context.Canceled", err)
		}
		close(store.gate)
		if err := b.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

func TestBatcherFreshRefusesAStoredSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		store := &trace.MemStore{}
		if err := store.Create(ctx, "old", [][]byte{tracetest.Record(1)}); err != nil {
			t.Fatal(err)
		}
		var reported []error
		b := trace.NewBatcher(store, trace.BatcherOptions{Fresh: true, Report: func(err error) { reported = append(reported, err) }})
		mustQueue(t, b, "old", 1, 2)
		if err := b.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		mustQueue(t, b, "old", 1, 3)
		mustQueue(t, b, "new", 1, 4)
		if err := b.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if len(reported) != 1 || !errors.Is(reported[0], trace.ErrExists) {
			t.Errorf("reported %v, want one ErrExists", reported)
		}
		if got, _ := store.ReadFile(ctx, "old", 1); !bytes.Equal(got, tracetest.Record(1)) {
			t.Errorf("the stored session was appended to: %q", got)
		}
		if got, _ := store.ReadFile(ctx, "new", 1); !bytes.Equal(got, tracetest.Record(4)) {
			t.Errorf("new session = %q", got)
		}
	})
}

func TestBatcherRefusesInvalidAppends(t *testing.T) {
	b := trace.NewBatcher(&trace.MemStore{}, trace.BatcherOptions{})
	if _, err := b.Append(context.Background(), "a/b", 1, tracetest.Record(1)); !errors.Is(err, trace.ErrInvalid) {
		t.Errorf("Append with a bad id = %v", err)
	}
	if _, err := b.Append(context.Background(), "s", 1, []byte("x")); !errors.Is(err, trace.ErrInvalid) {
		t.Errorf("Append of a partial line = %v", err)
	}
}

// A Batcher of a nil Store refuses every append: its goroutine's write
// panicked, which no caller could recover, and the program ended.
func TestBatcherOfANilStore(t *testing.T) {
	b := trace.NewBatcher(nil, trace.BatcherOptions{})
	_, err := b.Append(context.Background(), "s", 1, tracetest.Record(1))
	if !errors.Is(err, trace.ErrInvalid) || !strings.Contains(err.Error(), "the Batcher's Store is nil") {
		t.Errorf("Append = %v, want ErrInvalid naming the nil Store", err)
	}
	if err := b.Flush(context.Background()); err != nil {
		t.Errorf("Flush = %v", err)
	}
}

// flakyStore is a MemStore whose Append fails while failures > 0.
type flakyStore struct {
	trace.MemStore
	failures int
	calls    int
}

func (s *flakyStore) Append(ctx context.Context, id string, index int, data []byte) (trace.AppendResult, error) {
	s.calls++
	if s.failures > 0 {
		s.failures--
		return trace.AppendResult{}, errors.New("quota exceeded")
	}
	return s.MemStore.Append(ctx, id, index, data)
}

// A failed write is written again before the session's next one: the
// Trace gets no hole (before, the records of the failed write were lost
// between the ones before and after, a session_meta among them).
func TestBatcherWritesAFailedBatchAgainFirst(t *testing.T) {
	ctx := context.Background()
	store := &flakyStore{failures: 2}
	var reported []error
	b := trace.NewBatcher(store, trace.BatcherOptions{Report: func(err error) { reported = append(reported, err) }})
	line := tracetest.Record
	for n := 1; n <= 3; n++ {
		if _, err := b.Append(ctx, "s", 1, line(n)); err != nil {
			t.Fatal(err)
		}
		if err := b.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	got, err := store.ReadFile(ctx, "s", 1)
	if err != nil || !bytes.Equal(got, slices.Concat(line(1), line(2), line(3))) {
		t.Fatalf("stored %q, %v; want the three records in order", got, err)
	}
	if len(reported) != 2 || store.calls != 5 {
		t.Errorf("reported %v, %d appends; want 2 failures, then 1, 2 and 3 written (5 calls)", reported, store.calls)
	}
	// Past 8 MiB held, the records are dropped and the session's Trace is
	// written no further: it keeps a prefix.
	store = &flakyStore{failures: 1 << 30}
	reported = nil
	b = trace.NewBatcher(store, trace.BatcherOptions{Report: func(err error) { reported = append(reported, err) }, MaxBatchBytes: 1 << 20})
	big := bytes.Repeat(line(1), (1<<20)/len(line(1))) // just under 1 MiB
	for i := 1; i <= 10; i++ {
		if _, err := b.Append(ctx, "s", 1, big); err != nil {
			t.Fatal(err)
		}
		if err := b.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		// The README's 8 MiB, written out: eight held, the ninth past it.
		if dropped := strings.Contains(reported[len(reported)-1].Error(), "written no further"); dropped != (i >= 9) {
			t.Fatalf("%d KiB held: dropped %v", i*len(big)>>10, dropped)
		}
	}
	calls := store.calls
	if last := reported[len(reported)-1]; !strings.Contains(last.Error(), "written no further") {
		t.Errorf("last report %v, want the dropped records named", last)
	}
	store.failures = 0
	if _, err := b.Append(ctx, "s", 1, line(2)); err != nil {
		t.Fatal(err)
	}
	if err := b.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := store.ReadFile(ctx, "s", 1); !errors.Is(err, trace.ErrNotFound) || store.calls != calls {
		t.Errorf("after the drop: read %v, %d more appends; want nothing written", err, store.calls-calls)
	}
}

// Drop: what a deleted session's writer still queues is dropped, and the
// first batch dropped is reported; other sessions are written.
func TestBatcherDrop(t *testing.T) {
	ctx := context.Background()
	store := &trace.MemStore{}
	var reported []error
	b := trace.NewBatcher(store, trace.BatcherOptions{Report: func(err error) { reported = append(reported, err) }})
	b.Drop("gone")
	for _, id := range []string{"gone", "kept", "gone"} {
		if _, err := b.Append(ctx, id, 1, tracetest.Record(1)); err != nil {
			t.Fatal(err)
		}
		if err := b.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.ReadFile(ctx, "gone", 1); !errors.Is(err, trace.ErrNotFound) {
		t.Errorf("a dropped session was written: %v", err)
	}
	if _, err := store.ReadFile(ctx, "kept", 1); err != nil {
		t.Errorf("another session was not written: %v", err)
	}
	if len(reported) != 1 || !strings.Contains(reported[0].Error(), "deleted while it was open") {
		t.Errorf("reported %v, want the drop once", reported)
	}
}

// Retry, when the session closes: the held records are written once more;
// if that fails too, they are dropped and reported with their number, and
// nothing more is written.
func TestBatcherRetry(t *testing.T) {
	ctx := context.Background()
	store := &flakyStore{failures: 1}
	var reported []error
	b := trace.NewBatcher(store, trace.BatcherOptions{Report: func(err error) { reported = append(reported, err) }})
	line := tracetest.Record
	if _, err := b.Append(ctx, "s", 1, slices.Concat(line(1), line(2))); err != nil {
		t.Fatal(err)
	}
	if b.Retry("s"); b.Flush(ctx) != nil {
		t.Fatal("flush")
	}
	if b.Retry("other"); b.Flush(ctx) != nil { // nothing held: no write
		t.Fatal("flush")
	}
	got, err := store.ReadFile(ctx, "s", 1)
	if err != nil || !bytes.Equal(got, slices.Concat(line(1), line(2))) || len(reported) != 1 || store.calls != 2 {
		t.Fatalf("stored %q, %v, reported %v, %d appends; want the records written by the retry", got, err, reported, store.calls)
	}

	store = &flakyStore{failures: 2}
	reported = nil
	b = trace.NewBatcher(store, trace.BatcherOptions{Report: func(err error) { reported = append(reported, err) }})
	if _, err := b.Append(ctx, "s", 1, slices.Concat(line(1), line(2))); err != nil {
		t.Fatal(err)
	}
	if b.Retry("s"); b.Flush(ctx) != nil {
		t.Fatal("flush")
	}
	if len(reported) != 2 || !strings.Contains(reported[1].Error(), "; 2 records waiting") || !strings.Contains(reported[1].Error(), "are dropped") {
		t.Fatalf("reported %v; want the failure, then the 2 records dropped", reported)
	}
	if _, err := b.Append(ctx, "s", 1, line(3)); err != nil {
		t.Fatal(err)
	}
	if b.Retry("s"); b.Flush(ctx) != nil {
		t.Fatal("flush")
	}
	if _, err := store.ReadFile(ctx, "s", 1); !errors.Is(err, trace.ErrNotFound) || store.calls != 2 || len(reported) != 2 {
		t.Errorf("after the drop: read %v, %d appends, reported %v; want nothing more written or reported", err, store.calls, reported)
	}
}

// A stored session whose only line a crash cut (no record at all) can be
// neither resumed nor created again: a fresh session of its id replaces
// it; one with a record is still refused.
func TestBatcherFreshReplacesASessionOfNoRecord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		store := &trace.MemStore{}
		torn := []byte(`{"timestamp":"2026-12-06T08:00:00.000Z","type":"session_me`)
		if err := store.Create(ctx, "cut", [][]byte{torn}); err != nil {
			t.Fatal(err)
		}
		// Resumed, it says why it cannot be, and what to do.
		if _, err := trace.Resume(ctx, store, "cut", time.Now); err == nil || !strings.Contains(err.Error(), "no session_meta: its only line was cut short (a crash during its first write); create the session again, or delete it") {
			t.Errorf("Resume: %v", err)
		}
		var reported []error
		b := trace.NewBatcher(store, trace.BatcherOptions{Fresh: true, Report: func(err error) { reported = append(reported, err) }})
		mustQueue(t, b, "cut", 1, 1)
		if err := b.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if len(reported) != 0 {
			t.Errorf("reported %v", reported)
		}
		if got, _ := store.ReadFile(ctx, "cut", 1); !bytes.Equal(got, tracetest.Record(1)) {
			t.Errorf("the session = %q, want the new record alone", got)
		}
		// An empty file (another writer's, made and not yet written) is
		// not a crash's: refused, and left as it is.
		if err := store.Create(ctx, "empty", [][]byte{{}}); err != nil {
			t.Fatal(err)
		}
		mustQueue(t, b, "empty", 1, 2)
		if err := b.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if len(reported) != 1 || !errors.Is(reported[0], trace.ErrExists) {
			t.Errorf("an empty stored file: reported %v, want one ErrExists", reported)
		}
		if got, err := store.ReadFile(ctx, "empty", 1); err != nil || len(got) != 0 {
			t.Errorf("the empty file = %q, %v", got, err)
		}
	})
}
