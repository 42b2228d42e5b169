package mergequeue_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/floehq/floe/mergequeue"
)

func TestPopSequential(t *testing.T) {
	t.Parallel()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name    string
		run     func(q *mergequeue.Queue[int]) // pushes and Dones before popping
		ctx     context.Context
		want    []int
		wantErr error
	}{
		{
			name:    "no producers",
			run:     func(q *mergequeue.Queue[int]) {},
			wantErr: mergequeue.ErrDone,
		},
		{
			name: "one producer drained before done",
			run: func(q *mergequeue.Queue[int]) {
				p := q.NewProducer()
				p.Push(context.Background(), 1, 2, 3)
				p.Done()
			},
			want:    []int{1, 2, 3},
			wantErr: mergequeue.ErrDone,
		},
		{
			name: "arrival order across producers",
			run: func(q *mergequeue.Queue[int]) {
				a, b := q.NewProducer(), q.NewProducer()
				ctx := context.Background()
				a.Push(ctx, 1)
				b.Push(ctx, 2, 3)
				a.Push(ctx, 4)
				b.Done()
				a.Push(ctx, 5)
				a.Done()
			},
			want:    []int{1, 2, 3, 4, 5},
			wantErr: mergequeue.ErrDone,
		},
		{
			name: "queued items win over a cancelled context",
			run: func(q *mergequeue.Queue[int]) {
				p := q.NewProducer()
				p.Push(cancelled, 7, 8) // need not wait, so it succeeds
				p.Done()
			},
			ctx:     cancelled,
			want:    []int{7, 8},
			wantErr: mergequeue.ErrDone,
		},
		{
			name: "cancelled context with nothing queued",
			run: func(q *mergequeue.Queue[int]) {
				q.NewProducer()
			},
			ctx:     cancelled,
			wantErr: context.Canceled,
		},
		{
			name: "closed with items queued",
			run: func(q *mergequeue.Queue[int]) {
				q.NewProducer().Push(context.Background(), 1, 2)
				q.Close()
			},
			wantErr: mergequeue.ErrClosed,
		},
		{
			name: "empty push adds nothing",
			run: func(q *mergequeue.Queue[int]) {
				p := q.NewProducer()
				p.Push(context.Background())
				p.Done()
			},
			wantErr: mergequeue.ErrDone,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			q := mergequeue.New[int](16)
			tt.run(q)
			ctx := tt.ctx
			if ctx == nil {
				ctx = t.Context()
			}
			got, err := drain(ctx, q)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("final error = %v, want %v", err, tt.wantErr)
			}
			wantItems(t, got, tt.want)
			if n := q.Len(); n != 0 {
				t.Fatalf("Len after drain = %d, want 0", n)
			}
		})
	}
}

func TestPopBatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		queued []int
		max    int
		want   []int // appended after the prefix
		left   int
	}{
		{name: "all", queued: []int{1, 2, 3}, max: 0, want: []int{1, 2, 3}},
		{name: "negative max means all", queued: []int{1, 2}, max: -1, want: []int{1, 2}},
		{name: "limited", queued: []int{1, 2, 3}, max: 2, want: []int{1, 2}, left: 1},
		{name: "one", queued: []int{1, 2, 3}, max: 1, want: []int{1}, left: 2},
		{name: "max above len", queued: []int{1}, max: 10, want: []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			q := mergequeue.New[int](8)
			p := q.NewProducer()
			mustPush(t, p, tt.queued...)
			dst := []int{-1}
			dst, err := q.PopBatch(t.Context(), dst, tt.max)
			if err != nil {
				t.Fatalf("PopBatch = %v", err)
			}
			wantItems(t, dst, append([]int{-1}, tt.want...))
			if n := q.Len(); n != tt.left {
				t.Fatalf("Len = %d, want %d", n, tt.left)
			}
		})
	}
}

