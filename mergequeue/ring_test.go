package mergequeue

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// checkRing compares r with the model and checks that every free slot is
// zero and that the buffer stays within its bound.
func checkRing(t *testing.T, r *ring[string], model []string, bound int) {
	t.Helper()
	if r.n != len(model) {
		t.Fatalf("n = %d, want %d", r.n, len(model))
	}
	if len(r.buf) > bound {
		t.Fatalf("buffer has %d slots, bound is %d", len(r.buf), bound)
	}
	for i := range r.buf {
		off := i - r.head
		if off < 0 {
			off += len(r.buf)
		}
		if off < r.n {
			if r.buf[i] != model[off] {
				t.Fatalf("slot %d = %q, want %q", i, r.buf[i], model[off])
			}
		} else if r.buf[i] != "" {
			t.Fatalf("free slot %d still holds %q", i, r.buf[i])
		}
	}
}

func TestRingAgainstModel(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ limit, maxBatch int }{{1, 1}, {3, 4}, {8, 1}, {10, 7}, {64, 3}} {
		t.Run(fmt.Sprintf("limit=%d,batch≤%d", tt.limit, tt.maxBatch), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(uint64(tt.limit), uint64(tt.maxBatch)))
			var r ring[string]
			var model []string
			bound := tt.limit + tt.maxBatch - 1
			next := 0
			for range 5000 {
				switch op := rng.IntN(3); {
				case op == 0 && r.n < tt.limit:
					batch := make([]string, 1+rng.IntN(tt.maxBatch))
					for i := range batch {
						batch[i] = fmt.Sprint(next)
						next++
					}
					r.push(batch, tt.limit)
					model = append(model, batch...)
				case op == 1 && r.n > 0:
					if v := r.pop(); v != model[0] {
						t.Fatalf("pop = %q, want %q", v, model[0])
					}
					model = slices.Delete(model, 0, 1)
				case op == 2 && r.n > 0:
					k := 1 + rng.IntN(r.n)
					got := r.popN([]string{"prefix"}, k)
					if !slices.Equal(got[1:], model[:k]) || got[0] != "prefix" {
						t.Fatalf("popN(%d) = %v, want prefix + %v", k, got, model[:k])
					}
					model = slices.Delete(model, 0, k)
				}
				checkRing(t, &r, model, bound)
			}
		})
	}
}

func TestRingGrowsOnlyAsNeeded(t *testing.T) {
	t.Parallel()
	var r ring[string]
	r.push([]string{"a"}, 1000)
	if len(r.buf) != minRing {
		t.Fatalf("first push allocated %d slots, want %d", len(r.buf), minRing)
	}
	r.push(make([]string, 20), 4) // overshoot of a big batch
	if len(r.buf) != 21 {
		t.Fatalf("buffer = %d slots, want exactly 21", len(r.buf))
	}
	r.reset()
	if r.buf != nil || r.n != 0 {
		t.Fatal("reset kept the buffer")
	}
}
