package transport

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// sink is an io.Writer that records each Write call.
type sink struct {
	mu     sync.Mutex
	writes []string
	block  chan struct{} // when non-nil, every Write waits for a receive
	fail   error
}

// ResyncRequired is a constant: no importer can rewrite the event every
// server sends (a []byte variable could be). This line does not compile
// for a variable.
const _ = ResyncRequired

func (s *sink) Write(b []byte) (int, error) {
	if s.block != nil {
		<-s.block
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return 0, s.fail
	}
	s.writes = append(s.writes, string(b))
	return len(b), nil
}

func (s *sink) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.writes, "")
}

// sseEvent is one parsed SSE event (comments kept as name "comment").
type sseEvent struct{ id, name, data string }

func parseSSE(t *testing.T, text string) []sseEvent {
	t.Helper()
	var out []sseEvent
	for _, block := range strings.Split(text, "\n\n") {
		if block == "" {
			continue
		}
		var ev sseEvent
		for _, line := range strings.Split(block, "\n") {
			k, v, _ := strings.Cut(line, ": ")
			switch k {
			case "":
				ev.name = "comment"
				ev.data = v
			case "id":
				ev.id = v
			case "event":
				ev.name = v
			case "data":
				if ev.data != "" {
					ev.data += "\n"
				}
				ev.data += v
			default:
				t.Fatalf("unexpected SSE line %q", line)
			}
		}
		out = append(out, ev)
	}
	return out
}

func msg(i int) Event { return Event{Data: []byte(fmt.Sprintf(`{"n":%d}`, i))} }

// serve runs s.Serve on a goroutine and returns a stop function that
// cancels it and returns Serve's error.
func serve(s *Subscriber, w *sink) func() error {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, w, nil) }()
	return func() error { cancel(); return <-done }
}

func TestIDsCountEveryEvent(t *testing.T) {
	c := NewChannel(Options{Epoch: "ab12cd34"})
	if got := c.LastID(); got != "ab12cd34-0" {
		t.Fatalf("LastID before any event = %q", got)
	}
	if f := c.Publish(msg(1)); f.ID != "ab12cd34-1" || f.Seq != 1 {
		t.Fatalf("first frame %q seq %d", f.ID, f.Seq)
	}
	s, mode := c.Subscribe("", false, []Event{TaskState{State: StateIdle}.Event()})
	defer s.Close()
	if mode != Fresh {
		t.Fatalf("mode %v", mode)
	}
	if f := c.Publish(msg(2)); f.ID != "ab12cd34-3" {
		t.Fatalf("after one unicast event the next broadcast id is %q, want ab12cd34-3", f.ID)
	}
	if n, _, _ := c.Buffered(); n != 2 {
		t.Fatalf("buffered %d events, want 2 (unicast events are not buffered)", n)
	}
}

func TestFrameWireFormat(t *testing.T) {
	c := NewChannel(Options{Epoch: "e"})
	f := c.Publish(Event{Data: []byte(`{"a":1}`)})
	if got := string(f.Wire); got != "id: e-1\ndata: {\"a\":1}\n\n" {
		t.Fatalf("message frame %q", got)
	}
	f = c.Publish(Event{Name: EventServer, Data: []byte("{\"a\":\n1}")})
	if got := string(f.Wire); got != "id: e-2\nevent: server_event\ndata: {\"a\":\ndata: 1}\n\n" {
		t.Fatalf("server event frame %q", got)
	}
}

func TestBufferEvictsOldestByCount(t *testing.T) {
	c := NewChannel(Options{Epoch: "e", MaxEvents: 100})
	for i := 1; i <= 250; i++ {
		c.Publish(msg(i))
	}
	n, _, ev := c.Buffered()
	if n != 100 || ev != 150 {
		t.Fatalf("buffered %d, lastEvicted %d; want 100, 150", n, ev)
	}
}

