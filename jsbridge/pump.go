//go:build js && wasm

package jsbridge

import (
	"context"
	"syscall/js"

	"github.com/floehq/floe/engine/omni"
)

// pump is the Go end of one producer callback (one model request or one tool
// execution): the shim drains the callback's async iterator and answers
// each pull with a batch. Used by one goroutine.
type pump struct {
	_       [0]func() // not comparable: no equality code in floe.wasm
	b       *Bridge
	id      int
	ch      chan reply
	what    string // "llm.streamGenerate" or "environment.executeTool", for messages
	aborted bool
	stopped bool
	pulled  bool // the first batch was asked for: start asks for it
	ended   bool // the shim sent the producer's end and forgot its side

	abandoned <-chan struct{} // closed when the engine abandons the callback

	out emitter // where the batches' messages go
}

// errAbandoned is returned when the engine abandoned the callback: it did
// not finish within the abort grace (engine.Config.AbortGrace).
type errAbandoned struct{ what string }

func (e *errAbandoned) Error() string {
	return e.what + " was abandoned: it did not finish within the abort grace"
}

// newPump registers a pump and calls start(id) to create the shim's side,
// which the port's pull(id), abort(id) and stop(id) then drive. The shim's
// side starts out asked for its first batch, so a producer that yields a
// single batch costs one call from Go: its start.
func (b *Bridge) newPump(what string, abandoned <-chan struct{}, start func(id int)) *pump {
	id, ch := b.waiters.add()
	p := &pump{b: b, id: id, ch: ch, what: what, abandoned: abandoned}
	start(id)
	return p
}

// next asks for the next batch and waits for it. When ctx is done it aborts
// the callback's signal once and keeps waiting (the callback may still emit
// and return, E-9.2) until the engine abandons the callback
// (GenerateParams.Abandoned, ToolRequest.Abandoned).
func (p *pump) next(ctx context.Context) (reply, error) {
	if p.pulled {
		p.b.portFn[portPull].Invoke(p.id)
	}
	p.pulled = true
	if !p.aborted {
		select {
		case r := <-p.ch:
			return r, nil
		case <-ctx.Done():
			p.abort(abortReason(ctx))
		}
	}
	select {
	case r := <-p.ch:
		return r, nil
	case <-p.abandoned:
		return reply{}, &errAbandoned{p.what}
	}
}

// abort fires the AbortSignal handed to the callback with reason
// (undefined: an AbortError).
func (p *pump) abort(reason js.Value) {
	if p.aborted {
		return
	}
	p.aborted = true
	p.b.portFn[portAbort].Invoke(p.id, reason)
}

// end stops p (nil when start panicked) and clears the buffer of its
// batches, which it keeps in *buf (when not nil) for the next producer.
func (p *pump) end(buf *[]omni.Message) {
	if p == nil {
		return
	}
	p.stop()
	if o := &p.out; o.used > 0 {
		clear(o.buf[:o.used]) // the strings of the last batches
		if buf != nil {
			*buf = o.buf[:0]
		}
	}
}

// stop ends the shim's side (aborting the signal and returning the
// iterator if it has not finished) and forgets the pump. Safe to call more
// than once. After the producer's end the shim has already forgotten its
// side, and nothing crosses.
func (p *pump) stop() {
	if p == nil || p.stopped {
		return
	}
	p.stopped = true
	p.b.waiters.remove(p.id)
	if !p.ended {
		p.b.portFn[portStop].Invoke(p.id)
	}
}

// produce runs one producer callback: it registers a pump, calls
// start(id) to create the shim's side, emits the messages of its batches
// in order until the producer ends, and stops the pump. end is endDone
// (value is the iterator's return value), endThrew or endBad (msg says
// why; a message that does not decode is endBad, "yielded an invalid
// message: …"); err is the error of a producer that the engine abandoned
// after its abort.
//
// With emitBatch (GenerateParams.EmitBatch) the messages of a batch go
// to the engine together, up to batchMsgs at a time, gathered in a buffer
// that produce keeps in *buf (when not nil) for the next call.
//
// A message of a batch that carries no timestamp is stamped with the time
// the batch reached Go, one read of the session's clock a batch: the time
// it entered the engine, whenever the consumer reads it. With a nil clock
// the engine stamps it as it queues it.
func (b *Bridge) produce(ctx context.Context, what string, abandoned <-chan struct{}, clock *sessionClock, start func(id int), emit func(omni.Message), emitBatch func([]omni.Message), buf *[]omni.Message) (end int, value js.Value, msg string, err error) {
	var p *pump
	defer func() { p.end(buf) }()
	p = b.newPump(what, abandoned, start)
	p.out = emitter{emit: emit, batch: emitBatch}
	if buf != nil {
		p.out.buf = *buf
	}
	var st *batchStamp
	if clock != nil {
		// The session's last stamp: within its minute, a stamp costs no
		// calendar arithmetic (omni.Stamper).
		st = &batchStamp{now: clock.now, Stamper: clock.last}
		defer func() { clock.last = st.Stamper }()
	}
	for {
		r, err := p.next(ctx)
		if err != nil {
			return 0, js.Value{}, "", err
		}
		p.ended = r.end != endMore
		if r.json != "" {
			if st != nil {
				st.read = false // a new batch: a new instant
			}
			err := eachRecordAt(r.json, st, &p.out)
			p.out.flush()
			if err != nil {
				return endBad, js.Value{}, "yielded an invalid message: " + err.Error(), nil
			}
		}
		if r.end != endMore {
			return r.end, r.value, endMessage(r), nil
		}
	}
}

// endMessage returns the message of an endThrew / endBad reply.
func endMessage(r reply) string {
	if s, ok := r.str(); ok {
		return s
	}
	return "unknown error"
}
