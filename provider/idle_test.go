package provider

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider/sse"
)

// fakeTicks replaces afterFunc for the test: the test runs each tick
// itself, by calling the function it returns, which fails when no tick
// is pending. It also returns how many ticks were started and stopped.
func fakeTicks(t *testing.T) (started <-chan struct{}, tick func() bool, counts func() (starts, stops int)) {
	var mu sync.Mutex
	var next func()
	var starts, stops int
	ch := make(chan struct{}, 100)
	old := afterFunc
	afterFunc = func(d time.Duration, f func()) interface{ Stop() bool } {
		mu.Lock()
		defer mu.Unlock()
		if d != tickWant {
			t.Errorf("tick of %v, want %v", d, tickWant)
		}
		next = f
		starts++
		ch <- struct{}{}
		return stopFunc(func() bool {
			mu.Lock()
			defer mu.Unlock()
			stops++
			next = nil
			return true
		})
	}
	t.Cleanup(func() { afterFunc = old })
	tick = func() bool {
		mu.Lock()
		f := next
		next = nil
		mu.Unlock()
		if f != nil {
			f()
		}
		return f != nil
	}
	return ch, tick, func() (int, int) {
		mu.Lock()
		defer mu.Unlock()
		return starts, stops
	}
}

// tickWant is the tick the tests' watchdogs should start: a quarter of
// their idle timeout of 4 s.
const tickWant = time.Second

type stopFunc func() bool

func (f stopFunc) Stop() bool { return f() }

// pipeTransport answers 200 with a body the test writes; cancelling the
// request's context fails the body's reads, as the Transport contract asks.
// Each read of the body, when it starts, is reported on reading.
func pipeTransport(pw **io.PipeWriter, called, reading chan<- struct{}) Transport {
	return TransportFunc(func(ctx context.Context, _ *Request) (*Response, error) {
		pr, w := io.Pipe()
		*pw = w
		go func() {
			<-ctx.Done()
			w.CloseWithError(ctx.Err())
		}()
		called <- struct{}{}
		return &Response{Status: 200, Header: map[string]string{"content-type": "text/event-stream"}, Body: &reportingReader{pr, reading}}, nil
	})
}

type reportingReader struct {
	r       *io.PipeReader
	reading chan<- struct{}
}

func (r *reportingReader) Read(b []byte) (int, error) {
	r.reading <- struct{}{}
	return r.r.Read(b)
}

func (r *reportingReader) Close() error { return r.r.Close() }

// eventDecoder reports each event on got, then waits for hold when the
// event's data is "hold", and ends at data "done".
type eventDecoder struct {
	got  chan string
	hold chan struct{}
}

func (d *eventDecoder) Event(ev *sse.Event) error {
	d.got <- string(ev.Data)
	switch string(ev.Data) {
	case "hold":
		<-d.hold
	case "done":
		return ErrDone
	}
	return nil
}
func (d *eventDecoder) End() error            { return nil }
func (d *eventDecoder) Usage() (Usage, int64) { return Usage{}, 0 }

// A request ends as timeout once idleTicks ticks of its watchdog pass
// while it waits on the server, after the tick that saw its last read
// (between idle and 1.25 × idle); a read starts the count again, and so
// does the time the decoder takes (its emit waits while the engine's
// queue is full), however long.
func TestIdleTimeout(t *testing.T) {
	started, tick, counts := fakeTicks(t)
	var pw *io.PipeWriter
	called, reading := make(chan struct{}, 1), make(chan struct{}, 100)
	d := &eventDecoder{got: make(chan string, 1), hold: make(chan struct{})}
	done := make(chan *Failure, 1)
	go func() {
		done <- Stream(context.Background(), pipeTransport(&pw, called, reading), &Request{}, "x", 4*time.Second, d)
	}()
	<-started
	<-called
	<-reading
	// send writes an event and returns once it was handled and the next
	// read has begun.
	send := func(data string) {
		t.Helper()
		go pw.Write([]byte("data: " + data + "\n\n"))
		if got := <-d.got; got != data {
			t.Fatalf("event %q, want %q", got, data)
		}
		if data == "hold" {
			return
		}
		<-reading
	}
	ticks := func(n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			if !tick() {
				t.Fatalf("tick %d of %d: none pending", i+1, n)
			}
		}
	}
	pending := func() {
		t.Helper()
		select {
		case f := <-done:
			t.Fatalf("ended early: %+v", f)
		default:
		}
	}
	send("a")
	ticks(idleTicks) // one tick sees the read, then idleTicks-1 quiet ones
	send("b")
	ticks(1)
	send("hold") // the decoder holds the stream: no wait on the server
	ticks(10 * idleTicks)
	pending()
	close(d.hold)
	<-reading
	ticks(idleTicks)
	pending()
	ticks(1)
	f := <-done
	if f == nil || f.Status != omni.StatusTimeout || f.Message != "x: no data from the server for 4s (the idle timeout)" {
		t.Fatalf("got %+v, want the idle timeout", f)
	}
	if tick() {
		t.Error("a tick was pending after the timeout")
	}
	if starts, stops := counts(); starts != 12*idleTicks+2 || stops != 1 {
		t.Errorf("%d ticks started, %d stopped, want %d and 1", starts, stops, 12*idleTicks+2)
	}
}