// The README's "the last 10,000 events", written out: a test against
// DefaultMaxEvents would pass whatever it became.
func TestBufferDefaultIsTenThousandEvents(t *testing.T) {
	c := NewChannel(Options{Epoch: "e"})
	for i := 1; i <= 10000+7; i++ {
		c.Publish(Event{Data: []byte("{}")})
	}
	n, _, ev := c.Buffered()
	if n != 10000 || ev != 7 {
		t.Fatalf("buffered %d, lastEvicted %d; want 10000, 7", n, ev)
	}
}

func TestBufferEvictsOldestByUnits(t *testing.T) {
	c := NewChannel(Options{Epoch: "e"})
	big := bytes.Repeat([]byte("x"), 1024*1024) // 1 Mi units each
	for i := 0; i < 9; i++ {
		c.Publish(Event{Data: big})
	}
	n, units, ev := c.Buffered()
	if n != 8 || units != 8*1024*1024 || ev != 1 {
		t.Fatalf("buffered %d events, %d units, lastEvicted %d; want 8, 8 MiB, 1", n, units, ev)
	}
	// Units are UTF-16 code units: "é" is 1, "😀" is 2.
	if got := utf16Len([]byte("aé😀")); got != 4 {
		t.Fatalf("utf16Len = %d, want 4", got)
	}
	// A single event over the limit evicts everything, itself included.
	c2 := NewChannel(Options{Epoch: "e", MaxUnits: 10})
	c2.Publish(Event{Data: []byte("12345")})
	c2.Publish(Event{Data: bytes.Repeat([]byte("y"), 11)})
	if n, units, ev := c2.Buffered(); n != 0 || units != 0 || ev != 2 {
		t.Fatalf("oversized event: buffered %d, %d units, lastEvicted %d", n, units, ev)
	}
}

func TestReplayDecision(t *testing.T) {
	cases := []struct {
		id   string
		want Replay
		n    int // replayed events
	}{
		{"ep-x-3", Hit, 5},  // lastEvicted itself: everything after it is buffered
		{"ep-x-5", Hit, 3},  // 6, 7, 8
		{"ep-x-8", Hit, 0},  // up to date
		{"ep-x-2", Miss, 0}, // evicted
		{"ep-x-9", Miss, 0}, // not assigned yet
		{"ep-y-5", Miss, 0}, // other epoch
		{"ep-x--1", Miss, 0},
		{"ep-x-05x", Miss, 0},
		{"garbage", Miss, 0},
		{"", Miss, 0},
		{"ep-x-", Miss, 0},
		{"ep-x-+5", Miss, 0},
		{"ep-x-99999999999999999999999", Miss, 0},
	}
	for _, tc := range cases {
		c := NewChannel(Options{Epoch: "ep-x", MaxEvents: 5})
		for i := 1; i <= 8; i++ { // seqs 1..8; 4..8 buffered; lastEvicted 3
			c.Publish(msg(i))
		}
		s, mode := c.Subscribe(tc.id, true, []Event{Simple("hello")})
		q, _ := s.take()
		q = q[:len(q)-1] // the initial event
		s.Close()
		if mode != Hit && s.Replayed() != 0 || mode == Hit && s.Replayed() != tc.n {
			t.Errorf("Last-Event-ID %q: Replayed() = %d, want %d", tc.id, s.Replayed(), tc.n)
		}
		if mode != tc.want {
			t.Errorf("Last-Event-ID %q: %v, want %v", tc.id, mode, tc.want)
			continue
		}
		if mode == Miss {
			if len(q) != 1 || !strings.Contains(string(q[0]), `{"type":"resync_required"}`) {
				t.Errorf("%q: miss queued %q", tc.id, q)
			}
			continue
		}
		if len(q) != tc.n {
			t.Errorf("%q: replayed %d events, want %d", tc.id, len(q), tc.n)
		}
	}
}

