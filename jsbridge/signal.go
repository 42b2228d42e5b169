//go:build js && wasm

package jsbridge

import (
	"context"
	"sync"
	"syscall/js"
)

// signalContext maps an optional AbortSignal to a context: one cancel, from
// an abort listener. stop removes the listener and releases it; call it
// when the run ends (safe more than once). An already aborted signal gives
// an already cancelled context.
func signalContext(signal js.Value, name string) (ctx context.Context, cancel context.CancelFunc, stop func(), err error) {
	ctx, cancel = context.WithCancel(context.Background())
	if absent(signal) {
		return ctx, cancel, func() {}, nil
	}
	if signal.Type() != js.TypeObject || signal.Get("aborted").Type() != js.TypeBoolean ||
		signal.Get("addEventListener").Type() != js.TypeFunction {
		cancel()
		return nil, nil, nil, badArg(name, "want an AbortSignal, got "+typeName(signal))
	}
	if signal.Get("aborted").Bool() {
		cancel()
		return ctx, cancel, func() {}, nil
	}
	listener := js.FuncOf(func(this js.Value, args []js.Value) any {
		defer guard("AbortSignal listener", nil)
		cancel()
		return nil
	})
	signal.Call("addEventListener", "abort", listener)
	var once sync.Once
	stop = func() {
		once.Do(func() {
			signal.Call("removeEventListener", "abort", listener)
			listener.Release()
		})
	}
	return ctx, cancel, stop, nil
}
