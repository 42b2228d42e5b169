package playground

import (
	"context"
	"sync"
)

// Loop runs posted functions one at a time, in the order they were posted, on
// the goroutine that calls [Loop.Run]. A user interface owns its view from
// that goroutine and everything else — engine output, approval requests, DOM
// event callbacks — posts to it. Post never blocks, so a JavaScript callback
// may post. The zero Loop is ready to use and safe for concurrent use.
type Loop struct {
	mu    sync.Mutex
	queue []func()
	wake  chan struct{} // capacity 1
}

func (l *Loop) wakeChan() chan struct{} {
	if l.wake == nil {
		l.wake = make(chan struct{}, 1)
	}
	return l.wake
}

// Post queues f.
func (l *Loop) Post(f func()) {
	l.mu.Lock()
	l.queue = append(l.queue, f)
	w := l.wakeChan()
	l.mu.Unlock()
	select {
	case w <- struct{}{}:
	default:
	}
}

// Run runs posted functions until ctx is done. After each batch — when the
// queue has run dry — it calls idle (if non-nil), the place to render.
func (l *Loop) Run(ctx context.Context, idle func()) {
	l.mu.Lock()
	w := l.wakeChan()
	l.mu.Unlock()
	for {
		l.mu.Lock()
		batch := l.queue
		l.queue = nil
		l.mu.Unlock()
		for _, f := range batch {
			f()
		}
		if len(batch) > 0 {
			l.mu.Lock()
			more := len(l.queue) > 0
			l.mu.Unlock()
			if more {
				continue
			}
			if idle != nil {
				idle()
			}
		}
		select {
		case <-w:
		case <-ctx.Done():
			return
		}
	}
}
