//go:build js && wasm

package jsx

import (
	"context"
	"strings"
	"syscall/js"
	"testing"
)

// A JavaScript throw comes back as an error naming it, from a method call
// and from a plain function call alike; a call that returns gives its value.
func TestCallAndInvokeCatchThrows(t *testing.T) {
	thrower := js.Global().Get("Function").New("throw new TypeError('bad this')")
	obj := js.Global().Get("Object").New()
	obj.Set("boom", thrower)
	if _, err := Call(obj, "boom"); err == nil || err.Error() != "TypeError: bad this" {
		t.Errorf("Call: %v", err)
	}
	if _, err := Invoke(thrower); err == nil || err.Error() != "TypeError: bad this" {
		t.Errorf("Invoke: %v", err)
	}
	// Invoke's this is undefined: a sloppy-mode function sees the global object, a strict one undefined.
	this := js.Global().Get("Function").New("'use strict'; return typeof this")
	if v, err := Invoke(this); err != nil || v.String() != "undefined" {
		t.Errorf("Invoke's this: %v %v", v, err)
	}
	if v, err := Call(js.Global().Get("Math"), "max", 2, 5); err != nil || v.Int() != 5 {
		t.Errorf("Call: %v %v", v, err)
	}
	// A method the object lacks (a browser without it) is an error naming
	// it: syscall/js panics there, and the panic ended the Go program.
	handle := js.Global().Get("Function").New("class FileSystemFileHandle { getFile() {} }; return new FileSystemFileHandle()").Invoke()
	if _, err := Call(handle, "createWritable"); err == nil || err.Error() != "TypeError: FileSystemFileHandle.createWritable is not a function in this browser" {
		t.Errorf("Call of a missing method: %v", err)
	}
	if _, err := AwaitCall(context.Background(), js.Global().Get("Object").New(), "getDirectory"); err == nil || err.Error() != "TypeError: Object.getDirectory is not a function in this browser" {
		t.Errorf("AwaitCall of a missing method: %v", err)
	}
	// A Go panic that is not a JavaScript throw is not swallowed.
	defer func() {
		if p := recover(); p == nil || !strings.Contains(p.(error).Error(), "call of") {
			t.Errorf("panic %v", p)
		}
	}()
	Invoke(js.ValueOf(3))
}
