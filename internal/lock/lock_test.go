package lock_test

import (
	"runtime"
	"sync"
	"testing"

	"github.com/floehq/floe/internal/lock"
)

// Goroutines that yield inside the lock never overlap, and every one of
// them gets it.
func TestMutexExcludes(t *testing.T) {
	var (
		mu    lock.Mutex
		in    bool
		count int
		wg    sync.WaitGroup
	)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				mu.Lock()
				if in {
					t.Error("two goroutines hold the lock")
				}
				in = true
				runtime.Gosched() // let the others run, and find it held
				count++
				in = false
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if count != 8*200 {
		t.Fatalf("count %d, want %d", count, 8*200)
	}
}

// A goroutine that finds the lock held parks until Unlock, and then holds it.
func TestMutexWaiterWakes(t *testing.T) {
	var mu lock.Mutex
	mu.Lock()
	got := make(chan struct{})
	go func() {
		mu.Lock()
		close(got)
	}()
	for i := 0; i < 10; i++ {
		runtime.Gosched()
	}
	select {
	case <-got:
		t.Fatal("Lock returned while the lock was held")
	default:
	}
	mu.Unlock()
	<-got
	if ok := tryLocked(&mu); ok {
		t.Fatal("the waiter's Lock returned without holding the lock")
	}
	mu.Unlock()
	mu.Lock() // free again: the zero-waiter path
	mu.Unlock()
}

// tryLocked reports whether a goroutine could lock mu before the others
// yield ten times: false while someone holds it.
func tryLocked(mu *lock.Mutex) bool {
	got := make(chan struct{})
	go func() {
		mu.Lock()
		close(got)
		mu.Unlock()
	}()
	for i := 0; i < 10; i++ {
		runtime.Gosched()
		select {
		case <-got:
			return true
		default:
		}
	}
	return false
}

// A sync.Cond over the lock waits and wakes, as the merge queue uses it.
func TestMutexWithCond(t *testing.T) {
	var mu lock.Mutex
	c := sync.NewCond(&mu)
	ready := false
	done := make(chan struct{})
	go func() {
		mu.Lock()
		for !ready {
			c.Wait()
		}
		mu.Unlock()
		close(done)
	}()
	runtime.Gosched()
	mu.Lock()
	ready = true
	c.Broadcast()
	mu.Unlock()
	<-done
}