func TestConnectionSequence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewChannel(Options{Epoch: "e"})
		for i := 1; i <= 3; i++ {
			c.Publish(msg(i))
		}
		initial := []Event{TaskState{State: StateRunning}.Event(), ApprovalRequest([]byte(`{"x":1}`), nil)}
		w := &sink{}
		s, _ := c.Subscribe("e-1", true, initial)
		stop := serve(s, w)
		c.Publish(msg(4))
		synctest.Wait()
		stop()
		got := parseSSE(t, w.text())
		want := []sseEvent{
			{"e-2", "", `{"n":2}`}, {"e-3", "", `{"n":3}`},
			{"e-4", EventServer, `{"type":"task_state","state":"running"}`},
			{"e-5", EventServer, `{"type":"approval_request","toolCall":{"x":1}}`},
			{"e-6", "", `{"n":4}`},
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("stream\n got %v\nwant %v", got, want)
		}
		// A miss: resync_required, then the initial events.
		w2 := &sink{}
		s2, _ := c.Subscribe("other-3", true, initial[:1])
		stop2 := serve(s2, w2)
		synctest.Wait()
		stop2()
		got = parseSSE(t, w2.text())
		if len(got) != 2 || got[0].data != `{"type":"resync_required"}` || got[0].id != "e-7" || got[1].id != "e-8" {
			t.Fatalf("miss stream %v", got)
		}
	})
}

func TestWritesAreWholeAndPingEvery20s(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewChannel(Options{Epoch: "e"})
		w := &sink{}
		s, _ := c.Subscribe("", false, nil)
		stop := serve(s, w)
		synctest.Wait()
		time.Sleep(19 * time.Second)
		synctest.Wait()
		if w.text() != "" {
			t.Fatalf("wrote %q before 20 s", w.text())
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if w.text() != ": ping\n\n" {
			t.Fatalf("after 20 s wrote %q", w.text())
		}
		time.Sleep(40 * time.Second)
		synctest.Wait()
		if strings.Count(w.text(), ": ping\n\n") != 3 {
			t.Fatalf("after 60 s wrote %q", w.text())
		}
		for i := 0; i < 50; i++ {
			c.Publish(msg(i))
		}
		synctest.Wait()
		stop()
		for _, wr := range w.writes {
			if !strings.HasSuffix(wr, "\n\n") {
				t.Fatalf("a write ended inside a frame: %q", wr)
			}
		}
		if n := len(parseSSE(t, w.text())); n != 53 {
			t.Fatalf("%d events and pings, want 53", n)
		}
	})
}

func TestPingIntervalOption(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A Hub's channels take it too (the session server's).
		c := NewHub(Options{PingInterval: 50 * time.Millisecond}).Channel("s")
		w := &sink{}
		s, _ := c.Subscribe("", false, nil)
		stop := serve(s, w)
		synctest.Wait()
		time.Sleep(49 * time.Millisecond)
		synctest.Wait()
		if w.text() != "" {
			t.Fatalf("wrote %q before 50 ms", w.text())
		}
		time.Sleep(101 * time.Millisecond)
		synctest.Wait()
		stop()
		if w.text() != ": ping\n\n: ping\n\n: ping\n\n" {
			t.Fatalf("after 150 ms wrote %q, want three pings", w.text())
		}
	})
}

func TestFailedWriteEndsServe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewChannel(Options{Epoch: "e"})
		w := &sink{fail: fmt.Errorf("broken pipe")}
		s, _ := c.Subscribe("", false, nil)
		done := make(chan error, 1)
		go func() { done <- s.Serve(context.Background(), w, nil) }()
		c.Publish(msg(1))
		if err := <-done; err == nil || err.Error() != "broken pipe" {
			t.Fatalf("Serve = %v", err)
		}
		if c.Subscribers() != 0 {
			t.Fatal("a failed subscriber is still registered")
		}
	})
}

