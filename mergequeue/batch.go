package mergequeue

import "context"

// Batch queues a run of one [Producer]'s items under one hold of the
// queue's lock: a slot at a time, which the caller fills in place and
// commits. It is made by [Producer.Batch] and used by one goroutine.
//
// The lock is taken by the first [Batch.Next] and held until
// [Batch.Unlock] or a Next that waits for room; the consumer is woken when
// it is let go, once, not at each item. While it is held the caller must
// not call the queue by any other means, nor wait on anything another
// goroutine may hold: it calls Unlock first. A caller defers Unlock, so
// that a panic lets the lock go too.
type Batch[T any] struct {
	_      [0]func() // not comparable
	p      *Producer[T]
	ctx    context.Context
	locked bool
	slot   *T // the slot Next returned that Commit has not queued
}

// Batch returns an empty Batch of p's items; ctx is the context its
// Nexts wait with.
func (p *Producer[T]) Batch(ctx context.Context) Batch[T] {
	return Batch[T]{p: p, ctx: ctx}
}

// Next returns the slot at the queue's tail for the caller to fill: it
// holds the zero value, an item the consumer has taken, or what was
// written into a slot Next returned and Commit did not queue (the caller
// sets every field). Next waits and fails like [Producer.Push]; the batch's
// items queued so far are the consumer's before it waits.
func (b *Batch[T]) Next() (*T, error) {
	if b.slot != nil { // not committed: the same slot again
		return b.slot, nil
	}
	q := b.p.q
	if !b.locked {
		q.lock()
		b.locked = true
	}
	if q.items.n >= q.capacity || q.closed || b.p.done {
		q.passOn()
		if err := b.p.waitRoom(b.ctx, false); err != nil {
			return nil, err
		}
	}
	b.slot = q.items.slot(q.capacity)
	return b.slot, nil
}

// Commit queues the slot the last Next returned.
func (b *Batch[T]) Commit() { b.slot = nil }

// Unlock lets the queue's lock go, dropping a slot not committed, and
// wakes the consumer for the batch's items. The next Next takes the lock
// again. Unlock without the lock held does nothing.
func (b *Batch[T]) Unlock() {
	if !b.locked {
		return
	}
	q := b.p.q
	if b.slot != nil {
		b.slot = nil
		if q.items.n--; q.items.n == 0 { // the slot is outside the items again
			q.items.head = 0
		}
	}
	q.passOn()
	b.locked = false
	q.mu.Unlock()
}
