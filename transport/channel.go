package transport

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"
)

// Limits of TRANSPORT.md T-7 and the heartbeat of T-11.
const (
	DefaultMaxEvents = 10000
	DefaultMaxUnits  = 8 * 1024 * 1024
	DefaultQueueLen  = 4096
	DefaultQueueSize = 8 * 1024 * 1024
	PingInterval     = 20 * time.Second
	// DefaultMaxSubscribers bounds one channel's subscribers (one
	// session's streams) at once: 1,000 cost about 33 MB of a server's
	// memory (README "Measured").
	DefaultMaxSubscribers = 1000
)

// Errors a subscriber's Serve returns.
var (
	// ErrOverflow: the subscriber fell DefaultQueueLen (Options.QueueLen)
	// events or DefaultQueueSize (Options.QueueSize) bytes behind and was
	// dropped; it may reconnect with Last-Event-ID.
	ErrOverflow = errors.New("transport: subscriber too slow: queue overflowed")
	// ErrClosed: the subscriber or its channel was closed.
	ErrClosed = errors.New("transport: subscription closed")
	// ErrFull: the channel had Options.MaxSubscribers subscribers (Full).
	ErrFull = errors.New("transport: the channel has as many subscribers as it takes")
)

// Clock is the channel's source of time: the engine's Clock interface.
type Clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) bool
}

// Options configure a Channel; zero values take the defaults.
type Options struct {
	Epoch     string // "" = 8 random hex digits
	MaxEvents int    // replay buffer bound in events; 0 = DefaultMaxEvents
	MaxUnits  int    // replay buffer bound in UTF-16 units of data; 0 = DefaultMaxUnits
	QueueLen  int    // events one subscriber may fall behind; 0 = DefaultQueueLen
	QueueSize int    // bytes of frames one subscriber may fall behind; 0 = DefaultQueueSize
	// MaxSubscribers bounds the subscribers at once; 0 =
	// DefaultMaxSubscribers, < 0 = no bound.
	MaxSubscribers int
	Clock          Clock // heartbeat timing and idle time; nil = the system clock
	// PingInterval is the heartbeat's (T-11); 0 = PingInterval. A test
	// whose clock cannot be set (a Durable Object's) sets it short.
	PingInterval time.Duration
}

// Channel is one SSE channel (TRANSPORT.md §1–§3). It is safe for
// concurrent use.
type Channel struct {
	epoch string
	opts  Options

	mu          sync.Mutex
	nextSeq     uint64
	buf         []Frame // ring of buffered broadcast frames
	head, count int
	units       int
	evicted     uint64 // lastEvictedSeq
	subs        map[*Subscriber]struct{}
	busy        bool
	touched     time.Time
	closed      bool
}

// NewChannel returns an empty channel: its first event gets seq 1.
func NewChannel(opts Options) *Channel {
	if opts.MaxEvents <= 0 {
		opts.MaxEvents = DefaultMaxEvents
	}
	if opts.MaxUnits <= 0 {
		opts.MaxUnits = DefaultMaxUnits
	}
	if opts.QueueLen <= 0 {
		opts.QueueLen = DefaultQueueLen
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = DefaultQueueSize
	}
	if opts.MaxSubscribers == 0 {
		opts.MaxSubscribers = DefaultMaxSubscribers
	}
	if opts.Clock == nil {
		opts.Clock = systemClock{}
	}
	if opts.PingInterval <= 0 {
		opts.PingInterval = PingInterval
	}
	if opts.Epoch == "" {
		opts.Epoch = NewEpoch()
	}
	c := &Channel{epoch: opts.Epoch, opts: opts, nextSeq: 1, subs: map[*Subscriber]struct{}{}}
	c.touched = opts.Clock.Now()
	return c
}

// NewEpoch returns 8 random hex digits (the reference takes the first 8
// characters of a random UUID). An epoch only has to differ from the
// previous one of the same key, so it is not from crypto/rand, which would
// bring fmt into WebAssembly builds.
func NewEpoch() string {
	const hex = "0123456789abcdef"
	n := rand.Uint32()
	b := make([]byte, 8)
	for i := range b {
		b[i] = hex[n>>(28-4*i)&0xf]
	}
	return string(b)
}

// Epoch returns the channel's epoch.
func (c *Channel) Epoch() string { return c.epoch }

// LastID returns the id of the last event the channel numbered, broadcast
// or unicast ("<epoch>-0" before the first): the cursor of TRANSPORT.md §6.
func (c *Channel) LastID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return FormatID(c.epoch, c.nextSeq-1)
}

// Publish numbers ev, keeps it in the replay buffer and queues it for every
// subscriber, dropping those whose queue is full. It never blocks on a
// subscriber. It returns the frame (zero after Close).
func (c *Channel) Publish(ev Event) Frame {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return Frame{}
	}
	f := c.number(ev)
	kept := f
	kept.Event = Event{} // a replay sends the wire only: the data once, not twice
	c.push(kept)
	for s := range c.subs {
		if !s.enqueue(f.Wire) {
			delete(c.subs, s)
			c.touched = c.opts.Clock.Now()
		}
	}
	return f
}

func (c *Channel) number(ev Event) Frame {
	seq := c.nextSeq
	c.nextSeq++
	id := FormatID(c.epoch, seq)
	return Frame{Seq: seq, ID: id, Event: ev, Wire: encodeFrame(id, ev), Units: utf16Len(ev.Data)}
}

// push appends f to the ring and evicts the oldest frames past either bound.
func (c *Channel) push(f Frame) {
	if c.buf == nil {
		c.buf = make([]Frame, 64)
	}
	if c.count == len(c.buf) {
		if len(c.buf) < c.opts.MaxEvents {
			c.grow()
		} else {
			c.evictOldest()
		}
	}
	c.buf[(c.head+c.count)%len(c.buf)] = f
	c.count++
	c.units += f.Units
	for c.count > c.opts.MaxEvents || (c.units > c.opts.MaxUnits && c.count > 0) {
		c.evictOldest()
	}
}

func (c *Channel) grow() {
	n := min(2*len(c.buf), c.opts.MaxEvents)
	nb := make([]Frame, n)
	for i := 0; i < c.count; i++ {
		nb[i] = c.buf[(c.head+i)%len(c.buf)]
	}
	c.buf, c.head = nb, 0
}

func (c *Channel) evictOldest() {
	f := &c.buf[c.head]
	c.evicted = f.Seq
	c.units -= f.Units
	*f = Frame{}
	c.head = (c.head + 1) % len(c.buf)
	c.count--
}

// Buffered returns the number of buffered events, their data units and the
// lastEvictedSeq (T-7).
func (c *Channel) Buffered() (events, units int, lastEvicted uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.count, c.units, c.evicted
}

// Subscribers returns the number of current subscribers.
func (c *Channel) Subscribers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.subs)
}

// SetBusy marks the channel's session running or compacting (true) or idle;
// a busy channel is never reclaimed (T-3).
func (c *Channel) SetBusy(busy bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.busy = busy
	c.touched = c.opts.Clock.Now()
}

// idleSince reports whether the channel may be reclaimed: not busy, no
// subscriber; and since when.
func (c *Channel) idleSince() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.touched, !c.busy && len(c.subs) == 0
}

// Close drops every subscriber (their Serve writes what was queued for
// them, then returns ErrClosed) and makes later Publish and Subscribe calls
// no-ops.
func (c *Channel) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for s := range c.subs {
		s.end(ErrClosed)
		delete(c.subs, s)
	}
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }
func (systemClock) Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