func TestPopBatchErrorKeepsDst(t *testing.T) {
	t.Parallel()
	q := mergequeue.New[int](1)
	dst, err := q.PopBatch(t.Context(), []int{9}, 0)
	if err != mergequeue.ErrDone {
		t.Fatalf("PopBatch = %v, want ErrDone", err)
	}
	wantItems(t, dst, []int{9})
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		do   func(t *testing.T, q *mergequeue.Queue[int]) error
	}{
		{"push after done", func(t *testing.T, q *mergequeue.Queue[int]) error {
			p := q.NewProducer()
			p.Done()
			return p.Push(t.Context(), 1)
		}},
		{"empty push after done", func(t *testing.T, q *mergequeue.Queue[int]) error {
			p := q.NewProducer()
			p.Done()
			return p.Push(t.Context())
		}},
		{"push after close", func(t *testing.T, q *mergequeue.Queue[int]) error {
			p := q.NewProducer()
			q.Close()
			return p.Push(t.Context(), 1)
		}},
		{"register after close", func(t *testing.T, q *mergequeue.Queue[int]) error {
			q.Close()
			return q.NewProducer().Push(t.Context(), 1)
		}},
		{"register after ErrDone", func(t *testing.T, q *mergequeue.Queue[int]) error {
			if _, err := q.Pop(t.Context()); err != mergequeue.ErrDone {
				t.Fatalf("Pop = %v, want ErrDone", err)
			}
			p := q.NewProducer()
			defer p.Done()
			return p.Push(t.Context(), 1)
		}},
		{"pop after close", func(t *testing.T, q *mergequeue.Queue[int]) error {
			q.NewProducer()
			q.Close()
			q.Close() // idempotent
			_, err := q.Pop(t.Context())
			return err
		}},
		{"pop batch after close", func(t *testing.T, q *mergequeue.Queue[int]) error {
			q.Close()
			_, err := q.PopBatch(t.Context(), nil, 0)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			q := mergequeue.New[int](2)
			if err := tt.do(t, q); err != mergequeue.ErrClosed {
				t.Fatalf("got %v, want ErrClosed", err)
			}
			if n := q.Len(); n != 0 {
				t.Fatalf("Len = %d, want 0", n)
			}
		})
	}
}

func TestZeroQueue(t *testing.T) {
	t.Parallel()
	var q mergequeue.Queue[string]
	p := q.NewProducer()
	for range mergequeue.DefaultCapacity {
		mustPush(t, p, "x") // fills to the default bound without blocking
	}
	p.Done()
	got, err := drain(t.Context(), &q)
	if err != mergequeue.ErrDone || len(got) != mergequeue.DefaultCapacity {
		t.Fatalf("drain = %d items, %v; want %d, ErrDone", len(got), err, mergequeue.DefaultCapacity)
	}
}

func TestAllBreakLeavesItems(t *testing.T) {
	t.Parallel()
	q := mergequeue.New[int](0)
	p := q.NewProducer()
	mustPush(t, p, 1, 2, 3)
	p.Done()
	for v, err := range q.All(t.Context()) {
		if err != nil || v != 1 {
			t.Fatalf("first item = %v, %v", v, err)
		}
		break
	}
	got, err := drain(t.Context(), q)
	if err != mergequeue.ErrDone {
		t.Fatalf("drain = %v", err)
	}
	wantItems(t, got, []int{2, 3})
}

// Swap hands over the queue's buffer: every queued item in order, without
// copies, and the buffer given back is reused by later pushes; PushFunc
// fills a slot in place and keeps the order and the end of stream of Push.
func TestSwapPushFunc(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := mergequeue.New[int](4)
	a, b := q.NewProducer(), q.NewProducer()
	a.Push(ctx, 1)
	b.PushFunc(ctx, func(v *int) { *v = 2 })
	a.Push(ctx, 3, 4)
	got, err := q.Swap(ctx, nil)
	if err != nil || !slices.Equal(got, []int{1, 2, 3, 4}) {
		t.Fatalf("Swap = %v, %v; want [1 2 3 4]", got, err)
	}
	first := &got[0]
	b.PushFunc(ctx, func(v *int) { *v = 5 })
	b.Push(ctx, 6)
	again, err := q.Swap(ctx, got)
	if err != nil || !slices.Equal(again, []int{5, 6}) {
		t.Fatalf("second Swap = %v, %v; want [5 6]", again, err)
	}
	// A mixed consumer: Pop leaves the ring's head off zero, so Swap
	// copies into the buffer it was given.
	a.Push(ctx, 7, 8, 9)
	if v, _ := q.Pop(ctx); v != 7 {
		t.Fatalf("Pop = %d, want 7", v)
	}
	third, err := q.Swap(ctx, again)
	if err != nil || !slices.Equal(third, []int{8, 9}) {
		t.Fatalf("Swap after Pop = %v, %v; want [8 9]", third, err)
	}
	// The first buffer went back to the producers: the next items land in it.
	a.Push(ctx, 10)
	fourth, _ := q.Swap(ctx, third)
	if len(fourth) != 1 || fourth[0] != 10 || &fourth[0] != first {
		t.Fatalf("the buffer handed back was not reused: %v", fourth)
	}
	a.Done()
	b.Done()
	if _, err := q.Swap(ctx, fourth); err != mergequeue.ErrDone {
		t.Fatalf("Swap at the end = %v, want ErrDone", err)
	}
	if err := a.PushFunc(ctx, func(*int) { t.Fatal("fill called after Done") }); err != mergequeue.ErrClosed {
		t.Fatalf("PushFunc after Done = %v, want ErrClosed", err)
	}
}

