package transport

import (
	"context"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
)

// A typical streamed event: one partial_text delta as the engine encodes it.
var benchEvent = []byte(`{"timestamp":"2026-12-01T09:00:00.000Z","type":"model_msg","payload":{"type":"partial_text","role":"assistant","event_type":"delta","text":"word "}}`)

// conns returns n loopback TCP connections whose far ends are drained by
// goroutines that report when they have read want bytes.
func conns(b *testing.B, n int) (writers []net.Conn, expect func(want int64), wait func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var want int64
	for range n {
		w, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		r, err := ln.Accept()
		if err != nil {
			b.Fatal(err)
		}
		writers = append(writers, w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer r.Close()
			buf := make([]byte, 64<<10)
			var got int64
			for {
				k, err := r.Read(buf)
				got += int64(k)
				mu.Lock()
				done := want > 0 && got >= want
				mu.Unlock()
				if done || err != nil {
					io.Copy(io.Discard, r)
					return
				}
			}
		}()
	}
	expect = func(v int64) { mu.Lock(); want = v; mu.Unlock() }
	wait = func() {
		for _, w := range writers {
			w.(*net.TCPConn).CloseWrite()
		}
		wg.Wait()
		for _, w := range writers {
			w.Close()
		}
	}
	return writers, expect, wait
}

// BenchmarkFanout moves b.N events to n subscribers over loopback TCP:
// "channel" publishes through a Channel whose subscribers Serve the
// connections; "direct" writes the same frames to the same connections in a
// loop. The events/s metric is events published (each reaches every
// subscriber). The subscriber queue is sized to b.N so the publisher's
// burst never overflows it.
func BenchmarkFanout(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		b.Run("subs="+strconv.Itoa(n)+"/channel", func(b *testing.B) {
			ws, expect, wait := conns(b, n)
			c := NewChannel(Options{Epoch: "e", QueueLen: b.N + 1})
			var served sync.WaitGroup
			for _, w := range ws {
				s, _ := c.Subscribe("", false, nil)
				served.Add(1)
				go func() { defer served.Done(); s.Serve(context.Background(), w, nil) }()
			}
			var total int64
			b.ResetTimer()
			for range b.N {
				total += int64(len(c.Publish(Event{Data: benchEvent}).Wire))
			}
			expect(total)
			wait()
			b.StopTimer()
			c.Close()
			served.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
		b.Run("subs="+strconv.Itoa(n)+"/direct", func(b *testing.B) {
			ws, expect, wait := conns(b, n)
			c := NewChannel(Options{Epoch: "e"}) // frames numbered the same way
			var total int64
			b.ResetTimer()
			for i := range b.N {
				wire := encodeFrame(FormatID("e", uint64(i+1)), Event{Data: benchEvent})
				total += int64(len(wire))
				for _, w := range ws {
					w.Write(wire)
				}
			}
			expect(total)
			wait()
			b.StopTimer()
			c.Close()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
