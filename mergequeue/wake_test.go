package mergequeue

import (
	"testing"
	"testing/synctest"
)

// TestSignalOnce checks that the pushes made while a waiting consumer is
// being woken count it as woken once (passOn signals a waiter only while
// more wait than were woken), and that two waiting consumers are both
// woken by two pushes.
func TestSignalOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[int](0)
		p := q.NewProducer()
		got := make(chan int, 2)
		pop := func() {
			v, err := q.Pop(t.Context())
			if err != nil {
				t.Errorf("Pop = %v", err)
			}
			got <- v
		}
		go pop()
		synctest.Wait() // the consumer waits
		for i := range 10 {
			if err := p.Push(t.Context(), i); err != nil {
				t.Fatal(err)
			}
			// The consumer may have run already (0 and 0); while it has
			// not, it is counted as woken once, however many pushes
			// follow (each of which signalled it before).
			q.lock()
			wait, woken := q.popWait, q.popWoken
			q.mu.Unlock()
			if wait != woken || wait > 1 {
				t.Fatalf("after push %d: %d waiting, %d woken; want 1 and 1, or 0 and 0", i, wait, woken)
			}
		}
		if v := <-got; v != 0 {
			t.Fatalf("Pop = %d, want 0", v)
		}
		q.lock()
		if q.popWait != 0 || q.popWoken != 0 {
			t.Fatalf("after the wake: %d waiting, %d woken; want 0 and 0", q.popWait, q.popWoken)
		}
		q.items.reset()
		q.mu.Unlock()

		go pop()
		go pop()
		synctest.Wait()
		for i := range 2 {
			if err := p.Push(t.Context(), 10+i); err != nil {
				t.Fatal(err)
			}
		}
		a, b := <-got, <-got
		if a+b != 21 {
			t.Fatalf("the two consumers got %d and %d, want 10 and 11", a, b)
		}
		q.lock()
		defer q.mu.Unlock()
		if q.popWait != 0 || q.popWoken != 0 {
			t.Fatalf("at the end: %d waiting, %d woken; want 0 and 0", q.popWait, q.popWoken)
		}
	})
}

// TestBroadcastWoken checks that a broadcast (a cancelled wait, Close)
// counts every waiter as woken, so that the counts return to zero.
func TestBroadcastWoken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[int](0)
		q.NewProducer()
		done := make(chan error, 2)
		for range 2 {
			go func() {
				_, err := q.Pop(t.Context())
				done <- err
			}()
		}
		synctest.Wait()
		q.Close()
		for range 2 {
			if err := <-done; err != ErrClosed {
				t.Fatalf("Pop after Close = %v, want ErrClosed", err)
			}
		}
		q.lock()
		defer q.mu.Unlock()
		if q.popWait != 0 || q.popWoken != 0 {
			t.Fatalf("after Close: %d waiting, %d woken; want 0 and 0", q.popWait, q.popWoken)
		}
	})
}
