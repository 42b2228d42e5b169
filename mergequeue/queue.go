package mergequeue

import (
	"context"
	"errors"
	"iter"
	"sync"

	"github.com/floehq/floe/internal/lock"
)

// DefaultCapacity is the backpressure bound of a [Queue] made by [New] with a
// capacity ≤ 0, and of the zero Queue.
const DefaultCapacity = 256

var (
	// ErrClosed is returned by every blocking call after [Queue.Close], and by
	// [Producer.Push] after [Producer.Done].
	ErrClosed = errors.New("mergequeue: closed")
	// ErrDone is returned by [Queue.Pop] and [Queue.PopBatch] when every
	// producer has finished and the queue is drained: the stream has ended.
	ErrDone = errors.New("mergequeue: done")
)

// Queue is a many-producer, one-consumer FIFO queue. Producers register
// with [Queue.NewProducer] and push with [Producer.Push]; the consumer pops
// with [Queue.Pop], [Queue.PopBatch] or [Queue.All] until [ErrDone].
//
// A Queue is safe for concurrent use by multiple goroutines. The zero Queue
// is ready to use with [DefaultCapacity]. A Queue must not be copied after
// first use.
type Queue[T any] struct {
	mu       lock.Mutex
	items    ring[T]
	capacity int
	live     int       // producers registered and not Done
	popWait  int       // goroutines waiting in Pop or PopBatch
	pushWait int       // goroutines waiting in Push
	notEmpty sync.Cond // an item arrived, the last producer finished, or Close
	notFull  sync.Cond // room appeared, a producer finished, or Close
	ended    bool      // Pop has returned ErrDone
	closed   bool

	// popWoken and pushWoken count the waiters signalled that have not
	// returned from Wait yet: a push while a waiter is being woken does
	// not signal it again.
	popWoken, pushWoken int

	// wakePoppers and wakePushers run from context.AfterFunc when a
	// waiter's context is cancelled; each waiter then rechecks its own
	// context. Made once, so a wait allocates only what AfterFunc does.
	wakePoppers, wakePushers func()
}

// New returns an empty Queue whose producers block while capacity or more
// items are queued. A capacity ≤ 0 means [DefaultCapacity]. The buffer
// grows on demand, so a large capacity costs memory only when it is used.
func New[T any](capacity int) *Queue[T] {
	if capacity <= 0 {
		capacity = DefaultCapacity
	}
	return &Queue[T]{capacity: capacity}
}

// lock acquires q.mu and completes the zero Queue on first use.
func (q *Queue[T]) lock() {
	q.mu.Lock()
	if q.notEmpty.L == nil {
		q.notEmpty.L, q.notFull.L = &q.mu, &q.mu
		q.wakePoppers = func() { q.broadcast(&q.notEmpty, &q.popWoken, &q.popWait) }
		q.wakePushers = func() { q.broadcast(&q.notFull, &q.pushWoken, &q.pushWait) }
		if q.capacity <= 0 {
			q.capacity = DefaultCapacity
		}
	}
}

// Pop removes and returns the oldest item. It blocks while the queue is
// empty and some producer is live. It returns [ErrDone] once every producer
// is done and the queue is drained, [ErrClosed] after [Queue.Close], and
// ctx.Err() if ctx is cancelled while it waits; a queued item is returned
// even if ctx is already cancelled.
//
// Pop is safe for concurrent use; with several consumers each item still
// goes to exactly one of them.
func (q *Queue[T]) Pop(ctx context.Context) (T, error) {
	q.lock()
	if q.items.n > 0 && !q.closed { // fast path: no wait, no defer
		v := q.items.pop()
		q.passOn()
		q.mu.Unlock()
		return v, nil
	}
	defer q.mu.Unlock()
	if err := q.awaitItems(ctx); err != nil {
		var zero T
		return zero, err
	}
	v := q.items.pop()
	q.passOn()
	return v, nil
}

// PopBatch is like [Queue.Pop] but appends every queued item, up to max
// (no limit if max ≤ 0) and at least one, to dst under one lock acquisition,
// and returns the extended slice. On error it returns dst unchanged. Reusing
// dst[:0] across calls makes the consumer side allocation-free.
//
// PopBatch is safe for concurrent use.
func (q *Queue[T]) PopBatch(ctx context.Context, dst []T, max int) ([]T, error) {
	q.lock()
	defer q.mu.Unlock()
	if err := q.awaitItems(ctx); err != nil {
		return dst, err
	}
	k := q.items.n
	if max > 0 && max < k {
		k = max
	}
	dst = q.items.popN(dst, k)
	q.passOn()
	return dst, nil
}