func TestSlowSubscriberOverflowsWithoutBlocking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewChannel(Options{Epoch: "e", QueueLen: 10})
		slow := &sink{block: make(chan struct{})}
		fast := &sink{}
		ss, _ := c.Subscribe("", false, nil)
		fs, _ := c.Subscribe("", false, nil)
		slowDone := make(chan error, 1)
		go func() { slowDone <- ss.Serve(context.Background(), slow, nil) }()
		stopFast := serve(fs, fast)
		c.Publish(msg(1))
		synctest.Wait() // the slow writer is now stuck in Write with event 1
		for i := 2; i <= 100; i++ {
			c.Publish(msg(i)) // never blocks: the test would deadlock otherwise
			synctest.Wait()   // the fast subscriber keeps up
		}
		synctest.Wait()
		if c.Subscribers() != 1 {
			t.Fatalf("%d subscribers, want 1 (the slow one dropped)", c.Subscribers())
		}
		close(slow.block)
		if err := <-slowDone; err != ErrOverflow {
			t.Fatalf("slow Serve = %v, want ErrOverflow", err)
		}
		stopFast()
		if n := len(parseSSE(t, fast.text())); n != 100 {
			t.Fatalf("fast subscriber got %d events, want 100", n)
		}
		// The slow one recovers with its last id.
		got := parseSSE(t, slow.text())
		last := got[len(got)-1].id
		again := &sink{}
		s, mode := c.Subscribe(last, true, nil)
		stop := serve(s, again)
		synctest.Wait()
		stop()
		all := append(got, parseSSE(t, again.text())...)
		if mode != Hit || len(all) != 100 || all[99].id != "e-100" {
			t.Fatalf("recovered %v with %d events, last %v", mode, len(all), all[len(all)-1])
		}
	})
}

// Subscribing while another goroutine publishes loses and duplicates nothing.
func TestSubscribeIsAtomicWithPublish(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewChannel(Options{Epoch: "e"})
		const total = 2000
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; i <= total; i++ {
				c.Publish(msg(i))
			}
		}()
		type sub struct {
			w    *sink
			stop func() error
		}
		var subs []sub
		for k := 0; k < 20; k++ {
			w := &sink{}
			s, _ := c.Subscribe("", false, []Event{TaskState{State: StateRunning}.Event()})
			subs = append(subs, sub{w, serve(s, w)})
		}
		wg.Wait()
		synctest.Wait()
		for k, s := range subs {
			s.stop()
			evs := parseSSE(t, s.w.text())
			if evs[0].name != EventServer {
				t.Fatalf("subscriber %d: first event %v, want task_state", k, evs[0])
			}
			_, prev, _ := ParseID(evs[0].id)
			n := 0
			for _, e := range evs[1:] {
				_, seq, _ := ParseID(e.id)
				if seq <= prev {
					t.Fatalf("subscriber %d: %s after seq %d", k, e.id, prev)
				}
				prev = seq
				n++
			}
			var last int
			fmt.Sscanf(evs[len(evs)-1].data, `{"n":%d}`, &last)
			var first int
			if len(evs) > 1 {
				fmt.Sscanf(evs[1].data, `{"n":%d}`, &first)
				if last-first+1 != n {
					t.Fatalf("subscriber %d: %d messages from %d to %d: a gap or a duplicate", k, n, first, last)
				}
			}
			if len(evs) > 1 && last != total {
				t.Fatalf("subscriber %d ended at %d", k, last)
			}
		}
	})
}

func TestCloseEndsServe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewChannel(Options{Epoch: "e"})
		s, _ := c.Subscribe("", false, nil)
		done := make(chan error, 1)
		go func() { done <- s.Serve(context.Background(), &sink{}, nil) }()
		synctest.Wait()
		s.Close()
		if err := <-done; err != ErrClosed {
			t.Fatalf("Serve after Close = %v", err)
		}
		s2, _ := c.Subscribe("", false, nil)
		go func() { done <- s2.Serve(context.Background(), &sink{}, nil) }()
		synctest.Wait()
		c.Close()
		if err := <-done; err != ErrClosed {
			t.Fatalf("Serve after channel Close = %v", err)
		}
		if f := c.Publish(msg(1)); f.Seq != 0 {
			t.Fatal("Publish after Close numbered an event")
		}
	})
}

