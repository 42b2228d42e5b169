package mergequeue_test

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/floehq/floe/mergequeue"
)

// tagged identifies an item: its producer, its sequence number within that
// producer, and its batch's first sequence number and size.
type tagged struct {
	producer, seq, batchStart, batchLen int
}

// TestStress runs real producers against one consumer that mixes Pop and
// PopBatch, and checks that every item arrives exactly once, in its
// producer's order, with each batch contiguous.
func TestStress(t *testing.T) {
	t.Parallel()
	const producers, perProducer, capacity = 6, 3000, 7
	q := mergequeue.New[tagged](capacity)
	var wg sync.WaitGroup
	for i := range producers {
		p := q.NewProducer()
		wg.Go(func() {
			defer p.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 1))
			for seq := 0; seq < perProducer; {
				n := min(1+rng.IntN(5), perProducer-seq)
				batch := make([]tagged, n)
				for k := range batch {
					batch[k] = tagged{i, seq + k, seq, n}
				}
				if err := p.Push(t.Context(), batch...); err != nil {
					t.Errorf("producer %d: Push = %v", i, err)
					return
				}
				seq += n
			}
		})
	}

	next := make([]int, producers) // next expected seq per producer
	var got []tagged
	rng := rand.New(rand.NewPCG(99, 2))
	for {
		var err error
		if rng.IntN(2) == 0 {
			var v tagged
			if v, err = q.Pop(t.Context()); err == nil {
				got = append(got, v)
			}
		} else {
			got, err = q.PopBatch(t.Context(), got, rng.IntN(10))
		}
		if err == mergequeue.ErrDone {
			break
		}
		if err != nil {
			t.Fatalf("consumer: %v", err)
		}
	}
	wg.Wait()

	if len(got) != producers*perProducer {
		t.Fatalf("got %d items, want %d", len(got), producers*perProducer)
	}
	for i := 0; i < len(got); {
		v := got[i]
		if v.seq != next[v.producer] || v.seq != v.batchStart {
			t.Fatalf("item %d = %+v, want producer %d seq %d at a batch start", i, v, v.producer, next[v.producer])
		}
		for k := range v.batchLen {
			w := got[i+k]
			if w.producer != v.producer || w.seq != v.seq+k {
				t.Fatalf("item %d = %+v interleaves batch %+v", i+k, w, v)
			}
		}
		next[v.producer] += v.batchLen
		i += v.batchLen
	}
	if q.Len() != 0 {
		t.Fatalf("Len = %d after ErrDone", q.Len())
	}
}
