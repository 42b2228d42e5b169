package provider

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultIdleTimeout is how long a model request may wait on the server
// without a byte (for its headers, or in a read of its body) before it
// ends as timeout, when an adapter's Options.IdleTimeout is 0.
const DefaultIdleTimeout = 5 * time.Minute

// IdleTimeout resolves an adapter's Options.IdleTimeout: 0 is
// DefaultIdleTimeout, below 0 none (returned as 0).
func IdleTimeout(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return DefaultIdleTimeout
	case d < 0:
		return 0
	}
	return d
}

// idleTicks is how many ticks of a watchdog must pass without a read
// after the tick that saw the last one: the request ends between idle and
// idle × (1 + 1/idleTicks) after its last byte.
const idleTicks = 4

// afterFunc starts a watchdog's next tick; tests replace it.
var afterFunc = func(d time.Duration, f func()) interface{ Stop() bool } { return time.AfterFunc(d, f) }

// watchdog cancels a request that waits on the server too long. The
// request counts each start and end of a wait (RoundTrip, a read of the
// body): the count is odd while it waits. No clock is read and no timer
// reset on the stream's path; each tick compares the count with the last
// tick's, and a count that is even (the request is busy elsewhere, in the
// decoder or its emit) or has moved starts the quiet ticks again.
type watchdog struct {
	waits uint32 // atomic

	mu      sync.Mutex // the rest
	seen    uint32
	quiet   int
	stopped bool
	fired   bool
	tick    time.Duration
	cancel  context.CancelFunc
	t       interface{ Stop() bool }
}

func startWatchdog(idle time.Duration, cancel context.CancelFunc) *watchdog {
	w := &watchdog{waits: 1, tick: idle / idleTicks, cancel: cancel} // waiting for the headers
	w.mu.Lock()
	w.t = afterFunc(w.tick, w.check)
	w.mu.Unlock()
	return w
}

// wait marks the start or the end of a wait on the server.
func (w *watchdog) wait() { atomic.AddUint32(&w.waits, 1) }

func (w *watchdog) check() {
	w.mu.Lock()
	if !w.stopped {
		if n := atomic.LoadUint32(&w.waits); n != w.seen || n%2 == 0 {
			w.seen, w.quiet = n, 0
		} else {
			w.quiet++
		}
		if w.quiet < idleTicks {
			w.t = afterFunc(w.tick, w.check)
		} else {
			w.fired = true
			w.cancel()
		}
	}
	w.mu.Unlock()
}

// stop stops w and reports whether it had ended the request.
func (w *watchdog) stop() bool {
	w.mu.Lock()
	w.stopped = true
	w.t.Stop()
	fired := w.fired
	w.mu.Unlock()
	return fired
}