// A subscriber that stops reading holds at most DefaultQueueSize bytes of
// frames, whatever their size: it is dropped once more would wait for it,
// as it is at DefaultQueueLen events. Before, only the count was bounded:
// 4,095 events of 64 KiB (256 MiB) waited for a client that read nothing,
// for as long as the write timeout. A replay it reconnects to is not
// counted against it.
func TestStalledSubscriberHoldsBoundedBytes(t *testing.T) {
	c := NewChannel(Options{Epoch: "e"})
	big := Event{Data: []byte(`{"pad":"` + strings.Repeat("x", 16<<10) + `"}`)}
	s, _ := c.Subscribe("", false, nil)
	first := c.Publish(big)
	n := 1
	for c.Subscribers() == 1 && n < DefaultQueueLen {
		c.Publish(big)
		n++
	}
	if c.Subscribers() != 0 {
		t.Fatalf("%d events of %d bytes (%d in all) wait for a subscriber that reads nothing", n, len(first.Wire), n*len(first.Wire))
	}
	if max := 8<<20/len(first.Wire) + 1; n != max { // the README's 8 MiB, written out
		t.Fatalf("dropped at event %d, want %d (past 8 MiB)", n, max)
	}
	if _, err := s.take(); err != ErrOverflow {
		t.Fatalf("Serve would return %v, want ErrOverflow", err)
	}
	// Back with the first id: the buffer's events after it are replayed,
	// and its bound counts from there.
	back, mode := c.Subscribe(first.ID, true, nil)
	events, units, _ := c.Buffered()
	if mode != Hit || units < DefaultQueueSize/2 {
		t.Fatalf("replay %v of %d events, %d units", mode, events, units)
	}
	for range DefaultQueueSize / len(first.Wire) {
		c.Publish(big)
	}
	if c.Subscribers() != 1 {
		t.Fatal("a replay of the buffer counted against the subscriber's bound")
	}
	back.Close()
}

// A subscriber that reads nothing is dropped once 4,096 events wait for
// it (the README's number, written out), whatever their size.
func TestStalledSubscriberHoldsAtMost4096Events(t *testing.T) {
	c := NewChannel(Options{Epoch: "e"})
	s, _ := c.Subscribe("", false, nil)
	n := 0
	for c.Subscribers() == 1 && n < 100000 {
		c.Publish(Event{Data: []byte("{}")})
		n++
	}
	if n != 4097 {
		t.Fatalf("dropped at event %d, want 4097 (4,096 waiting)", n)
	}
	if _, err := s.take(); err != ErrOverflow {
		t.Fatalf("Serve would return %v, want ErrOverflow", err)
	}
}

// The replay buffer keeps each event's data once, in its wire frame: it
// kept the published data as well, so an idle channel (kept 30 minutes)
// held about 16 MB for its 8 MiB of events.
func TestBufferKeepsEachEventOnce(t *testing.T) {
	c := NewChannel(Options{Epoch: "e"})
	big := []byte(`{"pad":"` + strings.Repeat("x", 64<<10) + `"}`)
	for range 200 {
		c.Publish(Event{Data: append([]byte(nil), big...)})
	}
	held, wire := 0, 0
	for i := 0; i < c.count; i++ {
		f := &c.buf[(c.head+i)%len(c.buf)]
		held += len(f.Event.Data) + len(f.Event.Name) + len(f.Wire)
		wire += len(f.Wire)
	}
	_, units, _ := c.Buffered()
	if held != wire || wire > units+c.count*64 {
		t.Fatalf("the buffer holds %d bytes for %d units of data (%d of wire)", held, units, wire)
	}
	s, mode := c.Subscribe("e-100", true, nil)
	if q, _ := s.take(); mode != Hit || len(q) != 100 || !bytes.Contains(q[0], big) {
		t.Fatalf("replay %v of %d frames", mode, len(q))
	}
}

// writeLog records the size of each Write; the first waits until the
// test lets it go; all is closed once want bytes are written.
type writeLog struct {
	first   chan int
	release chan struct{}
	want    int
	all     chan struct{}
	sizes   []int
	sink
}

