//go:build js && wasm

package jsbridge

import (
	"strings"
	"sync"
	"syscall/js"
	"testing"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// noPanics makes every recovered panic fail t unless allowed.
func noPanics(t *testing.T) (allow func()) {
	t.Helper()
	var mu sync.Mutex
	allowed := false
	old := PanicReporter
	PanicReporter = func(e *PanicError) {
		mu.Lock()
		defer mu.Unlock()
		if !allowed {
			t.Errorf("unexpected panic report: %v", e)
		}
	}
	t.Cleanup(func() { PanicReporter = old })
	return func() { mu.Lock(); allowed = true; mu.Unlock() }
}

// await waits for a Promise on the test goroutine; ok is false on a
// rejection.
func await(t *testing.T, p js.Value) (v js.Value, ok bool) {
	t.Helper()
	type res struct {
		v  js.Value
		ok bool
	}
	ch := make(chan res, 1)
	var then, catch js.Func
	then = js.FuncOf(func(this js.Value, args []js.Value) any {
		ch <- res{arg(args, 0), true}
		return nil
	})
	catch = js.FuncOf(func(this js.Value, args []js.Value) any {
		ch <- res{arg(args, 0), false}
		return nil
	})
	defer then.Release()
	defer catch.Release()
	p.Call("then", then, catch)
	select {
	case r := <-ch:
		return r.v, r.ok
	case <-time.After(10 * time.Second):
		t.Fatal("promise did not settle")
	}
	return js.Undefined(), false
}

// later runs f in a JavaScript macrotask (a one-shot js.Func).
func later(f func()) {
	var fn js.Func
	fn = js.FuncOf(func(this js.Value, args []js.Value) any {
		fn.Release()
		f()
		return nil
	})
	js.Global().Call("setTimeout", fn, 0)
}

// jsObject builds an object whose methods are Go funcs; release frees them.
func jsObject(methods map[string]func(args []js.Value) any) (obj js.Value, release func()) {
	obj = js.Global().Get("Object").New()
	var fns []js.Func
	for name, f := range methods {
		fn := js.FuncOf(func(this js.Value, args []js.Value) any { return f(args) })
		fns = append(fns, fn)
		obj.Set(name, fn)
	}
	return obj, func() {
		for _, fn := range fns {
			fn.Release()
		}
	}
}

// batch is one scripted answer of a fake producer.
type batch struct {
	msgs  []string // JSON of each message (sent as J records)
	raw   string   // records sent as they are, after msgs
	end   int
	value any
	never bool // never answer this pull
}

// fakeProducer is a shim-shaped model or environment host whose pumps
// answer pulls from a script (in a macrotask), and records aborts and stops.
type fakeProducer struct {
	b       *Bridge
	script  func(call int, in string) []batch
	mu      sync.Mutex
	calls   []string // the input JSON of each start
	aborted int
	stopped int
}

func (f *fakeProducer) host(t *testing.T) js.Value {
	obj, release := jsObject(map[string]func([]js.Value) any{
		"start": func(args []js.Value) any { return f.start(args) },
	})
	t.Cleanup(release)
	return obj
}

func (f *fakeProducer) start(args []js.Value) any {
	id := args[0].Int()
	f.mu.Lock()
	f.calls = append(f.calls, args[1].String())
	batches := f.script(len(f.calls), args[1].String())
	f.mu.Unlock()
	next := 0
	pump, release := jsObject(map[string]func([]js.Value) any{
		"pull": func([]js.Value) any {
			if next >= len(batches) {
				return nil
			}
			bt := batches[next]
			next++
			if bt.never {
				return nil
			}
			later(func() {
				f.b.waiters.send(id, reply{json: jRecords(bt.msgs...) + bt.raw, end: bt.end, value: js.ValueOf(bt.value)})
			})
			return nil
		},
		"abort": func([]js.Value) any { f.mu.Lock(); f.aborted++; f.mu.Unlock(); return nil },
		"stop":  func([]js.Value) any { f.mu.Lock(); f.stopped++; f.mu.Unlock(); return nil },
	})
	_ = release // pumps live as long as the test program
	return pump
}

func msgJSON(m omni.Message) string { return string(m.AppendJSON(nil)) }

// textJSON is one streamed assistant text: start, n deltas of text, stop,
// the complete text.
func textJSON(n int, text string) []string {
	out := []string{msgJSON(omni.Partial(omni.PartialText, omni.EventStart, "", "", "", ""))}
	for range n {
		out = append(out, msgJSON(omni.Partial(omni.PartialText, omni.EventDelta, text, "", "", "")))
	}
	out = append(out, msgJSON(omni.Partial(omni.PartialText, omni.EventStop, "", "", "", "")))
	return append(out, msgJSON(omni.AssistantText(strings.Repeat(text, n), omni.StatusCompleted)))
}

func usageJSON() string {
	return msgJSON(omni.TokenUsageMsg(omni.TokenCounts{Total: 1}, omni.TokenCounts{Total: 1}))
}

// outcome builds an outcome object for an endDone batch.
func outcome(status string) map[string]any { return map[string]any{"status": status} }

// metaJSON is a session_meta payload.
const metaJSON = `{"session_id":"s-test","provider":"p","model_id":"m","model_context_window":1000,"system_prompt":"","agent_state":"","workspace":""}`

// spec builds a createSession spec around an llm host.
func spec(llm js.Value, extra map[string]any) js.Value {
	s := js.Global().Get("Object").New()
	s.Set("meta", metaJSON)
	s.Set("llm", llm)
	for k, v := range extra {
		s.Set(k, v)
	}
	return s
}

// floeError checks that v is an Error named FloeError with code and a
// message containing want.
func floeError(t *testing.T, v js.Value, code, want string) {
	t.Helper()
	if !v.InstanceOf(js.Global().Get("Error")) {
		t.Fatalf("got %s %v, want an Error", typeName(v), v)
	}
	if n := v.Get("name").String(); n != "FloeError" {
		t.Errorf("name = %q, want FloeError", n)
	}
	if c := v.Get("code").String(); c != code {
		t.Errorf("code = %q, want %q (message %q)", c, code, v.Get("message").String())
	}
	if m := v.Get("message").String(); !strings.Contains(m, want) {
		t.Errorf("message = %q, want it to name %q", m, want)
	}
}

func engineToolRequest(tc omni.Message) engine.ToolRequest { return engine.ToolRequest{ToolCall: tc} }
