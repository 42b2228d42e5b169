package mergequeue_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/floehq/floe/mergequeue"
)

// TestArrivalOrder releases pushes from three producer goroutines one at a
// time through gates; the consumer must see exactly the release order.
func TestArrivalOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := mergequeue.New[string](0)
		gates := make([]chan string, 3)
		for i := range gates {
			gates[i] = make(chan string)
			p := q.NewProducer()
			go func() {
				defer p.Done()
				for v := range gates[i] {
					if err := p.Push(t.Context(), v); err != nil {
						t.Errorf("Push(%q) = %v", v, err)
					}
				}
			}()
		}
		script := []struct {
			producer int
			v        string
		}{
			{0, "a1"}, {1, "b1"}, {1, "b2"}, {2, "c1"}, {0, "a2"},
			{2, "c2"}, {1, "b3"}, {0, "a3"}, {0, "a4"}, {2, "c3"},
		}
		var want []string
		for _, s := range script {
			gates[s.producer] <- s.v
			synctest.Wait() // the push has landed
			want = append(want, s.v)
		}
		for _, g := range gates {
			close(g)
		}
		got, err := drain(t.Context(), q)
		if err != mergequeue.ErrDone {
			t.Fatalf("drain = %v, want ErrDone", err)
		}
		wantItems(t, got, want)
	})
}

// TestBatchesNotInterleaved pushes batches from several producers at once
// into a queue of capacity 1, so batches contend for every slot.
func TestBatchesNotInterleaved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const producers, batches, size = 4, 50, 3
		q := mergequeue.New[string](1)
		for i := range producers {
			p := q.NewProducer()
			go func() {
				defer p.Done()
				for b := range batches {
					batch := make([]string, size)
					for k := range batch {
						batch[k] = fmt.Sprintf("p%d/b%d", i, b)
					}
					if err := p.Push(t.Context(), batch...); err != nil {
						t.Errorf("Push = %v", err)
						return
					}
				}
			}()
		}
		got, err := drain(t.Context(), q)
		if err != mergequeue.ErrDone {
			t.Fatalf("drain = %v, want ErrDone", err)
		}
		if len(got) != producers*batches*size {
			t.Fatalf("got %d items, want %d", len(got), producers*batches*size)
		}
		for i := 0; i < len(got); i += size {
			for k := 1; k < size; k++ {
				if got[i+k] != got[i] {
					t.Fatalf("item %d = %q inside batch %q", i+k, got[i+k], got[i])
				}
			}
		}
	})
}

func TestDoneOnlyWhenAllDoneAndDrained(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		q := mergequeue.New[int](0)
		a, b := q.NewProducer(), q.NewProducer()
		mustPush(t, a, 1)
		a.Done()
		a.Done() // idempotent: must not count as b's Done
		if v, err := q.Pop(ctx); v != 1 || err != nil {
			t.Fatalf("Pop = %d, %v; want 1, nil", v, err)
		}

		popped := goPop(ctx, q)
		synctest.Wait()
		blocked(t, "Pop with b live", popped)
		mustPush(t, b, 2)
		if r := <-popped; r.v != 2 || r.err != nil {
			t.Fatalf("Pop = %d, %v; want 2, nil", r.v, r.err)
		}

		mustPush(t, b, 3)
		b.Done()
		if v, err := q.Pop(ctx); v != 3 || err != nil {
			t.Fatalf("Pop after last Done = %d, %v; want the queued 3", v, err)
		}
		for range 2 { // and it stays done
			if _, err := q.Pop(ctx); err != mergequeue.ErrDone {
				t.Fatalf("Pop = %v, want ErrDone", err)
			}
		}
	})
}

func TestLastDoneWakesWaitingPop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := mergequeue.New[int](0)
		p := q.NewProducer()
		popped := []<-chan result[int]{goPop(t.Context(), q), goPop(t.Context(), q)}
		synctest.Wait()
		p.Done()
		for _, ch := range popped {
			if r := <-ch; r.err != mergequeue.ErrDone {
				t.Fatalf("Pop = %v, want ErrDone", r.err)
			}
		}
	})
}

// TestLateRegistration: the driver registers a tool while live, finishes
// first, and the stream ends only after the tool.
func TestLateRegistration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		q := mergequeue.New[string](0)
		driver := q.NewProducer()
		var got []string
		consumed := make(chan error)
		go func() {
			var err error
			got, err = drain(ctx, q)
			consumed <- err
		}()

		release := make(chan struct{})
		go func() {
			defer driver.Done()
			tool := q.NewProducer()
			go func() {
				defer tool.Done()
				<-release
				tool.Push(ctx, "tool output")
			}()
			driver.Push(ctx, "request_begin", "request_end")
		}()
		synctest.Wait() // driver done; tool waits for its release
		blocked(t, "consumer with the tool live", consumed)

		close(release)
		if err := <-consumed; err != mergequeue.ErrDone {
			t.Fatalf("consumer = %v, want ErrDone", err)
		}
		wantItems(t, got, []string{"request_begin", "request_end", "tool output"})
		if err := q.NewProducer().Push(ctx, "late"); err != mergequeue.ErrClosed {
			t.Fatalf("Push by a producer registered after ErrDone = %v, want ErrClosed", err)
		}
	})
}

func TestBackpressure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		q := mergequeue.New[int](2)
		p := q.NewProducer()
		mustPush(t, p, 1, 2)

		pushed := goPush(ctx, p, 3, 4, 5)
		synctest.Wait()
		blocked(t, "Push into a full queue", pushed)

		if v, err := q.Pop(ctx); v != 1 || err != nil {
			t.Fatalf("Pop = %d, %v", v, err)
		}
		if err := <-pushed; err != nil {
			t.Fatalf("Push = %v", err)
		}
		if n := q.Len(); n != 4 { // the batch overshoots by len-1
			t.Fatalf("Len = %d, want 4", n)
		}
		p.Done()
		got, _ := drain(ctx, q)
		wantItems(t, got, []int{2, 3, 4, 5})
	})
}

