package engine

import (
	"context"
	"sync"
	"testing"
	"time"
)

// recTimer records the timers armed on it; stop reports whether the timer
// was still pending.
type recTimer struct {
	mu      sync.Mutex
	armed   chan time.Duration
	pending int
}

func newRecTimer() *recTimer { return &recTimer{armed: make(chan time.Duration, 16)} }

func (t *recTimer) AfterFunc(d time.Duration, f func()) func() bool {
	t.mu.Lock()
	t.pending++
	t.mu.Unlock()
	t.armed <- d
	var once sync.Once
	return func() bool {
		stopped := false
		once.Do(func() {
			t.mu.Lock()
			t.pending--
			t.mu.Unlock()
			stopped = true
		})
		return stopped
	}
}

func (t *recTimer) count() int { return len(t.armed) }

func (t *recTimer) live() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pending
}

// A run's registry arms every watch on the run's own context once when
// that context is done, arms at once a watch added after, forgets a
// stopped one wherever it sits in the list, and leaves a watch on another
// context to its own context.AfterFunc.
func TestGraceRegistry(t *testing.T) {
	timer := newRecTimer()
	s := &Session{timer: timer}
	rctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &run{s: s, done: rctx.Done()}
	nop := abandonFunc(func() {})

	a, b, c := r.watchGrace(rctx, nop), r.watchGrace(rctx, nop), r.watchGrace(rctx, nop)
	for _, g := range []*grace{a, b, c} {
		if g.reg != &r.graces || g.stopWatch != nil {
			t.Fatal("a watch on the run's context is not in the run's registry")
		}
	}
	b.stop() // from the middle of the list
	if timer.count() != 0 {
		t.Fatal("a timer was armed before the run's context was done")
	}
	a.arm() // refuse arms the LLM's watch itself
	r.graces.fire()
	if n := timer.count(); n != 2 {
		t.Fatalf("%d timers armed, want 2 (a once, c; not the stopped b)", n)
	}
	late := r.watchGrace(rctx, nop) // added after the run's context was done
	if n := timer.count(); n != 3 {
		t.Fatalf("%d timers armed, want the late watch's at once", n)
	}
	for _, g := range []*grace{a, c, late} {
		g.stop()
	}
	if n := timer.live(); n != 0 {
		t.Fatalf("%d timers pending after every watch stopped", n)
	}

	// Another context: its own context.AfterFunc, which the registry's
	// fire does not touch.
	octx, ocancel := context.WithCancel(context.Background())
	o := r.watchGrace(octx, nop)
	if o.reg != nil || o.stopWatch == nil {
		t.Fatal("a watch on another context is in the run's registry")
	}
	for timer.count() > 0 { // forget the first part's timers
		<-timer.armed
	}
	r.graces.fire()
	if timer.count() != 0 {
		t.Fatal("the registry armed a watch on another context")
	}
	ocancel()
	if d := <-timer.armed; d != DefaultAbortGrace { // the AfterFunc's goroutine arms it
		t.Fatalf("grace %v", d)
	}
	o.stop()
	if n := timer.live(); n != 0 {
		t.Fatalf("%d timers pending after the other watch stopped", n)
	}
}
