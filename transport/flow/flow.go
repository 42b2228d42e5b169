// Package flow gives a response body whose writes never block — a
// Durable Object's stream, which queues whatever it is handed — the
// backpressure of a socket: once the queue is over its mark, the next
// write waits until the reader takes some of it, or until the write
// deadline passes. transport/api's stream handler sets a deadline before
// every write (api.Options.WriteTimeout), so a client that stops reading
// is disconnected there as it is on the native server, and what is queued
// for it stays bounded.
package flow

import (
	"context"
	"os"
	"sync"
	"time"
)

// Writer is an io.Writer over enqueue. It is safe for one writer and any
// number of goroutines calling Drained.
type Writer struct {
	enqueue func([]byte) bool // hands b over; false: the queue is over its mark
	ctx     context.Context   // the request: a waiting write gives up when it ends
	after   func(time.Duration) <-chan time.Time

	drained  chan struct{} // capacity 1: the reader took from the queue
	mu       sync.Mutex
	full     bool
	deadline time.Time
	now      func() time.Time
}

// New returns a Writer that hands each write to enqueue, which reports
// whether the queue has room for more. ctx ends any wait. now and after
// are the clock (nil: the time package's).
func New(ctx context.Context, enqueue func([]byte) bool, now func() time.Time, after func(time.Duration) <-chan time.Time) *Writer {
	if now == nil {
		now = time.Now
	}
	if after == nil {
		after = time.After
	}
	return &Writer{enqueue: enqueue, ctx: ctx, after: after, now: now, drained: make(chan struct{}, 1)}
}

// Drained says the reader took from the queue: a write waiting for room
// goes on (and checks again).
func (w *Writer) Drained() {
	select {
	case w.drained <- struct{}{}:
	default:
	}
}

// SetWriteDeadline bounds the wait of the writes that follow (the zero
// time: no bound), as http.ResponseController expects.
func (w *Writer) SetWriteDeadline(t time.Time) error {
	w.mu.Lock()
	w.deadline = t
	w.mu.Unlock()
	return nil
}

// Write waits while the queue is over its mark, then hands b over. It
// fails with os.ErrDeadlineExceeded when the deadline passes first, and
// with the context's error when the request ends.
func (w *Writer) Write(b []byte) (int, error) {
	if err := w.wait(); err != nil {
		return 0, err
	}
	if len(b) == 0 {
		return 0, nil
	}
	room := w.enqueue(b)
	w.mu.Lock()
	w.full = !room
	w.mu.Unlock()
	return len(b), nil
}

// Flush waits as Write does: a flushed response is one the reader can
// take.
func (w *Writer) Flush() error { return w.wait() }

func (w *Writer) wait() error {
	for {
		w.mu.Lock()
		full, deadline := w.full, w.deadline
		w.mu.Unlock()
		if !full {
			return nil
		}
		var expired <-chan time.Time
		if !deadline.IsZero() {
			d := deadline.Sub(w.now())
			if d <= 0 {
				return os.ErrDeadlineExceeded
			}
			expired = w.after(d)
		}
		select {
		case <-w.drained:
			w.mu.Lock()
			w.full = false // the reader took some: write, and learn again whether there is room
			w.mu.Unlock()
		case <-expired:
			return os.ErrDeadlineExceeded
		case <-w.ctx.Done():
			return w.ctx.Err()
		}
	}
}