// PushFunc blocks on a full queue like Push and gives up when its context
// ends, without calling fill.
func TestPushFuncBackpressure(t *testing.T) {
	t.Parallel()
	q := mergequeue.New[int](1)
	p := q.NewProducer()
	p.Push(context.Background(), 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- p.PushFunc(ctx, func(*int) { t.Error("fill called on a full queue") }) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("PushFunc = %v, want context.Canceled", err)
	}
}

// TestReuseRelease checks that a drained queue's buffers move to the next
// queue: with two buffers handed around, a stream of any length within
// the capacity allocates no buffer, and what a reused buffer held before
// (its slots are not cleared) never comes out of the next queue.
func TestReuseRelease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	spare := [2][]*int{make([]*int, 4), make([]*int, 4)}
	same := func(a, b []*int) bool { return cap(a) > 0 && cap(b) > 0 && &a[:1][0] == &b[:1][0] }
	for round := 0; round < 3; round++ {
		q := mergequeue.New[*int](4)
		q.Reuse(spare[0])
		buf := spare[1]
		p := q.NewProducer()
		for i := 0; i < 3; i++ {
			v := new(int)
			*v = i
			if err := p.Push(ctx, v); err != nil {
				t.Fatal(err)
			}
		}
		p.Done()
		got := 0
		for {
			var err error
			buf, err = q.Swap(ctx, buf)
			if errors.Is(err, mergequeue.ErrDone) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if !same(buf, spare[0]) && !same(buf, spare[1]) {
				t.Errorf("round %d: Swap returned a buffer that is neither of the reused ones", round)
			}
			got += len(buf)
		}
		if got != 3 {
			t.Fatalf("round %d: got %d items, want 3", round, got)
		}
		own := q.Release()
		if own == nil {
			t.Fatalf("round %d: Release of a drained queue gave nil", round)
		}
		if q.Release() != nil {
			t.Fatalf("round %d: a second Release gave the buffer again", round)
		}
		spare = [2][]*int{own, buf}
	}
	q := mergequeue.New[*int](4)
	stale := spare[0][:cap(spare[0])]
	for i := range stale {
		stale[i] = new(int)
	}
	q.Reuse(spare[0])
	p := q.NewProducer()
	mine := new(int)
	if err := p.Push(ctx, mine); err != nil {
		t.Fatal(err)
	}
	if got := q.Len(); got != 1 {
		t.Fatalf("a queue given a buffer of stale items holds %d items after one Push, want 1", got)
	}
	if q.Release() != nil {
		t.Fatal("Release gave away the buffer of a queue that holds items")
	}
	q.Reuse(make([]*int, 8)) // a queue with a buffer keeps it
	if v, err := q.Pop(ctx); err != nil || v != mine {
		t.Fatalf("Pop after a refused Reuse: %v, %v, want the pushed item", v, err)
	}
}

// PushFuncIf queues what fill accepts and nothing of what it declines: a
// declined slot is given back, so the next item takes it and the order
// and the count stay those of the accepted items. Like PushFunc, it does
// not call fill once the producer is done.
func TestPushFuncIf(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := mergequeue.New[int](3)
	p := q.NewProducer()
	for i := 1; i <= 3; i++ {
		ok, err := p.PushFuncIf(ctx, func(v *int) bool {
			if i%2 == 0 {
				*v = -i // written, then declined: never seen
				return false
			}
			*v = i
			return true
		})
		if err != nil || ok != (i%2 == 1) {
			t.Fatalf("PushFuncIf(%d) = %v, %v", i, ok, err)
		}
	}
	if n := q.Len(); n != 2 {
		t.Fatalf("Len = %d, want 2", n)
	}
	if ok, err := p.PushFuncIf(ctx, func(v *int) bool { *v = 5; return true }); !ok || err != nil {
		t.Fatalf("PushFuncIf(5) = %v, %v", ok, err)
	}
	// The queue holds its capacity: a fourth accepted item would wait,
	// while fill is not called for it.
	ctx2, cancel := context.WithCancel(ctx)
	cancel()
	if ok, err := p.PushFuncIf(ctx2, func(*int) bool { t.Error("fill called on a full queue"); return true }); ok || !errors.Is(err, context.Canceled) {
		t.Fatalf("PushFuncIf on a full queue = %v, %v; want false, context.Canceled", ok, err)
	}
	got, err := q.Swap(ctx, nil)
	if err != nil || !slices.Equal(got, []int{1, 3, 5}) {
		t.Fatalf("Swap = %v, %v; want [1 3 5]", got, err)
	}
	p.Done()
	if ok, err := p.PushFuncIf(ctx, func(*int) bool { t.Error("fill called after Done"); return true }); ok || err != mergequeue.ErrClosed {
		t.Fatalf("PushFuncIf after Done = %v, %v; want false, ErrClosed", ok, err)
	}
	if _, err := q.Swap(ctx, got); err != mergequeue.ErrDone {
		t.Fatalf("Swap at the end = %v, want ErrDone", err)
	}
}

