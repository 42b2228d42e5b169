//go:build js && wasm

package jsbridge

import (
	"context"
	"errors"
	"syscall/js"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// jsTrace adapts the shim's trace sink — write(recordJSON) and rotate(),
// each returning undefined or an error message — to [engine.TraceSink].
// Writes are synchronous calls: a sink that returns a Promise is not waited
// for (the shim reports its rejection as a diagnostic).
type jsTrace struct {
	host js.Value
	buf  []byte
}

// Write implements [engine.TraceSink].
func (t *jsTrace) Write(_ context.Context, m omni.Message) (err error) {
	defer guard("trace.write", func(e error) { err = e })
	t.buf = m.AppendJSON(t.buf[:0])
	return sinkErr(t.host.Call("write", string(t.buf)))
}

// Rotate implements [engine.TraceSink].
func (t *jsTrace) Rotate() (err error) {
	defer guard("trace.rotate", func(e error) { err = e })
	return sinkErr(t.host.Call("rotate"))
}

func sinkErr(v js.Value) error {
	if v.Type() == js.TypeString {
		return errors.New(v.String())
	}
	return nil
}

// diagnostics returns the OnDiagnostic of a session: the shim's
// onDiagnostic(kind, message, stack), or nil.
func diagnostics(host js.Value) func(engine.Diagnostic) {
	if host.Type() != js.TypeFunction {
		return nil
	}
	return func(d engine.Diagnostic) {
		defer guard("onDiagnostic", nil)
		msg := ""
		if d.Err != nil {
			msg = d.Err.Error()
		}
		host.Invoke(string(d.Kind), msg, string(d.Stack))
	}
}
