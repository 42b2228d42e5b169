package playground

import (
	"context"
	"sync"
	"testing"
)

func TestLoopRunsInOrder(t *testing.T) {
	var l Loop
	ctx, cancel := context.WithCancel(context.Background())
	var got []int
	idle := 0
	const producers, each = 4, 100
	var wg sync.WaitGroup
	last := make([]int, producers)
	for p := range producers {
		last[p] = -1
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				l.Post(func() {
					if i != last[p]+1 {
						t.Errorf("producer %d: %d after %d", p, i, last[p])
					}
					last[p] = i
					got = append(got, i)
				})
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		l.Run(ctx, func() {
			idle++
			if len(got) == producers*each {
				cancel()
			}
		})
		close(done)
	}()
	wg.Wait()
	<-done
	if len(got) != producers*each || idle == 0 {
		t.Fatalf("ran %d functions, idle %d times", len(got), idle)
	}
}

// A batch of quiet functions alone is not followed by idle; one with any
// function posted by Post is, once.
func TestLoopQuietBatchIsNotIdle(t *testing.T) {
	var l Loop
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran, idle := make(chan string, 8), make(chan int, 8)
	n := 0
	done := make(chan struct{})
	go func() {
		l.Run(ctx, func() { n++; idle <- n })
		close(done)
	}()
	l.PostQuiet(func() { ran <- "quiet" })
	if got := <-ran; got != "quiet" {
		t.Fatal(got)
	}
	// The loop is past the quiet batch when it runs the next one: had it
	// called idle after the first, idle's value would be there before
	// this batch's.
	l.Post(func() {
		l.PostQuiet(func() { ran <- "quiet, in a loud batch" })
		ran <- "loud"
	})
	if a, b := <-ran, <-ran; a != "loud" || b != "quiet, in a loud batch" {
		t.Fatal(a, b)
	}
	if got := <-idle; got != 1 {
		t.Fatalf("idle call %d first", got)
	}
	l.PostQuiet(func() { cancel() })
	<-done
	select {
	case got := <-idle:
		t.Fatalf("idle called again (%d) after a quiet batch", got)
	default:
	}
}
