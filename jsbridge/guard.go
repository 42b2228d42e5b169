//go:build js && wasm

package jsbridge

import (
	"fmt"
	"runtime/debug"
	"syscall/js"
)

// PanicError is a recovered Go panic.
type PanicError struct {
	Where string // the entry point or goroutine that panicked
	Value any    // the value passed to panic
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("jsbridge: panic in %s: %v", e.Where, e.Value)
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
	e := &PanicError{Where: where, Value: r, Stack: debug.Stack()}
	PanicReporter(e)
	if fail != nil {
		fail(e)
	}
}
