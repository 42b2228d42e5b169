//go:build js && wasm

package jsbridge

import (
	"context"
	"sync"
	"syscall/js"
)

// signalContext maps an optional AbortSignal to a context: one cancel, from
// an abort listener, whose cause carries the signal's reason (abortReason).
// stop removes the listener and releases it; call it when the run ends
// (safe more than once). An already aborted signal gives an already
// cancelled context.
func signalContext(signal js.Value, name string) (ctx context.Context, cancel context.CancelCauseFunc, stop func(), err error) {
	ctx, cancel = context.WithCancelCause(context.Background())
	if absent(signal) {
		return ctx, cancel, func() {}, nil
	}
	if signal.Type() != js.TypeObject || signal.Get("aborted").Type() != js.TypeBoolean ||
		signal.Get("addEventListener").Type() != js.TypeFunction {
		cancel(nil)
		return nil, nil, nil, badArg(name, "want an AbortSignal, got "+typeName(signal))
	}
	if signal.Get("aborted").Bool() {
		cancel(signalReason{signal.Get("reason")})
		return ctx, cancel, func() {}, nil
	}
	listener := js.FuncOf(func(this js.Value, args []js.Value) any {
		defer guard("AbortSignal listener", nil)
		cancel(signalReason{signal.Get("reason")})
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

// signalReason is the cause of a context its AbortSignal cancelled: the
// signal's reason (undefined when it has none).
type signalReason struct{ v js.Value }

func (signalReason) Error() string { return "aborted" }

// abortReason is what a callback's own AbortSignal is aborted with once ctx
// is done: the reason of the caller's signal when its abort ended ctx (as
// fetch and the DOM pass a reason on), else undefined, which makes it an
// AbortError (a close(), a break, a request's own end).
func abortReason(ctx context.Context) js.Value {
	if r, ok := context.Cause(ctx).(signalReason); ok {
		return r.v
	}
	return js.Undefined()
}

// abortWith calls v.abort with abortReason(ctx): a canceller's, or a
// fetch's.
//
//go:noinline
func abortWith(ctx context.Context, v js.Value) {
	v.Call("abort", abortReason(ctx))
}
