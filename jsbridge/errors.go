//go:build js && wasm

package jsbridge

import (
	"github.com/floehq/floe/internal/errf"
	"syscall/js"
)

// Codes of a FloeError (static/floe.d.ts FloeErrorCode).
const (
	CodeBadArgument = "bad_argument" // a JS argument is missing or has the wrong type
	CodeSessionBusy = "session_busy" // a run or compaction is already in flight (E-3.3)
	CodeClosed      = "closed"       // the session, run or callback has ended
	CodeInternal    = "internal"     // a recovered Go panic or an unexpected engine error
)

// Error is an error that reaches JavaScript as an Error whose name is
// "FloeError".
type Error struct {
	Code string
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// badArg returns a bad_argument error naming the argument.
func badArg(name, msg string) *Error {
	return &Error{Code: CodeBadArgument, Msg: name + ": " + msg}
}

// closedErr returns a closed error for what.
func closedErr(what string) *Error {
	return &Error{Code: CodeClosed, Msg: what + " is closed"}
}

// jsError turns err into a JavaScript Error with name "FloeError" and a
// code; errors that are not *Error get the code "internal".
func jsError(err error) js.Value {
	fe, ok := errf.As[*Error](err)
	if !ok {
		fe = &Error{Code: CodeInternal, Msg: err.Error()}
	}
	e := js.Global().Get("Error").New(fe.Msg)
	e.Set("name", "FloeError")
	e.Set("code", fe.Code)
	return e
}

// typeName names the JavaScript type of v for error messages.
func typeName(v js.Value) string {
	switch v.Type() {
	case js.TypeObject:
		if js.Global().Get("Array").Call("isArray", v).Bool() {
			return "array"
		}
		return "object"
	default:
		return v.Type().String()
	}
}

// absent reports whether v is undefined or null.
func absent(v js.Value) bool { return v.IsUndefined() || v.IsNull() }

// arg returns args[i], or undefined when it is missing.
func arg(args []js.Value, i int) js.Value {
	if i < len(args) {
		return args[i]
	}
	return js.Undefined()
}

// wantString returns v as a string or a bad_argument error naming it.
func wantString(v js.Value, name string) (string, error) {
	if v.Type() != js.TypeString {
		return "", badArg(name, "want a string, got "+typeName(v))
	}
	return v.String(), nil
}

// wantInt returns v as an integer or a bad_argument error naming it.
func wantInt(v js.Value, name string) (int, error) {
	if v.Type() != js.TypeNumber {
		return 0, badArg(name, "want a number, got "+typeName(v))
	}
	f := v.Float()
	if f != float64(int(f)) {
		return 0, badArg(name, "want an integer, got "+js.Global().Get("String").Invoke(v).String()) // JavaScript's form of the number
	}
	return int(f), nil
}

// wantObject checks that v is an object (not null, not a function).
func wantObject(v js.Value, name string) error {
	if v.Type() != js.TypeObject {
		return badArg(name, "want an object, got "+typeName(v))
	}
	return nil
}

// wantFunc checks that v is a function.
func wantFunc(v js.Value, name string) error {
	if v.Type() != js.TypeFunction {
		return badArg(name, "want a function, got "+typeName(v))
	}
	return nil
}

// optFunc checks that v is a function when present.
func optFunc(v js.Value, name string) error {
	if absent(v) {
		return nil
	}
	return wantFunc(v, name)
}
