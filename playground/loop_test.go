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