// A server that sends no headers is timed too; a stream that ends stops
// its watchdog, and a cancelled run is aborted, not timeout.
func TestIdleTimeoutStops(t *testing.T) {
	started, tick, counts := fakeTicks(t)
	var pw *io.PipeWriter
	called, reading := make(chan struct{}, 1), make(chan struct{}, 100)
	d := &eventDecoder{got: make(chan string, 1)}
	done := make(chan *Failure, 1)

	never := TransportFunc(func(ctx context.Context, _ *Request) (*Response, error) {
		called <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	})
	go func() { done <- Stream(context.Background(), never, &Request{}, "x", 4*time.Second, d) }()
	<-started
	<-called
	for i := 0; i <= idleTicks; i++ {
		tick()
	}
	if f := <-done; f == nil || f.Status != omni.StatusTimeout {
		t.Fatalf("no headers: %+v, want the idle timeout", f)
	}

	go func() {
		done <- Stream(context.Background(), pipeTransport(&pw, called, reading), &Request{}, "x", 4*time.Second, d)
	}()
	<-started
	<-called
	go pw.Write([]byte("data: done\n\n"))
	<-d.got
	if f := <-done; f != nil {
		t.Fatalf("completed stream: %+v", f)
	}
	if tick() {
		t.Error("a tick was pending after the end")
	}
	if starts, stops := counts(); starts != idleTicks+2 || stops != 2 {
		t.Errorf("after the end: %d ticks started, %d stopped, want %d and 2", starts, stops, idleTicks+2)
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- Stream(ctx, pipeTransport(&pw, called, reading), &Request{}, "x", 4*time.Second, d) }()
	<-started
	<-called
	cancel()
	if f := <-done; f == nil || f.Status != omni.StatusAborted {
		t.Fatalf("cancelled: %+v, want aborted", f)
	}
}

func TestIdleTimeoutOption(t *testing.T) {
	// 0 is the README's "5 minutes", written out: a test against the
	// constant would pass whatever it became.
	for in, want := range map[time.Duration]time.Duration{0: 5 * time.Minute, -1: 0, time.Second: time.Second} {
		if got := IdleTimeout(in); got != want {
			t.Errorf("IdleTimeout(%v) = %v, want %v", in, got, want)
		}
	}
}

// A body of JSON lines (NDJSON) is timed by its bytes too: blank lines a
// server sends to keep the connection alive while it works are bytes
// from the server, and the request does not end while they come. The
// framing read on through them without returning, so the watchdog saw
// one long wait and ended the request as idle.
func TestIdleTimeoutNDJSONBlankLines(t *testing.T) {
	started, tick, _ := fakeTicks(t)
	var pw *io.PipeWriter
	called, reading := make(chan struct{}, 1), make(chan struct{}, 100)
	d := &eventDecoder{got: make(chan string, 1)}
	done := make(chan *Failure, 1)
	go func() {
		done <- Stream(context.Background(), NDJSON(pipeTransport(&pw, called, reading)), &Request{}, "x", 4*time.Second, d)
	}()
	<-started
	<-called
	<-reading
	go pw.Write([]byte("a\n"))
	if got := <-d.got; got != "a" {
		t.Fatalf("event %q, want a", got)
	}
	<-reading
	for i := 0; i < 3*idleTicks; i++ {
		go pw.Write([]byte("\n"))
		select {
		case <-reading:
		case f := <-done:
			t.Fatalf("ended after %d blank lines: %+v", i, f)
		}
		if !tick() {
			t.Fatalf("tick %d: none pending", i)
		}
	}
	go pw.Write([]byte("done\n"))
	if got := <-d.got; got != "done" {
		t.Fatalf("event %q, want done", got)
	}
	if f := <-done; f != nil {
		t.Fatalf("completed stream: %+v", f)
	}
}
