package mergequeue_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/floehq/floe/mergequeue"
)

// A Batch queues the slots it commits, in order; a slot Next returned and
// Commit did not queue is the next Next's slot, and Unlock drops it.
func TestBatchCommits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := mergequeue.New[int](8)
	p := q.NewProducer()
	b := p.Batch(ctx)
	for i := 1; i <= 5; i++ {
		v, err := b.Next()
		if err != nil {
			t.Fatalf("Next = %v", err)
		}
		*v = i
		if i%2 == 0 {
			again, _ := b.Next() // not committed: the same slot
			if again != v {
				t.Fatal("Next after a slot not committed gave another slot")
			}
			continue // written, never committed: overwritten by the next
		}
		b.Commit()
	}
	v, _ := b.Next()
	*v = -1 // left uncommitted: Unlock drops it
	b.Unlock()
	b.Unlock() // without the lock: nothing
	mustPush(t, p, 7)
	p.Done()
	got, err := q.Swap(ctx, nil)
	if err != nil || !slices.Equal(got, []int{1, 3, 5, 7}) {
		t.Fatalf("Swap = %v, %v; want [1 3 5 7]", got, err)
	}
}

// The consumer sees a batch's items when the batch lets the lock go, and
// a batch larger than the queue's capacity waits for room: the items it
// queued before it waits are the consumer's.
func TestBatchWaitsForRoom(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q := mergequeue.New[int](4)
		p := q.NewProducer()
		popped := make(chan int, 16)
		go func() {
			for v, err := range q.All(ctx) {
				if err != nil {
					break
				}
				popped <- v
			}
			close(popped)
		}()
		synctest.Wait()
		b := p.Batch(ctx)
		for i := 0; i < 3; i++ {
			v, _ := b.Next()
			*v = i
			b.Commit()
		}
		synctest.Wait()
		if len(popped) != 0 {
			t.Fatal("the consumer took an item while the batch held the lock")
		}
		for i := 3; i < 10; i++ { // waits for room twice: the consumer drains what is queued
			v, err := b.Next()
			if err != nil {
				t.Fatalf("Next(%d) = %v", i, err)
			}
			*v = i
			b.Commit()
		}
		b.Unlock()
		synctest.Wait() // Unlock woke the consumer: it has every item
		if len(popped) != 10 {
			t.Fatalf("the consumer has %d items after Unlock, want 10", len(popped))
		}
		p.Done()
		var got []int
		for v := range popped {
			got = append(got, v)
		}
		if !slices.Equal(got, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) {
			t.Fatalf("consumer got %v", got)
		}
	})
}

// Next fails as Push does: ErrClosed after Done or Close, the context's
// error when it is cancelled while Next waits for room.
func TestBatchRefusals(t *testing.T) {
	t.Parallel()
	q := mergequeue.New[int](1)
	p := q.NewProducer()
	ctx, cancel := context.WithCancel(context.Background())
	b := p.Batch(ctx)
	v, _ := b.Next()
	*v = 1
	b.Commit()
	cancel()
	if _, err := b.Next(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next on a full queue with a cancelled context = %v", err)
	}
	b.Unlock()
	p.Done()
	b = p.Batch(context.Background())
	if _, err := b.Next(); err != mergequeue.ErrClosed {
		t.Fatalf("Next after Done = %v, want ErrClosed", err)
	}
	b.Unlock()
	q2 := mergequeue.New[int](1)
	p2 := q2.NewProducer()
	q2.Close()
	b = p2.Batch(context.Background())
	if _, err := b.Next(); err != mergequeue.ErrClosed {
		t.Fatalf("Next after Close = %v, want ErrClosed", err)
	}
	b.Unlock()
	if got, err := q.Swap(context.Background(), nil); err != nil || !slices.Equal(got, []int{1}) {
		t.Fatalf("Swap = %v, %v; want [1]", got, err)
	}
}

// A panic between Next and Commit, with Unlock deferred as the Batch's
// doc asks, leaves the committed items queued, the slot dropped and the
// lock free.
func TestBatchPanic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := mergequeue.New[int](4)
	p := q.NewProducer()
	func() {
		defer func() {
			if v := recover(); v != "fill" {
				t.Fatalf("recovered %v, want the fill's panic", v)
			}
		}()
		b := p.Batch(ctx)
		defer b.Unlock()
		v, _ := b.Next()
		*v = 1
		b.Commit()
		v, _ = b.Next()
		*v = -1
		panic("fill")
	}()
	mustPush(t, p, 2)
	p.Done()
	got, err := q.Swap(ctx, nil)
	if err != nil || !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("Swap = %v, %v; want [1 2]", got, err)
	}
}

// Batches of several producers and single pushes, each producer's items
// in order, against a consumer on another goroutine (run with -race).
func TestBatchConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const producers, items = 4, 500
	q := mergequeue.New[[2]int](16)
	ps := make([]*mergequeue.Producer[[2]int], producers)
	for k := range ps {
		ps[k] = q.NewProducer()
	}
	for k, p := range ps {
		go func() {
			defer p.Done()
			for i := 0; i < items; {
				if k%2 == 0 && i%7 == 0 {
					mustPush(t, p, [2]int{k, i})
					i++
					continue
				}
				b := p.Batch(ctx)
				for n := 0; n < 1+i%37 && i < items; n++ {
					v, err := b.Next()
					if err != nil {
						t.Error(err)
						return
					}
					*v = [2]int{k, i}
					b.Commit()
					i++
				}
				b.Unlock()
			}
		}()
	}
	next := make([]int, producers)
	for v, err := range q.All(ctx) {
		if err != nil {
			break
		}
		if v[1] != next[v[0]] {
			t.Fatalf("producer %d: item %d after %d", v[0], v[1], next[v[0]]-1)
		}
		next[v[0]]++
	}
	for k, n := range next {
		if n != items {
			t.Fatalf("producer %d: %d items, want %d", k, n, items)
		}
	}
}
