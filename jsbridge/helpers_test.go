//go:build js && wasm

package jsbridge

import (
	"strconv"
	"strings"
	"sync"
	"syscall/js"
	"testing"
	"time"
	"unsafe"

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
	in := memText(args[1], args[2])
	f.mu.Lock()
	f.calls = append(f.calls, in)
	batches := f.script(len(f.calls), in)
	f.mu.Unlock()
	next := 0
	port := portOf(f.b)
	stop := func() { f.mu.Lock(); f.stopped++; f.mu.Unlock() }
	tp := &testPump{
		abort: func() { f.mu.Lock(); f.aborted++; f.mu.Unlock() },
		stop:  stop,
	}
	// As the shim's pump: the start asks for the first batch, and the
	// batch that carries the end stops the pump (Go does not).
	tp.pull = func() {
		if next >= len(batches) {
			return
		}
		bt := batches[next]
		next++
		if bt.never {
			return
		}
		later(func() {
			f.b.waiters.send(id, reply{json: jRecords(bt.msgs...) + bt.raw, end: bt.end, value: js.ValueOf(bt.value)})
			if bt.end != endMore {
				port.mu.Lock()
				delete(port.pumps, id)
				port.mu.Unlock()
				stop()
			}
		})
	}
	port.mu.Lock()
	port.pumps[id] = tp
	port.mu.Unlock()
	tp.pull()
	return nil
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

// spec builds a createSession spec around an llm host; extra sets its
// values by name (sessionSpec).
func spec(llm js.Value, extra map[string]any) js.Value {
	at := map[string]int{"meta": specMeta, "llm": specLLM, "environment": specEnvironment, "store": specStore,
		"tools": specTools, "config": specConfig, "newLLM": specNewLLM, "onDiagnostic": specOnDiagnostic,
		"clock": specClock, "trace": specTrace, "foldInputImages": specFoldInputImages, "abortGraceMs": specAbortGraceMs}
	s := js.Global().Get("Array").New()
	s.SetIndex(specMeta, metaJSON)
	s.SetIndex(specLLM, llm)
	for k, v := range extra {
		i, ok := at[k]
		if !ok {
			panic("spec: no value " + k)
		}
		s.SetIndex(i, v)
	}
	return s
}

// handleOf returns the handle of a sessionRef.
func handleOf(ref js.Value) js.Value {
	h, _, _ := strings.Cut(ref.String(), " ")
	n, err := strconv.Atoi(h)
	if err != nil {
		panic("handleOf: " + ref.String())
	}
	return js.ValueOf(n)
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

// testPort is the test's side of usePort: it settles the Promises pullP
// makes, as the shim's pullBatch does, and drives the fake producers'
// pumps by id.
type testPort struct {
	mu      sync.Mutex
	next    int
	pending map[int][2]js.Value // ticket → resolve, reject
	pumps   map[int]*testPump
	calls   map[string]int // the port's pull, abort and stop calls from Go
}

type testPump struct{ pull, abort, stop func() }

var testPorts sync.Map // *Bridge → *testPort

// memText reads n bytes at ptr of this module's memory (a bytesArg).
func memText(ptr, n js.Value) string {
	if n.Int() == 0 {
		return ""
	}
	return string(unsafe.Slice((*byte)(unsafe.Add(nil, ptr.Int())), n.Int()))
}

// portOf installs a test port on b once.
func portOf(b *Bridge) *testPort {
	if v, ok := testPorts.Load(b); ok {
		return v.(*testPort)
	}
	h := &testPort{pending: map[int][2]js.Value{}, pumps: map[int]*testPump{}, calls: map[string]int{}}
	testPorts.Store(b, h)
	take := func(ticket int) ([2]js.Value, bool) {
		h.mu.Lock()
		defer h.mu.Unlock()
		p, ok := h.pending[ticket]
		delete(h.pending, ticket)
		return p, ok
	}
	pump := func(id js.Value, call string) *testPump {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.calls[call]++
		return h.pumps[id.Int()]
	}
	host, _ := jsObject(map[string]func([]js.Value) any{
		"batch": func(args []js.Value) any {
			p, ok := take(args[0].Int())
			if !ok {
				return nil
			}
			if args[2].Int() < 0 {
				p[0].Invoke(js.Null())
				return nil
			}
			p[0].Invoke(memText(args[1], args[2]))
			return nil
		},
		"fail": func(args []js.Value) any {
			if p, ok := take(args[0].Int()); ok {
				p[1].Invoke(args[1])
			}
			return nil
		},
		"pull": func(args []js.Value) any {
			if p := pump(args[0], "pull"); p != nil {
				p.pull()
			}
			return nil
		},
		"abort": func(args []js.Value) any {
			if p := pump(args[0], "abort"); p != nil {
				p.abort()
			}
			return nil
		},
		"stop": func(args []js.Value) any {
			if p := pump(args[0], "stop"); p != nil {
				p.stop()
			}
			return nil
		},
	}) // lives as long as the test program
	if _, err := b.usePort([]js.Value{host}); err != nil {
		panic(err)
	}
	return h
}

// newBridge returns a Bridge with the test port installed, and its exports.
func newBridge() (*Bridge, js.Value) {
	b := New()
	api := b.Exports()
	portOf(b)
	return b, api
}

// ticketP registers a new ticket with the test port: the Promise its
// batch resolves.
func ticketP(h *testPort) (js.Value, int) {
	var resolve, reject js.Value
	exec := js.FuncOf(func(_ js.Value, args []js.Value) any { resolve, reject = args[0], args[1]; return nil })
	p := js.Global().Get("Promise").New(exec)
	exec.Release()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next++
	h.pending[h.next] = [2]js.Value{resolve, reject}
	return p, h.next
}

// pullP is the shim's pullBatch: a Promise of the next batch (a string of
// records) or null at the end; a FloeError the pull export returns rejects
// it.
func pullP(b *Bridge, api js.Value, id any) js.Value {
	h := portOf(b)
	p, ticket := ticketP(h)
	if r := api.Call("pull", id, ticket); r.Type() == js.TypeObject {
		h.mu.Lock()
		delete(h.pending, ticket)
		h.mu.Unlock()
		return js.Global().Get("Promise").Call("reject", r)
	}
	return p
}
