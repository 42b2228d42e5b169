package flow

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"
)

// fake is a queue with a mark: enqueue reports room while room is true.
type fake struct {
	got  []string
	room bool
}

func (f *fake) enqueue(b []byte) bool {
	f.got = append(f.got, string(b))
	return f.room
}

// clock is an injected clock: after reports each wait on waits and
// returns a channel the test fires.
type clock struct {
	now   time.Time
	waits chan time.Duration
	fire  chan time.Time
}

func newClock() *clock {
	return &clock{now: time.Unix(1000, 0), waits: make(chan time.Duration, 1), fire: make(chan time.Time)}
}

func (c *clock) Now() time.Time { return c.now }
func (c *clock) After(d time.Duration) <-chan time.Time {
	c.waits <- d
	return c.fire
}

// filled returns a Writer on an injected clock whose queue one write
// ("fills") has taken over its mark.
func filled(ctx context.Context) (*fake, *clock, *Writer) {
	f := &fake{}
	c := newClock()
	w := New(ctx, f.enqueue, c.Now, c.After)
	w.Write([]byte("fills"))
	return f, c, w
}

// noTimer fails if the writer started a timer on c.
func noTimer(t *testing.T, c *clock, what string) {
	t.Helper()
	select {
	case d := <-c.waits:
		t.Fatalf("%s started a timer of %v", what, d)
	default:
	}
}

type result struct {
	n   int
	err error
}

func write(w *Writer, s string) chan result {
	ch := make(chan result, 1)
	go func() {
		n, err := w.Write([]byte(s))
		ch <- result{n, err}
	}()
	return ch
}

func TestWritesPassWhileThereIsRoom(t *testing.T) {
	f := &fake{room: true}
	w := New(context.Background(), f.enqueue, nil, nil)
	for _, s := range []string{"a", "", "bc"} {
		if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if len(f.got) != 2 || f.got[0] != "a" || f.got[1] != "bc" {
		t.Fatalf("enqueued %q", f.got)
	}
}

// Over the mark, the next write waits for the reader, then goes on.
func TestWriteWaitsForTheReader(t *testing.T) {
	f := &fake{}
	c := newClock()
	w := New(context.Background(), f.enqueue, c.Now, c.After)
	if n, err := w.Write([]byte("first")); n != 5 || err != nil {
		t.Fatalf("the write that fills the queue: %d, %v", n, err)
	}
	w.SetWriteDeadline(c.now.Add(30 * time.Second))
	res := write(w, "second")
	if d := <-c.waits; d != 30*time.Second {
		t.Fatalf("the wait is bounded by %v, want 30s", d)
	}
	select {
	case r := <-res:
		t.Fatalf("the write went through before the reader took anything: %+v", r)
	default:
	}
	f.room = true
	w.Drained()
	if r := <-res; r.n != 6 || r.err != nil {
		t.Fatalf("after the reader took some: %+v", r)
	}
	if len(f.got) != 2 || f.got[1] != "second" {
		t.Fatalf("enqueued %q", f.got)
	}
}

// A reader that does not come back: the write fails at its deadline, and
// nothing more is queued.
func TestWriteDeadline(t *testing.T) {
	f, c, w := filled(context.Background())
	w.SetWriteDeadline(c.now.Add(time.Second))
	res := write(w, "stuck")
	<-c.waits
	c.fire <- c.now.Add(time.Second)
	if r := <-res; r.n != 0 || !errors.Is(r.err, os.ErrDeadlineExceeded) {
		t.Fatalf("got %+v, want os.ErrDeadlineExceeded", r)
	}
	c.now = c.now.Add(time.Second)
	if err := w.Flush(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Flush past the deadline on a full queue: %v", err)
	}
	if len(f.got) != 1 {
		t.Fatalf("enqueued %q after the deadline", f.got)
	}
}

func TestDeadlinePassedFailsAtOnce(t *testing.T) {
	_, c, w := filled(context.Background())
	w.SetWriteDeadline(c.now.Add(-time.Millisecond))
	if _, err := w.Write([]byte("late")); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
	noTimer(t, c, "a passed deadline")
}

// Without a deadline the wait has no timer; the request's end ends it.
func TestWaitEndsWithTheRequest(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	_, c, w := filled(ctx)
	res := write(w, "x")
	cancel()
	if r := <-res; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("got %+v, want context.Canceled", r)
	}
	noTimer(t, c, "a wait without a deadline")
}

// The reader may take from the queue before the writer waits: the write
// does not wait then.
func TestDrainedBeforeTheWait(t *testing.T) {
	f, _, w := filled(context.Background())
	w.Drained()
	w.Drained() // more than one is one
	f.room = true
	if _, err := w.Write([]byte("next")); err != nil {
		t.Fatal(err)
	}
}

// Still over the mark after the reader took some: one more write goes in,
// and the one after it waits again.
func TestOneWriteAfterEachDrain(t *testing.T) {
	f := &fake{}
	c := newClock()
	w := New(context.Background(), f.enqueue, c.Now, c.After)
	w.Write([]byte("a"))
	w.Drained()
	w.Write([]byte("b")) // room is still false
	w.SetWriteDeadline(c.now.Add(time.Minute))
	res := write(w, "c")
	<-c.waits
	select {
	case r := <-res:
		t.Fatalf("the write after an over-mark write did not wait: %+v", r)
	default:
	}
	w.Drained()
	if r := <-res; r.err != nil {
		t.Fatal(r.err)
	}
	if len(f.got) != 3 {
		t.Fatalf("enqueued %q", f.got)
	}
}