// Swap is [Queue.PopBatch] without copies: it waits like Pop, then returns
// every queued item as a slice that was the queue's buffer and hands buf
// (a slice Swap returned earlier, or nil) to the producers as the new one.
// The returned slice is the caller's until it passes it to the next Swap;
// producers overwrite what it still holds then, so clear it first if its
// items must not stay reachable. On error it returns buf unchanged.
//
// A consumer that takes items only with Swap never makes the queue copy
// an item. Swap is safe for concurrent use, but each buffer must have one
// owner.
func (q *Queue[T]) Swap(ctx context.Context, buf []T) ([]T, error) {
	q.lock()
	defer q.mu.Unlock()
	if err := q.awaitItems(ctx); err != nil {
		return buf, err
	}
	out := q.items.take(buf)
	q.passOn()
	return out, nil
}

// awaitItems waits until an item is queued, or returns why none will come.
// It is called with q.mu held.
func (q *Queue[T]) awaitItems(ctx context.Context) error {
	var stop func() bool
	defer func() {
		if stop != nil {
			stop()
		}
	}()
	for {
		switch {
		case q.closed:
			return ErrClosed
		case q.items.n > 0:
			return nil
		case q.live == 0:
			q.ended = true
			q.passOn() // the next waiter ends too
			return ErrDone
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if stop == nil && ctx.Done() != nil {
			stop = context.AfterFunc(ctx, q.wakePoppers)
		}
		q.popWait++
		q.notEmpty.Wait()
		q.popWait--
		if q.popWoken > 0 {
			q.popWoken--
		}
	}
}

// passOn wakes one waiter on each side whose condition now holds. Every
// call that changes the queue ends with it, and every woken waiter that
// proceeds calls it again, so a wake-up is handed on instead of lost. It
// signals only when someone waits and is called with q.mu held.
func (q *Queue[T]) passOn() {
	if q.popWait > q.popWoken && (q.items.n > 0 || q.live == 0) {
		q.popWoken++
		q.notEmpty.Signal()
	}
	if q.pushWait > q.pushWoken && q.items.n < q.capacity {
		q.pushWoken++
		q.notFull.Signal()
	}
}

// broadcast wakes every waiter on c, whose woken and waiting counts are
// given.
func (q *Queue[T]) broadcast(c *sync.Cond, woken, waiting *int) {
	q.mu.Lock()
	c.Broadcast()
	*woken = *waiting
	q.mu.Unlock()
}

// Len returns the number of items currently queued. It is safe for
// concurrent use; the answer may be stale by the time it is used.
func (q *Queue[T]) Len() int {
	q.lock()
	n := q.items.n
	q.mu.Unlock()
	return n
}

// Reuse gives an empty queue buf (its full capacity used) as its buffer,
// so a queue made for a short stream need not grow one from nothing; a
// queue that already holds items or a buffer keeps its own. buf's items
// need not be zero: as in a buffer given back through [Queue.Swap], a slot
// is overwritten before it is read (PushFunc's fn may see a stale item).
// buf must have no other owner from then on. Reuse is safe for concurrent
// use.
func (q *Queue[T]) Reuse(buf []T) {
	q.lock()
	if q.items.n == 0 && len(q.items.buf) == 0 && cap(buf) > 0 {
		q.items.buf, q.items.head = buf[:cap(buf)], 0
	}
	q.mu.Unlock()
}

// Release takes the buffer back from a drained queue, for [Queue.Reuse] by
// another queue: it returns nil while items are queued or producers are
// live. The queue keeps working and grows a new buffer if it is pushed to
// again. Release is safe for concurrent use.
func (q *Queue[T]) Release() []T {
	q.lock()
	var buf []T
	if q.items.n == 0 && q.live == 0 {
		buf = q.items.buf
		q.items.reset()
	}
	q.mu.Unlock()
	return buf
}

// Close tells the queue that its consumer is gone. It drops the queued
// items and wakes every waiter; from then on Push, Pop and PopBatch return
// [ErrClosed]. Close is idempotent and safe for concurrent use.
func (q *Queue[T]) Close() {
	q.lock()
	q.closed = true
	q.items.reset()
	q.notEmpty.Broadcast()
	q.notFull.Broadcast()
	q.popWoken, q.pushWoken = q.popWait, q.pushWait
	q.mu.Unlock()
}

// All returns an iterator over the items in arrival order, popping each
// with [Queue.Pop]. It ends after the last item once every producer is done.
// Any other error (cancellation of ctx, [ErrClosed]) is yielded once with a
// zero item, and then the iteration ends. Breaking out of the loop leaves
// the remaining items queued.
//
// The iterator is safe for concurrent use, as Pop is.
func (q *Queue[T]) All(ctx context.Context) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for {
			v, err := q.Pop(ctx)
			if err == ErrDone {
				return
			}
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			if !yield(v, nil) {
				return
			}
		}
	}
}
