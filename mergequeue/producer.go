package mergequeue

import "context"

// Producer is one source of items for a [Queue]: the LLM stream's driver, a
// tool. Items of one Producer keep their order; items of different
// Producers interleave by arrival. A Producer is safe for concurrent use,
// though one goroutine usually owns it.
type Producer[T any] struct {
	_    [0]func() // not comparable: no equality code for each T
	q    *Queue[T]
	done bool // guarded by q.mu
}

// NewProducer registers a live producer; the consumer keeps waiting for it
// until its [Producer.Done]. Registering while another producer is live
// always works, so a live producer may register more (the driver registers
// a tool). After Pop has returned [ErrDone], or after [Queue.Close], it
// returns a producer whose Push returns [ErrClosed]: register the first
// producer before the consumer starts popping.
//
// NewProducer is safe for concurrent use.
func (q *Queue[T]) NewProducer() *Producer[T] {
	p := new(Producer[T])
	q.Register(p)
	return p
}

// Register is [Queue.NewProducer] for a Producer the caller allocates, in a
// larger value of its own (one allocation fewer a producer). p must be a
// zero Producer, and is not copied once registered. Register is safe for
// concurrent use.
func (q *Queue[T]) Register(p *Producer[T]) {
	p.q = q
	q.lock()
	if q.ended || q.closed {
		p.done = true
	} else {
		q.live++
	}
	q.mu.Unlock()
}

// Push appends vs to the queue contiguously and atomically: no other
// producer's item lands between them. It blocks while the queue holds
// capacity or more items; a batch is admitted as soon as there is room for
// one item, so a batch may overshoot the bound by len(vs)-1. Push copies
// vs and does not keep it.
//
// Push returns [ErrClosed] after [Queue.Close] or [Producer.Done], and
// ctx.Err() if ctx is cancelled while it waits; a Push that need not wait
// succeeds even if ctx is already cancelled. Push is safe for concurrent use.
func (p *Producer[T]) Push(ctx context.Context, vs ...T) error {
	q := p.q
	q.lock()
	if q.items.n < q.capacity && !q.closed && !p.done { // fast path: no wait, no defer
		q.items.push(vs, q.capacity)
		q.passOn()
		q.mu.Unlock()
		return nil
	}
	defer q.mu.Unlock()
	if err := p.waitRoom(ctx, len(vs) == 0); err != nil || len(vs) == 0 {
		return err
	}
	q.items.push(vs, q.capacity)
	q.passOn()
	return nil
}

// PushFunc appends one item that fill writes in place, under the queue's
// lock: it is Push of one item without copying a large T through a
// variadic argument. fill must only write the slot it is given (zeroed, or
// holding an item already taken by the consumer: it must set every field)
// and must not call the queue. PushFunc waits, fails and admits exactly
// like Push; fill is not called when it fails.
func (p *Producer[T]) PushFunc(ctx context.Context, fill func(*T)) error {
	q := p.q
	q.lock()
	if q.items.n < q.capacity && !q.closed && !p.done { // fast path: no wait, no defer
		fill(q.items.slot(q.capacity))
		q.passOn()
		q.mu.Unlock()
		return nil
	}
	defer q.mu.Unlock()
	if err := p.waitRoom(ctx, false); err != nil {
		return err
	}
	fill(q.items.slot(q.capacity))
	q.passOn()
	return nil
}

// PushFuncIf is [Producer.PushFunc] whose fill may decline: when fill
// returns false the slot is not queued, and PushFuncIf reports false.
// It waits and fails like PushFunc (fill is not called then, and it
// reports false). Because fill runs under the queue's lock, state that
// only fill and [Producer.Locked] touch needs no lock of its own. If fill
// panics, the slot is not queued and the lock is released before the
// panic goes on.
func (p *Producer[T]) PushFuncIf(ctx context.Context, fill func(*T) bool) (ok bool, err error) {
	q := p.q
	q.lock()
	if q.items.n >= q.capacity || q.closed || p.done {
		if err := p.waitRoom(ctx, false); err != nil {
			q.mu.Unlock()
			return false, err
		}
	}
	v := q.items.slot(q.capacity)
	defer func() { // also when fill panics
		if ok {
			q.passOn()
		} else if q.items.n--; q.items.n == 0 { // the slot is outside the items again
			q.items.head = 0
		}
		q.mu.Unlock()
	}()
	return fill(v), nil
}

// Locked calls f under the queue's lock, at once: it neither waits for
// room nor fails. f must not call the queue, and must not panic.
func (p *Producer[T]) Locked(f func()) {
	q := p.q
	q.lock()
	f()
	q.mu.Unlock()
}

// waitRoom waits, with q.mu held, until the queue has room for an item
// (at once when empty: a Push of nothing waits for nothing), or returns
// why nothing may be pushed: ErrClosed, or ctx.Err() if ctx is cancelled
// while it waits.
func (p *Producer[T]) waitRoom(ctx context.Context, empty bool) error {
	q := p.q
	var stop func() bool
	defer func() {
		if stop != nil {
			stop()
		}
	}()
	for {
		switch {
		case q.closed || p.done:
			return ErrClosed
		case empty || q.items.n < q.capacity:
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if stop == nil && ctx.Done() != nil {
			stop = context.AfterFunc(ctx, q.wakePushers)
		}
		q.pushWait++
		q.notFull.Wait()
		q.pushWait--
		if q.pushWoken > 0 {
			q.pushWoken--
		}
	}
}

// Done marks the producer finished: its later Pushes return [ErrClosed],
// and once every producer is done and the queue is drained the consumer
// gets [ErrDone]. Done is idempotent and safe for concurrent use.
func (p *Producer[T]) Done() {
	q := p.q
	q.lock()
	defer q.mu.Unlock()
	if p.done {
		return
	}
	p.done = true
	q.live--
	q.passOn()
	if q.pushWait > 0 {
		q.notFull.Broadcast() // a Push of p blocked elsewhere now fails
		q.pushWoken = q.pushWait
	}
}
