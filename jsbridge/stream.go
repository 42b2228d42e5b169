//go:build js && wasm

package jsbridge

import (
	"context"
	"runtime"
	"sync"
	"syscall/js"
	"unsafe"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// Batch limits of the consumer side.
const (
	maxBatch      = 1024      // messages per batch
	maxBatchBytes = 1 << 20   // bytes per batch (a batch may exceed it by one message)
	maxKeptBatch  = 256 << 10 // a batch buffer larger than this is not kept for the next pull
)

// stream is one output stream handed to JavaScript: a run, a manual
// compaction or a subagent run. pull and close may be called from any
// goroutine: pulls are serialized, and close aborts the run at once
// (engine.Run.Close waits for a pull in progress).
type stream struct {
	nextEach func(max int, f func(*omni.Message)) bool // the next message and those already produced (engine.Run.NextEach)
	close    func()                                    // abandon: abort and wait for the end (any goroutine)
	cancel   context.CancelCauseFunc
	stop     func() // release the AbortSignal listener
	onEnd    func() // the owner's bookkeeping (session no longer busy…)

	turn    chan struct{} // capacity 1: held by the goroutine using next/close
	ended   bool
	buf     []byte
	hotMid  []byte         // the batches' recordWriter.hotMid, reused
	pending []omni.Message // taken from the engine, not yet handed to JavaScript
	endOne  sync.Once

	// The batch being pulled (add).
	addFn func(*omni.Message) // add, made once
	w     recordWriter
	out   []byte
	full  bool
}

func newStream() *stream {
	s := &stream{turn: make(chan struct{}, 1)}
	s.addFn = s.add
	return s
}

// runStream wraps an engine run.
func runStream(r *engine.Run) *stream {
	s := newStream()
	s.nextEach, s.close = r.NextEach, r.Close
	return s
}

// pullBatch waits for the next message, then takes every message that is
// already produced (E-3.2; Run.NextEach), and returns them as records
// (records.go; jsonOnly: J records only) in UTF-8, or false at the end.
// The bytes are the stream's buffer, valid until the next pullBatch.
// Messages that do not fit the batch stay pending for the next pull.
func (s *stream) pullBatch(jsonOnly bool) ([]byte, bool) {
	s.turn <- struct{}{}
	defer func() { <-s.turn }()
	s.w = recordWriter{jsonOnly: jsonOnly, hotMid: s.hotMid[:0]}
	s.out, s.full = s.buf[:0], false
	defer func() { s.hotMid, s.w = s.w.hotMid, recordWriter{} }()
	if pending := s.pending; len(pending) > 0 {
		s.pending = nil
		for i := range pending {
			s.add(&pending[i])
		}
	} else {
		if s.ended {
			return nil, false
		}
		if !s.nextEach(maxBatch, s.addFn) {
			s.end()
			return nil, false
		}
	}
	b := s.out
	s.out = nil
	s.buf = b
	if cap(b) > maxKeptBatch {
		s.buf = nil // JavaScript reads the batch before the next pull
	}
	return b, true
}

// add writes one message of the batch being pulled as records, where the
// engine holds it (no copy), or, once the batch is full, keeps a copy of
// it pending for the next pull.
func (s *stream) add(m *omni.Message) {
	if s.full {
		s.pending = append(s.pending, *m)
		return
	}
	var last bool
	s.out, last = s.w.append(s.out, m)
	s.full = last || len(s.out) >= maxBatchBytes
}

// abandon closes the run (which aborts it, waits for a pull in progress and
// for the engine to finish, E-3.3a) and ends the stream.
func (s *stream) abandon() {
	s.close()
	s.turn <- struct{}{}
	defer func() { <-s.turn }()
	s.end()
}

// end runs once when the stream ended or was abandoned.
func (s *stream) end() {
	s.ended = true
	s.endOne.Do(func() {
		s.stop()
		s.cancel(nil)
		if s.onEnd != nil {
			s.onEnd()
		}
	})
}

// pull is the export behind MessageStream.next (floe.d.ts; the shim
// serves next() from its buffer and pulls when it is empty):
// pull(streamID, ticket, jsonOnly?) takes the next batch on a worker
// goroutine and answers through the port (usePort) with numbers
// only: port.batch(ticket, ptr, n) hands the batch's records (records.go) as n
// bytes of UTF-8 at ptr in the module's memory, to be read during the
// call; n is -1 at the end (also for an unknown id). A failure is
// port.fail(ticket, error). jsonOnly (tests) asks for J records only.
func (b *Bridge) pull(args []js.Value) (any, error) {
	id, err := wantInt(arg(args, 0), "pull: id")
	if err != nil {
		return nil, err
	}
	ticket, err := wantInt(arg(args, 1), "pull: ticket")
	if err != nil {
		return nil, err
	}
	if b.port.Type() != js.TypeObject {
		return nil, badArg("pull", "no batch host: call useBatches first")
	}
	b.pullStart(id, ticket, arg(args, 2).Truthy())
	return nil, nil
}

// pullStart takes stream id's next batch on a worker goroutine and answers
// ticket through the port (see pull). It does not block.
func (b *Bridge) pullStart(id, ticket int, jsonOnly bool) {
	s, ok := b.streams.get(id)
	b.spawn(func() {
		defer guard("pull", func(err error) { b.portFn[portFail].Invoke(ticket, jsError(err)) })
		if !ok {
			b.portFn[portBatch].Invoke(ticket, 0, -1)
			return
		}
		buf, more := s.pullBatch(jsonOnly)
		if s.ended {
			b.streams.remove(id)
		}
		if !more {
			b.portFn[portBatch].Invoke(ticket, 0, -1)
			return
		}
		b.portFn[portBatch].Invoke(ticket, uintptr(unsafe.Pointer(unsafe.SliceData(buf))), len(buf))
		runtime.KeepAlive(buf)
	})
}

// The port's functions, indexes of Bridge.portFn.
const (
	portBatch = iota
	portFail
	portPull
	portAbort
	portStop
)

var portNames = [...]string{"batch", "fail", "pull", "abort", "stop"}

// usePort is the export usePort(port): the shim's side of the exchange,
// called with numbers only. port.batch(ticket, ptr, n) and
// port.fail(ticket, error) answer pulls (see pull); port.pull(id),
// port.abort(id) and port.stop(id) drive the producer pump id (pump.go).
// port.argv, an array, if given, carries the arguments and the result of
// the calls made through floe_call's op 4 (callIndexed).
func (b *Bridge) usePort(args []js.Value) (any, error) {
	h := arg(args, 0)
	if h.Type() != js.TypeObject {
		return nil, badArg("usePort: port", "want an object, got "+typeName(h))
	}
	for i, f := range portNames {
		if b.portFn[i] = h.Get(f); b.portFn[i].Type() != js.TypeFunction {
			return nil, badArg("usePort: port."+f, "want a function, got "+typeName(b.portFn[i]))
		}
	}
	if a := h.Get("argv"); a.Type() == js.TypeObject {
		b.argv = a
	}
	b.port = h
	fast = b
	return nil, nil
}

// closeStream is the export behind MessageStream.return:
// closeStream(streamID) → Promise<void>, abort
// the stream and resolve once the engine finished (E-3.3a).
func (b *Bridge) closeStream(args []js.Value) (any, error) {
	id, err := wantInt(arg(args, 0), "close: id")
	if err != nil {
		return nil, err
	}
	s, ok := b.streams.get(id)
	return b.async("close", func() (any, error) {
		if ok {
			s.abandon()
			b.streams.remove(id)
		}
		return nil, nil
	}), nil
}
