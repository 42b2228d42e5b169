//go:build js && wasm

package jsbridge

import (
	"sync/atomic"
	"syscall/js"
)

// Bridge holds the sessions, streams and waiting goroutines of one Go
// program. Its exports are safe to call from JavaScript at any time; none
// blocks.
type Bridge struct {
	waiters   waiters
	approvals approvals
	sessions  handles[*session]
	subagents handles[*subagent]
	streams   handles[*stream]
	funcs     []js.Func
	deferred  js.Value     // the shim's () => [promise, resolve, reject], if given
	port      js.Value     // the shim's side of the exchange (usePort)
	portFn    [5]js.Value  // its functions, in the order of portNames: invoked without a name lookup
	argv      js.Value     // the port's array of a call's arguments and result (callIndexed)
	calls     []exportFunc // the exports, in the order of exportIndex
	tasks     chan func()  // idle workers wait here (spawn)
	idle      atomic.Int32 // workers waiting on tasks
	stores    stores       // the trace stores of persisted sessions (store.go)
}

// exportFunc is an export's Go side: its arguments in, its value or error
// out.
type exportFunc func([]js.Value) (any, error)

// New returns an empty Bridge.
func New() *Bridge { return &Bridge{tasks: make(chan func())} }

// Exports returns the object of Go functions the shim calls. Its functions
// live as long as the program.
func (b *Bridge) Exports() js.Value {
	api := js.Global().Get("Object").New()
	index := js.Global().Get("Object").New() // name → index, for callIndexed
	for _, e := range []struct {
		name string
		f    exportFunc
	}{
		{"createSession", b.createSession},
		{"createSubagent", b.createSubagent},
		{"start", b.start},
		{"compact", b.compact},
		{"steer", b.steer},
		{"unsteer", b.unsteer},
		{"skipReconnectWait", b.skipReconnectWait},
		{"compactability", b.compactability},
		{"closeSession", b.closeSession},
		{"subagentRun", b.subagentRun},
		{"closeSubagent", b.closeSubagent},
		{"pull", b.pull},
		{"closeStream", b.closeStream},
		{"deliver", b.deliver},
		{"settle", b.settle},
		{"approve", b.approve},
		{"useDeferred", b.useDeferred},
		{"usePort", b.usePort},
		{"debugPanic", b.debugPanic},
		{"listSessions", b.listSessions},
		{"resumeSession", b.resumeSession},
		{"exportSession", b.exportSession},
		{"readSession", b.readSession},
		{"importSession", b.importSession},
		{"deleteSession", b.deleteSession},
	} {
		fn := b.export(e.name, e.f)
		b.funcs = append(b.funcs, fn)
		api.Set(e.name, fn)
		index.Set(e.name, len(b.calls))
		b.calls = append(b.calls, b.guarded(e.name, e.f))
	}
	api.Set("exportIndex", index)
	return api
}

// export wraps f as a js.Func: errors and recovered panics are returned as
// FloeError values (the shim throws them; a Go function never throws).
func (b *Bridge) export(name string, f exportFunc) js.Func {
	f = b.guarded(name, f)
	return js.FuncOf(func(this js.Value, args []js.Value) any {
		v, _ := f(args)
		return v
	})
}

// guarded returns f with its error, or a recovered panic, as its value: a
// FloeError (the shim throws it).
func (b *Bridge) guarded(name string, f exportFunc) exportFunc {
	return func(args []js.Value) (res any, _ error) {
		defer guard(name, func(err error) { res = jsError(err) })
		v, err := f(args)
		if err != nil {
			return jsError(err), nil
		}
		return v, nil
	}
}

// maxIndexedArgs bounds the arguments of a call through callIndexed.
const maxIndexedArgs = 8

// callIndexed is floe_call's op 4: the export k (exportIndex) called with
// the first n values of the port's argument array, its result put at the
// array's index 0; false when there is no such export or array. It costs
// the arguments' reads and the result's write, where a js.Func call also
// reads the pending event, its id, its this and its arguments array, and
// parks and wakes the runtime's event goroutine. The shim resumes the
// runtime right after, so the goroutines the call woke run before the
// call returns to JavaScript, as after a js.Func call.
func (b *Bridge) callIndexed(k, n int) bool {
	if k < 0 || k >= len(b.calls) || n < 0 || n > maxIndexedArgs || b.argv.Type() != js.TypeObject {
		return false
	}
	args := make([]js.Value, n)
	for i := range args {
		args[i] = b.argv.Index(i)
	}
	v, _ := b.calls[k](args)
	b.argv.SetIndex(0, v)
	return true
}

// deliver is the export deliver(pumpID, batchJSON, end, value): a producer's
// batch for the goroutine waiting in pump.next. Unknown ids are ignored.
func (b *Bridge) deliver(args []js.Value) (any, error) {
	id, err := wantInt(arg(args, 0), "deliver: id")
	if err != nil {
		return nil, err
	}
	r := reply{value: arg(args, 3)}
	if j := arg(args, 1); j.Type() == js.TypeString {
		r.json = j.String()
	}
	if r.end, err = wantInt(arg(args, 2), "deliver: end"); err != nil {
		return nil, err
	}
	b.waiters.send(id, r)
	return nil, nil
}

// settle is the export settle(waiterID, ok, value): a settled Promise for a
// goroutine waiting in await. When ok is false, value is the message.
func (b *Bridge) settle(args []js.Value) (any, error) {
	id, err := wantInt(arg(args, 0), "settle: id")
	if err != nil {
		return nil, err
	}
	r := reply{end: endDone, value: arg(args, 2)}
	if !arg(args, 1).Truthy() {
		r.end = endThrew
	}
	b.waiters.send(id, r)
	return nil, nil
}

// useDeferred is the export useDeferred(factory): factory() returns
// [promise, resolve, reject]; the bridge then makes its Promises with a
// Go→JS call instead of a JS→Go executor call.
func (b *Bridge) useDeferred(args []js.Value) (any, error) {
	if err := wantFunc(arg(args, 0), "useDeferred: factory"); err != nil {
		return nil, err
	}
	b.deferred = arg(args, 0)
	return nil, nil
}

// debugPanic is the export debugPanic(mode): it panics on purpose, in the
// export itself ("sync") or on a goroutine behind a Promise ("async"), so
// tests can check that a panic becomes an error and the runtime lives on.
func (b *Bridge) debugPanic(args []js.Value) (any, error) {
	if arg(args, 0).Type() == js.TypeString && arg(args, 0).String() == "async" {
		return b.async("debugPanic", func() (any, error) { panic("debugPanic: async") }), nil
	}
	panic("debugPanic: sync")
}
