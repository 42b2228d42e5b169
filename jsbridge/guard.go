//go:build js && wasm

package jsbridge

import (
	"runtime"
	"strconv"
	"syscall/js"
)

// PanicError is a recovered Go panic.
type PanicError struct {
	Where string // the entry point or goroutine that panicked
	Value any    // the value passed to panic
	Stack []byte
}

func (e *PanicError) Error() string {
	return "jsbridge: panic in " + e.Where + ": " + panicText(e.Value)
}

// PanicReporter receives every panic the bridge recovers. The default
// writes it with its stack to console.error. Tests replace it to fail on
// any report.
var PanicReporter = func(e *PanicError) {
	js.Global().Get("console").Call("error", e.Error()+"\n"+string(e.Stack))
}

// guard is the one recover helper of the bridge: every js.FuncOf body and
// every goroutine the bridge starts defers it first. A panic is reported
// through PanicReporter and handed to fail, which turns it into a rejected
// Promise, a failed callback result or an Error return value.
func guard(where string, fail func(error)) {
	r := recover()
	if r == nil {
		return
	}
	e := &PanicError{Where: where, Value: r, Stack: stack()}
	PanicReporter(e)
	if fail != nil {
		fail(e)
	}
}

// panicText renders a panic value without fmt (which the bridge does not
// link, for size).
func panicText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case error:
		return x.Error()
	case interface{ String() string }:
		return x.String()
	case int:
		return strconv.Itoa(x)
	}
	return "a panic value of a non-printable type"
}

// stack returns the panicking goroutine's stack (runtime.Stack: the bridge
// does not link runtime/debug and, through it, fmt).
func stack() []byte {
	buf := make([]byte, 8<<10)
	for {
		n := runtime.Stack(buf, false)
		if n < len(buf) || len(buf) >= 1<<20 {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}
