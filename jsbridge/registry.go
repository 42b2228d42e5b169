//go:build js && wasm

package jsbridge

import (
	"sync"
	"syscall/js"
)

// End codes of a reply from the shim (static/floe.mjs END_*).
const (
	endMore  = 0 // a batch; more follow
	endDone  = 1 // the iterator finished; value is its return value
	endThrew = 2 // the callback threw or rejected, or returned no iterator; value is the message (E-1.3)
	endBad   = 3 // the iterator yielded a value that is not a message; value says why
)

// reply is one answer of JavaScript to a waiting goroutine: a batch of a
// producer, or a settled Promise (end endDone with the value, endThrew with
// the message).
type reply struct {
	json  string   // records of messages (records.go); "" = none
	end   int      // end code
	value js.Value // end value (undefined when text holds it)
	text  string   // the end value when it is a string handed over as bytes (fast.go)
	isStr bool     // text holds the value
}

// str returns the reply's value when it is a string.
func (r reply) str() (string, bool) {
	if r.isStr {
		return r.text, true
	}
	if r.value.Type() == js.TypeString {
		return r.value.String(), true
	}
	return "", false
}

// waiters maps ids to the reply channels of goroutines waiting for
// JavaScript. Each channel has capacity 1 and JavaScript sends at most one
// reply per request, so a send never blocks a js.FuncOf body.
//
// A removed waiter's channel is emptied and kept for the next add: a
// waiter reads its channel only until it removes itself, and a send
// finds the channel under the lock, so a reply for a removed id never
// reaches the channel's next waiter.
type waiters struct {
	mu   sync.Mutex
	next int
	m    map[int]chan reply
	free []chan reply // empty channels of removed waiters, up to maxFreeWaiters
}

const maxFreeWaiters = 32

// add registers a channel.
func (w *waiters) add() (int, chan reply) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var ch chan reply
	if n := len(w.free); n > 0 {
		ch = w.free[n-1]
		w.free[n-1] = nil
		w.free = w.free[:n-1]
	} else {
		ch = make(chan reply, 1)
	}
	if w.m == nil {
		w.m = map[int]chan reply{}
	}
	w.next++
	w.m[w.next] = ch
	return w.next, ch
}

// remove forgets id; a late reply for it is dropped. The waiter reads its
// channel no more.
func (w *waiters) remove(id int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch := w.m[id]
	if ch == nil {
		return
	}
	delete(w.m, id)
	if len(w.free) < maxFreeWaiters {
		select {
		case <-ch: // a reply the waiter did not read
		default:
		}
		w.free = append(w.free, ch)
	}
}

// send hands r to the waiter id without blocking; false if id is unknown
// or already has an unread reply.
func (w *waiters) send(id int, r reply) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch := w.m[id]
	if ch == nil {
		return false
	}
	select {
	case ch <- r:
		return true
	default:
		return false
	}
}

// handles maps numeric ids handed to JavaScript to Go objects.
type handles[T any] struct {
	mu   sync.Mutex
	next int
	m    map[int]T
}

func (h *handles[T]) add(v T) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[int]T{}
	}
	h.next++
	h.m[h.next] = v
	return h.next
}

func (h *handles[T]) get(id int) (T, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.m[id]
	return v, ok
}

func (h *handles[T]) remove(id int) {
	h.mu.Lock()
	delete(h.m, id)
	h.mu.Unlock()
}
