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
	queue []posted
	wake  chan struct{} // capacity 1
}

type posted struct {
	f     func()
	quiet bool // see PostQuiet
}

func (l *Loop) wakeChan() chan struct{} {
	if l.wake == nil {
		l.wake = make(chan struct{}, 1)
	}
	return l.wake
}

// Post queues f.
func (l *Loop) Post(f func()) { l.post(posted{f: f}) }

// PostQuiet queues f, which changes nothing the idle function shows: a
// batch of such functions alone is not followed by a call of idle. (The
// work of an animation frame a render asks for is posted so; had it been
// followed by a render, which asks for the next frame, a page with nothing
// to do would render at every frame.)
func (l *Loop) PostQuiet(f func()) { l.post(posted{f: f, quiet: true}) }

func (l *Loop) post(p posted) {
	l.mu.Lock()
	l.queue = append(l.queue, p)
	w := l.wakeChan()
	l.mu.Unlock()
	select {
	case w <- struct{}{}:
	default:
	}
}

// Run runs posted functions until ctx is done. After each batch — when the
// queue has run dry — it calls idle (if non-nil), the place to render,
// unless every function of the batch was posted by PostQuiet.
func (l *Loop) Run(ctx context.Context, idle func()) {
	l.mu.Lock()
	w := l.wakeChan()
	l.mu.Unlock()
	loud := false
	for {
		l.mu.Lock()
		batch := l.queue
		l.queue = nil
		l.mu.Unlock()
		for _, p := range batch {
			p.f()
			loud = loud || !p.quiet
		}
		if len(batch) > 0 {
			l.mu.Lock()
			more := len(l.queue) > 0
			l.mu.Unlock()
			if more {
				continue
			}
			if idle != nil && loud {
				idle()
			}
			loud = false
		}
		select {
		case <-w:
		case <-ctx.Done():
			return
		}
	}
}