// Locked runs its function under the queue's lock whatever the queue's
// state: full, or after Done and Close. State that only fill functions
// and Locked touch is then guarded by that lock (the race detector checks
// the pair below).
func TestLocked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := mergequeue.New[int](1)
	p := q.NewProducer()
	shared := 0 // touched only under the queue's lock
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 100; i++ {
			p.Locked(func() { shared++ })
		}
	}()
	for i := 0; i < 100; i++ {
		if ok, err := p.PushFuncIf(ctx, func(v *int) bool { shared++; *v = i; return true }); !ok || err != nil {
			t.Fatalf("PushFuncIf = %v, %v", ok, err)
		}
		if v, err := q.Pop(ctx); err != nil || v != i {
			t.Fatalf("Pop = %v, %v; want %d", v, err, i)
		}
	}
	<-done
	p.Push(ctx, 1) // full
	ran := 0
	p.Locked(func() { ran++ })
	p.Done()
	q.Close()
	p.Locked(func() { ran++ })
	if shared != 200 || ran != 2 {
		t.Fatalf("shared = %d, ran = %d; want 200 and 2", shared, ran)
	}
}

// A fill that panics leaves nothing in the queue and the lock free: the
// panic reaches PushFuncIf's caller, and the queue goes on.
func TestPushFuncIfPanic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := mergequeue.New[int](2)
	p := q.NewProducer()
	p.Push(ctx, 1)
	func() {
		defer func() {
			if v := recover(); v != "fill" {
				t.Fatalf("recovered %v, want the fill's panic", v)
			}
		}()
		p.PushFuncIf(ctx, func(v *int) bool { *v = -1; panic("fill") })
	}()
	if ok, err := p.PushFuncIf(ctx, func(v *int) bool { *v = 2; return true }); !ok || err != nil {
		t.Fatalf("PushFuncIf after a panic = %v, %v", ok, err)
	}
	p.Done()
	got, err := q.Swap(ctx, nil)
	if err != nil || !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("Swap = %v, %v; want [1 2]", got, err)
	}
}

// A producer the caller holds, registered with Register, is a producer as
// NewProducer makes one: the consumer waits for it until Done, and after
// the queue has ended it is done at once.
func TestRegister(t *testing.T) {
	t.Parallel()
	type holder struct {
		name string
		prod mergequeue.Producer[string]
	}
	q := mergequeue.New[string](4)
	var a, b holder
	q.Register(&a.prod)
	q.Register(&b.prod)
	mustPush(t, &a.prod, "a1")
	a.prod.Done()
	if v, err := q.Pop(t.Context()); err != nil || v != "a1" {
		t.Fatalf("Pop = %q, %v; want a1", v, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := q.Pop(ctx); !errors.Is(err, context.Canceled) { // b is live: Pop waits
		t.Fatalf("Pop with a live registered producer = %v, want it to wait", err)
	}
	mustPush(t, &b.prod, "b1")
	b.prod.Done()
	got, err := drain(t.Context(), q)
	if err != mergequeue.ErrDone || !slices.Equal(got, []string{"b1"}) {
		t.Fatalf("drain = %q, %v; want [b1], ErrDone", got, err)
	}
	var late holder
	q.Register(&late.prod)
	if err := late.prod.Push(t.Context(), "x"); err != mergequeue.ErrClosed {
		t.Fatalf("Push of a producer registered after the end = %v, want ErrClosed", err)
	}
}