func (w *writeLog) Write(b []byte) (int, error) {
	if w.sizes == nil {
		w.first <- len(b)
		<-w.release
	}
	w.sizes = append(w.sizes, len(b))
	n, err := w.sink.Write(b)
	if len(w.text()) == w.want {
		close(w.all)
	}
	return n, err
}

// stoppedClock's time does not pass: a Sleep ends only with its context.
type stoppedClock struct{}

func (stoppedClock) Now() time.Time { return time.Unix(0, 0) }

func (stoppedClock) Sleep(ctx context.Context, d time.Duration) bool {
	<-ctx.Done()
	return false
}

// A subscriber that replays the whole buffer to a client that reads
// slowly, or not at all, copies at most maxBatch bytes into a Write, not
// the whole replay: each such client held a copy of the buffer, 8 MiB (50
// of them 433 MB), while its write waited. A frame longer than that is
// written alone.
func TestStalledReplayCopiesABoundedBatch(t *testing.T) {
	// A clock whose heartbeat never comes: the replay takes over 20 s on
	// a loaded machine under -race, and a ping then written after it was
	// read as a 7002nd event.
	c := NewChannel(Options{Epoch: "e", Clock: stoppedClock{}})
	first := c.Publish(Event{Data: []byte(`{"pad":"` + strings.Repeat("x", 1000) + `"}`)})
	want := 0
	for i := range 7000 {
		want += len(c.Publish(Event{Data: []byte(fmt.Sprintf(`{"n":%d,"pad":"%s"}`, i, strings.Repeat("x", 1000)))}).Wire)
	}
	huge := c.Publish(Event{Data: []byte(`{"pad":"` + strings.Repeat("y", 2*maxBatch) + `"}`)})
	want += len(huge.Wire)
	w := &writeLog{first: make(chan int), release: make(chan struct{}), want: want, all: make(chan struct{})}
	s, mode := c.Subscribe(first.ID, true, nil)
	if mode != Hit {
		t.Fatalf("replay %v", mode)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(context.Background(), w, nil) }()
	if n := <-w.first; n > 64<<10 { // the README's 64 KiB, written out
		t.Fatalf("the first write of a replay of %d bytes copied %d (bound 64 KiB)", want, n)
	}
	close(w.release)
	<-w.all
	s.Close()
	<-done
	for _, n := range w.sizes {
		if n > 64<<10 && n != len(huge.Wire) {
			t.Fatalf("a write of %d bytes", n)
		}
	}
	evs := parseSSE(t, w.text())
	if len(evs) != 7001 || evs[len(evs)-1].id != huge.ID {
		t.Fatalf("%d events, the last %q, want 7001 ending with %s", len(evs), evs[len(evs)-1].id, huge.ID)
	}
}

// A channel with MaxSubscribers subscribers refuses the next (Full): it
// is not registered, numbers nothing (its initial events take no seq) and
// its Serve returns ErrFull at once; once one leaves, the next is taken.
func TestSubscribeFull(t *testing.T) {
	c := NewChannel(Options{Epoch: "e", MaxSubscribers: 2})
	a, _ := c.Subscribe("", false, nil)
	c.Subscribe("", false, nil)
	s, mode := c.Subscribe("", false, []Event{Simple("hello")})
	if mode != Full || mode.String() != "full" || c.Subscribers() != 2 {
		t.Fatalf("third subscriber: %s, %d subscribers; want full, 2", mode, c.Subscribers())
	}
	if id := c.LastID(); id != "e-0" {
		t.Errorf("last id %s after a refused subscriber's initial event, want e-0", id)
	}
	if err := s.Serve(context.Background(), io.Discard, nil); err != ErrFull {
		t.Errorf("Serve of a refused subscriber: %v, want ErrFull", err)
	}
	a.Close()
	if _, mode := c.Subscribe("", false, nil); mode != Fresh {
		t.Errorf("after one left: %s, want fresh", mode)
	}
	if _, mode := NewChannel(Options{MaxSubscribers: -1}).Subscribe("", false, nil); mode != Fresh {
		t.Errorf("no bound: %s", mode)
	}
}
