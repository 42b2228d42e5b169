//go:build js && wasm

package jsbridge

import "syscall/js"

// promise is a JavaScript Promise with its resolve and reject functions.
type promise struct {
	value, resolve, reject js.Value
}

// newPromise makes a pending Promise: through the shim's deferred factory
// when it gave one (a Go→JS call), else with a one-shot js.Func executor
// that releases itself (a nested JS→Go call, about 13 µs more).
func (b *Bridge) newPromise() promise {
	if b.deferred.Type() == js.TypeFunction {
		r := b.deferred.Invoke()
		if r.Type() == js.TypeObject && r.Length() == 3 {
			return promise{r.Index(0), r.Index(1), r.Index(2)}
		}
	}
	var p promise
	var exec js.Func
	exec = js.FuncOf(func(this js.Value, args []js.Value) any {
		defer guard("Promise executor", nil)
		p.resolve, p.reject = arg(args, 0), arg(args, 1)
		return nil
	})
	p.value = js.Global().Get("Promise").New(exec)
	exec.Release()
	return p
}

// settle resolves p with v, or rejects it with err as a FloeError.
func (p promise) settle(v any, err error) {
	if err != nil {
		p.reject.Invoke(jsError(err))
		return
	}
	p.resolve.Invoke(v)
}

// async runs f on a guarded worker goroutine and returns a Promise of its
// result. A panic in f rejects the Promise with a FloeError of code
// "internal".
func (b *Bridge) async(where string, f func() (any, error)) js.Value {
	p := b.newPromise()
	b.spawn(func() {
		defer guard(where, func(err error) { p.settle(nil, err) })
		p.settle(f())
	})
	return p.value
}

// spawn runs f on an idle worker goroutine, or on a new one when none is
// idle. Workers stay for the next task: a pull or a settle does not pay for
// a goroutine's start and the growth of its stack each time. f must not
// panic (callers guard it).
func (b *Bridge) spawn(f func()) {
	select {
	case b.tasks <- f:
	default:
		go b.work(f)
	}
}

// maxIdleWorkers bounds the workers kept waiting for a task; the others
// end when their task is done.
const maxIdleWorkers = 16

func (b *Bridge) work(f func()) {
	for {
		f()
		if b.idle.Add(1) > maxIdleWorkers {
			b.idle.Add(-1)
			return
		}
		f = <-b.tasks
		b.idle.Add(-1)
	}
}