// TestWakeupsPassOn checks that one change wakes as many waiters as it
// can satisfy, not just one.
func TestWakeupsPassOn(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"batch wakes every consumer", func(t *testing.T) {
			ctx := t.Context()
			q := mergequeue.New[int](0)
			p := q.NewProducer()
			pops := []<-chan result[int]{goPop(ctx, q), goPop(ctx, q), goPop(ctx, q)}
			synctest.Wait()
			mustPush(t, p, 1, 2, 3)
			sum := 0
			for _, ch := range pops {
				r := <-ch
				if r.err != nil {
					t.Fatalf("Pop = %v", r.err)
				}
				sum += r.v
			}
			if sum != 6 {
				t.Fatalf("consumers got items summing to %d, want 6", sum)
			}
			p.Done()
		}},
		{"PopBatch wakes every producer it made room for", func(t *testing.T) {
			ctx := t.Context()
			q := mergequeue.New[int](2)
			p := q.NewProducer()
			mustPush(t, p, 1, 2)
			pushes := []<-chan error{goPush(ctx, p, 3), goPush(ctx, p, 4)}
			synctest.Wait()
			if got, err := q.PopBatch(ctx, nil, 0); len(got) != 2 || err != nil {
				t.Fatalf("PopBatch = %v, %v", got, err)
			}
			for _, ch := range pushes {
				if err := <-ch; err != nil {
					t.Fatalf("Push = %v", err)
				}
			}
			p.Done()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { synctest.Test(t, tt.run) })
	}
}

func TestCancelBlockedPush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := mergequeue.New[int](1)
		p := q.NewProducer()
		mustPush(t, p, 1)

		cctx, cancel := context.WithCancel(t.Context())
		cancelled := goPush(cctx, p, 2)
		other := goPush(t.Context(), p, 3)
		synctest.Wait()
		blocked(t, "Push", cancelled)
		cancel()
		if err := <-cancelled; err != context.Canceled {
			t.Fatalf("cancelled Push = %v, want context.Canceled", err)
		}
		synctest.Wait()
		blocked(t, "Push with a live context", other)

		if v, _ := q.Pop(t.Context()); v != 1 {
			t.Fatalf("Pop = %d, want 1", v)
		}
		if err := <-other; err != nil {
			t.Fatalf("Push = %v", err)
		}
		p.Done()
		got, _ := drain(t.Context(), q)
		wantItems(t, got, []int{3}) // the cancelled batch never landed
	})
}

func TestCancelBlockedPop(t *testing.T) {
	tests := []struct {
		name    string
		ctx     func(context.Context) (context.Context, context.CancelFunc)
		wantErr error
	}{
		{"cancel", context.WithCancel, context.Canceled},
		{"deadline", func(ctx context.Context) (context.Context, context.CancelFunc) {
			return context.WithTimeout(ctx, time.Minute) // fake time inside the bubble
		}, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := mergequeue.New[int](0)
				p := q.NewProducer()
				ctx, cancel := tt.ctx(t.Context())
				defer cancel()
				popped := goPop(ctx, q)
				batch := make(chan []int, 1)
				go func() {
					got, _ := q.PopBatch(ctx, nil, 0)
					batch <- got
				}()
				synctest.Wait()
				blocked(t, "Pop", popped)
				if tt.wantErr == context.Canceled {
					cancel()
				} // else: the deadline passes once everyone is blocked
				if r := <-popped; r.err != tt.wantErr {
					t.Fatalf("Pop = %v, want %v", r.err, tt.wantErr)
				}
				if got := <-batch; got != nil {
					t.Fatalf("PopBatch = %v, want nothing", got)
				}
				// The queue still works for a consumer with a live context.
				mustPush(t, p, 7)
				p.Done()
				got, err := drain(t.Context(), q)
				if err != mergequeue.ErrDone {
					t.Fatalf("drain = %v", err)
				}
				wantItems(t, got, []int{7})
			})
		})
	}
}

func TestCloseWakesEveryone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		consumers := mergequeue.New[int](0)
		consumers.NewProducer()
		producers := mergequeue.New[int](1)
		a, b := producers.NewProducer(), producers.NewProducer()
		mustPush(t, a, 1)

		pops := []<-chan result[int]{goPop(ctx, consumers), goPop(ctx, consumers)}
		pushes := []<-chan error{goPush(ctx, a, 2), goPush(ctx, b, 3)}
		synctest.Wait()
		consumers.Close()
		producers.Close()
		for _, ch := range pops {
			if r := <-ch; r.err != mergequeue.ErrClosed {
				t.Fatalf("Pop = %v, want ErrClosed", r.err)
			}
		}
		for _, ch := range pushes {
			if err := <-ch; err != mergequeue.ErrClosed {
				t.Fatalf("Push = %v, want ErrClosed", err)
			}
		}
		if n := producers.Len(); n != 0 {
			t.Fatalf("Len after Close = %d, want 0 (items dropped)", n)
		}
	})
}

func TestDoneFailsOwnBlockedPush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := mergequeue.New[int](1)
		p := q.NewProducer()
		mustPush(t, p, 1)
		pushed := goPush(t.Context(), p, 2)
		synctest.Wait()
		p.Done()
		if err := <-pushed; err != mergequeue.ErrClosed {
			t.Fatalf("Push = %v, want ErrClosed", err)
		}
		got, _ := drain(t.Context(), q)
		wantItems(t, got, []int{1})
	})
}
