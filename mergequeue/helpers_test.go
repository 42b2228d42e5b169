package mergequeue_test

import (
	"context"
	"slices"
	"testing"

	"github.com/floehq/floe/mergequeue"
)

// result is what a goroutine started by goPop or goPush reports.
type result[T any] struct {
	v   T
	err error
}

// goPop pops in a new goroutine and reports on the returned channel.
func goPop[T any](ctx context.Context, q *mergequeue.Queue[T]) <-chan result[T] {
	ch := make(chan result[T], 1)
	go func() {
		v, err := q.Pop(ctx)
		ch <- result[T]{v, err}
	}()
	return ch
}

// goPush pushes in a new goroutine and reports on the returned channel.
func goPush[T any](ctx context.Context, p *mergequeue.Producer[T], vs ...T) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- p.Push(ctx, vs...) }()
	return ch
}

// blocked fails the test if ch is ready. Call it after synctest.Wait.
func blocked[T any](t *testing.T, what string, ch <-chan T) {
	t.Helper()
	select {
	case v := <-ch:
		t.Fatalf("%s returned %v, want it blocked", what, v)
	default:
	}
}

// drain pops until an error and returns the items and that error.
func drain[T any](ctx context.Context, q *mergequeue.Queue[T]) ([]T, error) {
	var got []T
	for v, err := range q.All(ctx) {
		if err != nil {
			return got, err
		}
		got = append(got, v)
	}
	return got, mergequeue.ErrDone
}

func mustPush[T any](t *testing.T, p *mergequeue.Producer[T], vs ...T) {
	t.Helper()
	if err := p.Push(t.Context(), vs...); err != nil {
		t.Fatalf("Push(%v) = %v", vs, err)
	}
}

func wantItems[T comparable](t *testing.T, got, want []T) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("items = %v, want %v", got, want)
	}
}
