package clock

import (
	"context"
	"sync"
	"testing"
	"time"
)

// System.Now reads the monotonic clock: its reading lies between two
// time.Now readings taken around it, and its wall-clock time within a
// millisecond of theirs (the wall clock and the monotonic one are read at
// slightly different instants).
func TestSystemNowBetween(t *testing.T) {
	for range 1000 {
		before := time.Now()
		got := System{}.Now()
		after := time.Now()
		if got.Before(before) || got.After(after) {
			t.Fatalf("System.Now %v is not between %v and %v", got, before, after)
		}
		w, lo, hi := got.Round(0), before.Round(0).Add(-time.Millisecond), after.Round(0).Add(time.Millisecond)
		if w.Before(lo) || w.After(hi) {
			t.Fatalf("System.Now's wall-clock time %v is not between %v and %v", w, lo, hi)
		}
	}
}

// A wall-clock reading a second old is read again: a step of the wall
// clock shows within a second (the README's second, written out).
func TestSystemNowRebases(t *testing.T) {
	if !natively {
		t.Skip("on WebAssembly System.Now is time.Now")
	}
	old := time.Now().Add(-time.Second)
	wallBase.Store(&old)
	before := time.Now()
	System{}.Now()
	if b := wallBase.Load(); b == &old || b.Before(before) {
		t.Fatalf("the wall-clock reading %v was kept %v after it was taken", *b, before.Sub(*b))
	}
}

// System.Now is safe for concurrent use, also while it reads the wall
// clock again (run with -race).
func TestSystemNowConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := time.Time{}
			for i := range 2000 {
				if i%500 == 0 {
					old := time.Now().Add(-2 * rebase)
					wallBase.Store(&old)
				}
				now := System{}.Now()
				if now.Before(last) {
					t.Errorf("System.Now went back from %v to %v", last, now)
					return
				}
				last = now
			}
		}()
	}
	wg.Wait()
}

func TestSystemSleep(t *testing.T) {
	if !(System{}).Sleep(context.Background(), 0) {
		t.Fatal("Sleep(0) reported an interrupted wait")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if (System{}).Sleep(ctx, time.Hour) {
		t.Fatal("Sleep with a cancelled context reported a full wait")
	}
}
