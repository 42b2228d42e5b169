package provider

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultIdleTimeout is how long a model request may go without a byte
// from the server (its headers, then its body) before it ends as timeout,
// when an adapter's Options.IdleTimeout is 0.
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

// watchdog cancels a request that goes idle without a byte read. A read
// only counts itself (no clock read, no timer reset on the stream's
// path); each tick compares the count with the last tick's.
type watchdog struct {
	reads uint32 // atomic

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
	w := &watchdog{tick: idle / idleTicks, cancel: cancel}
	w.mu.Lock()
	w.t = afterFunc(w.tick, w.check)
	w.mu.Unlock()
	return w
}

func (w *watchdog) read() { atomic.AddUint32(&w.reads, 1) }

func (w *watchdog) check() {
	w.mu.Lock()
	if !w.stopped {
		if n := atomic.LoadUint32(&w.reads); n != w.seen {
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
