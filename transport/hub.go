package transport

import (
	"context"
	"sync"
	"time"
)

// IdleReclaim is how long an idle channel without subscribers is kept (T-3).
const IdleReclaim = 30 * time.Minute

// Hub creates channels lazily per key (a session id, or "user:<id>") and
// reclaims idle ones (T-3). It is safe for concurrent use.
type Hub struct {
	opts Options // template for new channels (Epoch ignored)

	mu     sync.Mutex
	chans  map[string]*Channel
	closed bool
}

// NewHub returns a Hub whose channels use opts (a fresh epoch each).
func NewHub(opts Options) *Hub {
	if opts.Clock == nil {
		opts.Clock = systemClock{}
	}
	opts.Epoch = ""
	return &Hub{opts: opts, chans: map[string]*Channel{}}
}

// Channel returns the channel of key, creating it (with a new epoch) when
// there is none, and marks it used now. After Close it is a closed one.
func (h *Hub) Channel(key string) *Channel {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.chans[key]
	if c == nil {
		c = NewChannel(h.opts)
		if h.closed {
			c.Close()
		}
		h.chans[key] = c
		return c
	}
	c.mu.Lock()
	c.touched = h.opts.Clock.Now()
	c.mu.Unlock()
	return c
}

// Lookup returns the channel of key without creating or touching it.
func (h *Hub) Lookup(key string) (*Channel, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.chans[key]
	return c, ok
}

// Remove closes and forgets the channel of key (its session was deleted).
func (h *Hub) Remove(key string) {
	h.mu.Lock()
	c := h.chans[key]
	delete(h.chans, key)
	h.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// Close closes every channel, and every channel Channel creates from then
// on: each subscriber gets what was queued for it, then its Serve returns
// ErrClosed. A server shutting down ends its streams so. Safe to call more
// than once.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for _, c := range h.chans {
		c.Close()
	}
}

// Len returns the number of live channels.
func (h *Hub) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.chans)
}

// Reclaim drops every channel that is idle, has no subscriber, and was last
// used IdleReclaim or longer ago; it returns how many it dropped.
func (h *Hub) Reclaim() int {
	now := h.opts.Clock.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for k, c := range h.chans {
		if since, idle := c.idleSince(); idle && now.Sub(since) >= IdleReclaim {
			delete(h.chans, k)
			c.Close()
			n++
		}
	}
	return n
}

// Run reclaims idle channels every minute of the hub's clock until ctx is
// done.
func (h *Hub) Run(ctx context.Context) {
	for h.opts.Clock.Sleep(ctx, time.Minute) {
		h.Reclaim()
	}
}
