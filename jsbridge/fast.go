//go:build js && wasm

package jsbridge

import "unsafe"

// The fast export: a function of the module itself (//go:wasmexport), which
// the shim calls with numbers only, instead of js.Func calls, for the
// traffic of a run: a producer's batch, a settled Promise with a string or
// no value, a consumer's pull; and for every other export while Go is
// idle.
//
// A js.Func call costs about 26 µs here: syscall/js reads the pending
// event, its this and its arguments through six or more JS calls, gives
// each object a finalizer, and a goroutine is started for the next idle
// pause. An export costs about 0.1 µs, but runs no goroutine but its
// own: what it hands over waits until Go runs again. So the shim makes the
// calls of one JavaScript task back to back and then the runtime's
// resume once (about 4 µs), which runs every goroutine they woke, as the
// end of a js.Func call does.
//
// Ops 0 to 3 only hand over (a channel send that never blocks, a spawn);
// op 4 runs one of the bridge's exports as its js.Func would (none waits
// for a JavaScript event, which a js.Func call could not wait for
// either). floe_call is called only while Go is idle, never from inside a
// Go → JavaScript call.

// fast is the Bridge whose port the shim set (usePort): the one the
// export serves.
var fast *Bridge

// inbox holds the bytes of the next call's text; the shim writes them in
// place (floeCall op 0). One bigger than maxInbox is dropped once read, so
// a single long batch does not keep its memory, and the batch's text takes
// that memory rather than a copy of it.
var inbox []byte

const maxInbox = 256 << 10

// inboxText returns the first n bytes of the inbox as a string (n checked
// by the caller).
func inboxText(n int32) string {
	if cap(inbox) > maxInbox {
		// The long text takes the inbox's memory: the inbox is dropped, so
		// nothing writes these bytes again.
		s := unsafe.String(unsafe.SliceData(inbox), n)
		inbox = nil
		return s
	}
	return string(inbox[:n])
}

// floeCall is the one export, floe_call(op, a, b, c) → 1, or 0 when the
// bridge has no port yet or the arguments are out of range. It is written
// not to panic (a panic here would end the runtime), so it checks instead
// of recovering:
//
//	op 0: make room for a bytes of text in the inbox; returns where, in the
//	      module's memory, the shim writes them (the buffer is kept until a
//	      bigger one is needed: Go's heap does not move)
//	op 1: deliver (bridge.go) to pump a the batch of b bytes of records in
//	      the inbox, end code c, end value undefined
//	op 2: settle (bridge.go) waiter a, ok b (0 or 1), with the string of c
//	      bytes in the inbox, or undefined when c is -1
//	op 3: pull (stream.go) stream a, ticket b, jsonOnly c
//	op 4: call the export a (bridge.go callIndexed) with b arguments
//
//go:wasmexport floe_call
func floeCall(op, a, b, c int32) int32 {
	br := fast
	if br == nil {
		return 0
	}
	switch op {
	case 0:
		if a < 0 {
			return 0
		}
		if int(a) > cap(inbox) {
			inbox = make([]byte, max(int(a), 4096))
		}
		return int32(uintptr(unsafe.Pointer(unsafe.SliceData(inbox))))
	case 1:
		if b < 0 || int(b) > len(inbox) {
			return 0
		}
		br.waiters.send(int(a), reply{json: inboxText(b), end: int(c)})
	case 2:
		if int(c) > len(inbox) {
			return 0
		}
		r := reply{end: endDone}
		if b == 0 {
			r.end = endThrew
		}
		if c >= 0 {
			r.text, r.isStr = inboxText(c), true
		}
		br.waiters.send(int(a), r)
	case 3:
		br.pullStart(int(a), int(b), c != 0)
	case 4:
		if !br.callIndexed(int(a), int(b)) {
			return 0
		}
	default:
		return 0
	}
	return 1
}
