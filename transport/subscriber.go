package transport

import (
	"context"
	"io"
	"sync"
)

// Replay says how a subscription began (T-8, T-10).
type Replay int

const (
	Fresh Replay = iota // no Last-Event-ID
	Hit                 // the buffered events after Last-Event-ID were queued
	Miss                // resync_required was queued
	// Full: the channel had Options.MaxSubscribers subscribers; the
	// subscriber was refused (nothing queued or numbered, its Serve
	// returns ErrFull at once).
	Full
)

func (r Replay) String() string {
	switch r {
	case Hit:
		return "hit"
	case Miss:
		return "miss"
	case Full:
		return "full"
	}
	return "fresh"
}

// ResyncRequired is the data of the resync_required server event (a
// constant: it was a []byte any importer could rewrite for every server).
const ResyncRequired = `{"type":"resync_required"}`

// Subscribe registers a subscriber (T-10), atomically with respect to
// Publish: when resume is true it first queues the replay after lastID on a
// hit or a unicast resync_required on a miss; then the initial events, each
// numbered as a unicast event (T-9); then the live stream. The subscriber
// must be served (Serve) or closed. A channel with Options.MaxSubscribers
// subscribers refuses it (Full).
func (c *Channel) Subscribe(lastID string, resume bool, initial []Event) (*Subscriber, Replay) {
	s := &Subscriber{c: c, wake: make(chan struct{}, 1)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		s.err = ErrClosed
		return s, Fresh
	}
	if m := c.opts.MaxSubscribers; m > 0 && len(c.subs) >= m {
		s.err = ErrFull
		return s, Full
	}
	mode := Fresh
	if resume {
		mode = Miss
		if epoch, seq, ok := ParseID(lastID); ok && epoch == c.epoch && c.evicted <= seq && seq < c.nextSeq {
			mode = Hit
		}
		if mode == Hit {
			for i := 0; i < c.count; i++ {
				if f := &c.buf[(c.head+i)%len(c.buf)]; f.Seq > seqOf(lastID) {
					s.queue = append(s.queue, f.Wire)
				}
			}
			s.replayed = len(s.queue)
		} else {
			s.queue = append(s.queue, c.number(Event{Name: EventServer, Data: []byte(ResyncRequired)}).Wire)
		}
	}
	for _, ev := range initial {
		s.queue = append(s.queue, c.number(ev).Wire)
	}
	s.limit = len(s.queue) + c.opts.QueueLen
	for _, w := range s.queue {
		s.size += len(w)
	}
	s.maxSize = s.size + c.opts.QueueSize
	if len(s.queue) > 0 {
		s.wake <- struct{}{}
	}
	c.subs[s] = struct{}{}
	return s, mode
}

func seqOf(id string) uint64 {
	_, seq, _ := ParseID(id)
	return seq
}

// Subscriber is one connection's view of a channel. Serve runs on one
// goroutine; Close may be called from any.
type Subscriber struct {
	c     *Channel
	wake  chan struct{}
	mu    sync.Mutex
	queue [][]byte
	limit int
	// size is the bytes queued, maxSize their bound: a subscriber that
	// stops reading holds at most that (and the batch Serve is writing),
	// whatever the size of the events.
	size, maxSize int
	err           error
	spare         [][]byte
	replayed      int // the events replayed after the Last-Event-ID (Hit)
}

// Replayed returns how many buffered events Subscribe queued after the
// Last-Event-ID (0 unless it answered Hit).
func (s *Subscriber) Replayed() int { return s.replayed }

// enqueue adds one frame; false (and the subscriber failed) on overflow.
// Called with the channel's lock held.
func (s *Subscriber) enqueue(wire []byte) bool {
	s.mu.Lock()
	if s.err != nil {
		s.mu.Unlock()
		return false
	}
	if len(s.queue) >= s.limit || s.size+len(wire) > s.maxSize {
		s.err = ErrOverflow
		s.queue, s.size = nil, 0
		s.mu.Unlock()
		s.signal()
		return false
	}
	s.queue = append(s.queue, wire)
	s.size += len(wire)
	s.mu.Unlock()
	s.signal()
	return true
}

func (s *Subscriber) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// end stops the subscriber after what is queued for it: Serve writes
// that, then returns err.
func (s *Subscriber) end(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
	s.signal()
}

func (s *Subscriber) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.queue, s.size = nil, 0
	s.mu.Unlock()
	s.signal()
}

// Close unsubscribes; a running Serve returns ErrClosed. Safe to call more
// than once.
func (s *Subscriber) Close() {
	c := s.c
	c.mu.Lock()
	if _, ok := c.subs[s]; ok {
		delete(c.subs, s)
		c.touched = c.opts.Clock.Now()
	}
	c.mu.Unlock()
	s.fail(ErrClosed)
}

// take swaps out the queued frames.
func (s *Subscriber) take() ([][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queue
	s.queue, s.size = s.spare[:0], 0
	s.spare = nil
	return q, s.err
}

// maxBatch bounds the bytes Serve copies into one Write: a subscriber
// whose client reads slowly or not at all holds at most that beside its
// queue, whose frames it shares with the channel's buffer (a replay of the
// whole buffer was copied whole, 8 MiB for each such client).
const maxBatch = 64 << 10

// Serve writes the subscriber's events to w in order until ctx is done, a
// write fails, the queue overflows or the subscriber is closed; it returns
// the reason and unsubscribes; when its channel was closed, what was
// queued before is written first. What is queued at a wake-up is written
// in Write calls of up to maxBatch bytes of whole frames (a longer frame
// alone; frames are never split between calls), each followed by flush,
// if non-nil. A `: ping` comment is written every PingInterval
// (Options.PingInterval) on the channel's clock. Only Serve writes to w.
func (s *Subscriber) Serve(ctx context.Context, w io.Writer, flush func() error) error {
	defer s.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pings := make(chan struct{}, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for s.c.opts.Clock.Sleep(ctx, s.c.opts.PingInterval) {
			select {
			case pings <- struct{}{}:
			default:
			}
		}
	}()
	defer wg.Wait()
	defer cancel()
	var scratch []byte
	for {
		frames, err := s.take()
		for i := 0; i < len(frames); {
			b := frames[i]
			if len(b) < maxBatch {
				scratch = scratch[:0]
				for ; i < len(frames) && len(scratch)+len(frames[i]) <= maxBatch; i++ {
					scratch = append(scratch, frames[i]...)
					frames[i] = nil
				}
				b = scratch
			} else {
				frames[i] = nil
				i++
			}
			if err := write(w, b, flush); err != nil {
				return err
			}
		}
		if len(frames) > 0 {
			s.mu.Lock()
			if s.spare == nil && cap(frames) <= 1024 {
				s.spare = frames[:0]
			}
			s.mu.Unlock()
		}
		if err != nil {
			return err
		}
		select {
		case <-s.wake:
		case <-pings:
			if err := write(w, ping, flush); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func write(w io.Writer, b []byte, flush func() error) error {
	if _, err := w.Write(b); err != nil {
		return err
	}
	if flush != nil {
		return flush()
	}
	return nil
}
