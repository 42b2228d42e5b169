//go:build js && wasm

package jsbridge

import (
	"encoding/json"
	"math"
	"runtime"
	"strings"
	"sync"
	"syscall/js"
	"testing"
	"time"
)

func TestCreateSessionArguments(t *testing.T) {
	noPanics(t)
	_, api := newBridge()
	llm, release := jsObject(map[string]func([]js.Value) any{"start": func([]js.Value) any { return nil }})
	defer release()
	obj := func(kv map[string]any) js.Value { return js.ValueOf(kv) }
	tests := []struct {
		name string
		spec js.Value
		want string
	}{
		{"no options", js.Undefined(), "createSession: options"},
		{"options not an object", js.ValueOf(3), "createSession: options"},
		{"no meta", spec(llm, map[string]any{"meta": js.Undefined()}), "createSession: meta"},
		{"meta not JSON of an object", spec(llm, map[string]any{"meta": "[]"}), "createSession: meta"},
		{"meta without session_id", spec(llm, map[string]any{"meta": "{}"}), "session_id"},
		{"no llm", spec(js.Null(), nil), "createSession: llm"},
		{"tools not a string", spec(llm, map[string]any{"tools": 1}), "createSession: tools"},
		{"tools malformed", spec(llm, map[string]any{"tools": `[{"name":1}]`}), "createSession: tools"},
		{"config not an object", spec(llm, map[string]any{"config": "x"}), "createSession: config"},
		{"maxTurns a string", spec(llm, map[string]any{"config": obj(map[string]any{"maxTurns": "3"})}), "config.maxTurns"},
		{"maxReconnects fractional", spec(llm, map[string]any{"config": obj(map[string]any{"maxReconnects": 1.5})}), "config.maxReconnects: want an integer, got 1.5"},
		{"maxReconnects infinite", spec(llm, map[string]any{"config": obj(map[string]any{"maxReconnects": math.Inf(1)})}), "config.maxReconnects: want an integer, got Infinity"},
		{"compaction mode missing", spec(llm, map[string]any{"config": obj(map[string]any{"compaction": map[string]any{}})}), "config.compaction.mode"},
		{"newLLM not a function", spec(llm, map[string]any{"newLLM": 2}), "createSession: newLLM"},
		{"environment not an object", spec(llm, map[string]any{"environment": "env"}), "createSession: environment"},
		{"clock not an object", spec(llm, map[string]any{"clock": true}), "createSession: clock"},
		{"onDiagnostic not a function", spec(llm, map[string]any{"onDiagnostic": 1}), "createSession: onDiagnostic"},
		{"abortGraceMs not a number", spec(llm, map[string]any{"abortGraceMs": "1"}), "createSession: abortGraceMs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			floeError(t, api.Call("createSession", tt.spec), CodeBadArgument, tt.want)
		})
	}
	t.Run("ok", func(t *testing.T) {
		v := api.Call("createSession", spec(llm, map[string]any{"tools": "[]", "config": obj(map[string]any{"maxTurns": 2})}))
		if v.InstanceOf(js.Global().Get("Error")) {
			t.Fatalf("createSession: %v", v.Get("message"))
		}
		if ref := v.String(); ref != "1 s-test" {
			t.Errorf("ref = %q, want the handle and the id", ref)
		}
	})
}

func TestExportArguments(t *testing.T) {
	noPanics(t)
	_, api := newBridge()
	tests := []struct {
		fn   string
		args []any
		code string
		want string
	}{
		{"start", []any{"x"}, CodeBadArgument, "run: handle"},
		{"start", []any{99, "text", "hi"}, CodeClosed, "session is closed"},
		{"steer", []any{nil}, CodeBadArgument, "steer: handle"},
		{"pull", []any{"1"}, CodeBadArgument, "pull: id"},
		{"closeStream", []any{}, CodeBadArgument, "close: id"},
		{"deliver", []any{1, "", "x"}, CodeBadArgument, "deliver: end"},
		{"approve", []any{1, 2}, CodeBadArgument, "approve: toolCall"},
		{"subagentRun", []any{5, "p"}, CodeClosed, "subagent is closed"},
	}
	for _, tt := range tests {
		t.Run(tt.fn+"/"+tt.want, func(t *testing.T) {
			floeError(t, api.Call(tt.fn, tt.args...), tt.code, tt.want)
		})
	}
}

func TestPanicBecomesError(t *testing.T) {
	allow := noPanics(t)
	allow()
	reported := 0
	PanicReporter = func(*PanicError) { reported++ }
	b, api := newBridge()
	floeError(t, api.Call("debugPanic", "sync"), CodeInternal, "debugPanic: sync")
	v, ok := await(t, api.Call("debugPanic", "async"))
	if ok {
		t.Fatal("async panic resolved, want a rejection")
	}
	floeError(t, v, CodeInternal, "debugPanic: async")
	if reported != 2 {
		t.Errorf("reported %d panics, want 2", reported)
	}
	// The runtime is alive: a later call works.
	v, ok = await(t, pullP(b, api, 12345))
	if !ok || !v.IsNull() {
		t.Errorf("pull after panics = %v, %v; want null", v, ok)
	}
}

// runAll starts a run and pulls until the end; it returns the messages as
// generic JSON and the size of each batch.
func runAll(t *testing.T, b *Bridge, api, handle js.Value, prompt string, extra ...any) ([]map[string]any, []int) {
	t.Helper()
	args := append([]any{handle, "text", prompt}, extra...)
	id := api.Call("start", args...)
	if id.Type() != js.TypeNumber {
		t.Fatalf("start: %v", id.Get("message"))
	}
	var msgs []map[string]any
	var sizes []int
	for {
		v, ok := await(t, pullP(b, api, id))
		if !ok {
			t.Fatalf("pull rejected: %v", v.Get("message"))
		}
		if v.IsNull() {
			return msgs, sizes
		}
		batch, err := readBatch(v.String())
		if err != nil {
			t.Fatalf("batch %q: %v", v.String(), err)
		}
		for _, m := range batch {
			var g map[string]any
			if err := json.Unmarshal([]byte(m.json()), &g); err != nil {
				t.Fatalf("batch %q: %v", v.String(), err)
			}
			msgs = append(msgs, g)
		}
		sizes = append(sizes, len(batch))
	}
}

func payloadTypes(msgs []map[string]any) string {
	var s []string
	for _, m := range msgs {
		p, _ := m["payload"].(map[string]any)
		s = append(s, p["type"].(string))
	}
	return strings.Join(s, " ")
}

func TestRunIsBatched(t *testing.T) {
	noPanics(t)
	b, api := newBridge()
	many := textJSON(50, "ab")
	llm := &fakeProducer{b: b, script: func(int, string) []batch {
		return []batch{{msgs: append(many, usageJSON())}, {end: endDone, value: outcome("completed")}}
	}}
	s := api.Call("createSession", spec(llm.host(t), nil))
	msgs, sizes := runAll(t, b, api, handleOf(s), "hello")
	got := payloadTypes(msgs)
	want := "request_begin" + strings.Repeat(" partial_text", 52) + " text token_usage request_end"
	if got != want {
		t.Fatalf("stream = %s\nwant %s", got, want)
	}
	if len(sizes) >= len(msgs) {
		t.Errorf("batch sizes %v: every message crossed alone", sizes)
	}
	if len(llm.calls) != 1 || !strings.Contains(recordsJSON(t, llm.calls[0]), `"text":"hello"`) {
		t.Errorf("llm inputs = %q", llm.calls)
	}
}

func TestLLMFailuresAreOutcomes(t *testing.T) {
	noPanics(t)
	tests := []struct {
		name    string
		batches []batch
		status  string
		message string
	}{
		{"throws", []batch{{end: endThrew, value: "boom"}}, "failed", "boom"},
		{"bad value", []batch{{msgs: textJSON(1, "a"), end: endBad, value: "yielded a number, want an OmniMessage object"}}, "malformed", "yielded a number"},
		{"malformed message", []batch{{msgs: append(textJSON(1, "a"), `{"type":"model_msg","payload":{"type":"text","text":5}}`)}}, "malformed", "payload.text"},
		{"bad outcome", []batch{{end: endDone, value: 7}}, "failed", "outcome"},
		{"unknown status", []batch{{end: endDone, value: outcome("great")}}, "failed", `"great"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, api := newBridge()
			llm := &fakeProducer{b: b, script: func(int, string) []batch { return tt.batches }}
			cfg := js.ValueOf(map[string]any{"maxReconnects": 0})
			s := api.Call("createSession", spec(llm.host(t), map[string]any{"config": cfg}))
			msgs, _ := runAll(t, b, api, handleOf(s), "x")
			var end map[string]any
			for _, m := range msgs {
				if p := m["payload"].(map[string]any); p["type"] == "request_end" {
					end = p
				}
			}
			if end == nil {
				t.Fatalf("no request_end in %s", payloadTypes(msgs))
			}
			if end["status"] != tt.status || !strings.Contains(end["error_message"].(string), tt.message) {
				t.Errorf("request_end = %v, want status %s and a message with %q", end, tt.status, tt.message)
			}
			if llm.stopped == 0 {
				t.Error("the pump was not stopped")
			}
		})
	}
}

// A model host whose start throws (the shim's, which does not, would
// only by a fault of its own) fails the request with what it threw: the
// producer's cleanup has no pump to stop then.
func TestLLMStartThrows(t *testing.T) {
	allow := noPanics(t)
	allow() // guard reports the throw as a recovered panic
	b, api := newBridge()
	host := js.Global().Get("Object").New()
	host.Set("start", js.Global().Get("Function").New("throw new Error('start exploded')"))
	cfg := js.ValueOf(map[string]any{"maxReconnects": 0})
	s := api.Call("createSession", spec(host, map[string]any{"config": cfg}))
	msgs, _ := runAll(t, b, api, handleOf(s), "x")
	var end map[string]any
	for _, m := range msgs {
		if p := m["payload"].(map[string]any); p["type"] == "request_end" {
			end = p
		}
	}
	if end == nil || end["status"] != "failed" || !strings.Contains(end["error_message"].(string), "start exploded") {
		t.Fatalf("request_end = %v, want failed with the thrown message", end)
	}
}

func TestBusyAndClose(t *testing.T) {
	noPanics(t)
	b, api := newBridge()
	llm := &fakeProducer{b: b, script: func(int, string) []batch { return []batch{{never: true}} }}
	s := api.Call("createSession", spec(llm.host(t), map[string]any{"abortGraceMs": 20, "config": js.ValueOf(map[string]any{"maxReconnects": 0})}))
	h := handleOf(s)
	id := api.Call("start", h, "text", "one")
	pending := pullP(b, api, id) // the model never answers
	floeError(t, api.Call("start", h, "text", "two"), CodeSessionBusy, "busy")
	floeError(t, api.Call("compact", h), CodeSessionBusy, "busy")
	start := time.Now()
	if _, ok := await(t, api.Call("closeStream", id)); !ok {
		t.Fatal("close rejected")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("close took %v", d)
	}
	if llm.aborted != 1 || llm.stopped != 1 {
		t.Errorf("model aborted %d, stopped %d times; want 1, 1", llm.aborted, llm.stopped)
	}
	if v, ok := await(t, pending); !ok || v.Type() != js.TypeString {
		t.Errorf("the pull in flight = %v, %v; want the last batch", v, ok)
	}
	// The session is free again.
	llm.script = func(int, string) []batch {
		return []batch{{msgs: []string{usageJSON()}, end: endDone, value: outcome("completed")}}
	}
	msgs, _ := runAll(t, b, api, h, "three")
	if got := payloadTypes(msgs); got != "request_begin token_usage request_end" {
		t.Errorf("next run = %s", got)
	}
	if v := api.Call("closeSession", h); !v.IsNull() {
		t.Fatalf("closeSession = %v, want null (nothing to wait for)", v)
	}
	floeError(t, api.Call("start", h, "text", "four"), CodeClosed, "closed")
}

func TestDeferredPromises(t *testing.T) {
	noPanics(t)
	_, api := newBridge()
	made := 0
	factory := js.FuncOf(func(js.Value, []js.Value) any {
		made++
		var resolve, reject js.Value
		var exec js.Func
		exec = js.FuncOf(func(_ js.Value, args []js.Value) any { resolve, reject = args[0], args[1]; return nil })
		p := js.Global().Get("Promise").New(exec)
		exec.Release()
		return js.ValueOf([]any{p, resolve, reject})
	})
	defer factory.Release()
	floeError(t, api.Call("useDeferred", 1), CodeBadArgument, "useDeferred: factory")
	api.Call("useDeferred", factory)
	if v, ok := await(t, api.Call("closeStream", 77)); !ok || !v.IsNull() || made != 1 {
		t.Errorf("closeStream = %v, %v with %d deferreds; want null from 1", v, ok, made)
	}
}

// Workers serve the next task instead of a new goroutine each, and at most
// maxIdleWorkers of them stay waiting after a burst.
func TestWorkersBounded(t *testing.T) {
	b := New()
	release := make(chan struct{})
	var started sync.WaitGroup
	var done sync.WaitGroup
	const n = 3 * maxIdleWorkers
	started.Add(n)
	done.Add(n)
	for range n {
		b.spawn(func() { started.Done(); <-release; done.Done() })
	}
	started.Wait() // n tasks at once: n workers
	close(release)
	done.Wait()
	for b.idle.Load() < maxIdleWorkers { // the last workers reach the wait after their task
		runtime.Gosched()
	}
	if got := b.idle.Load(); got != maxIdleWorkers {
		t.Fatalf("%d idle workers after a burst of %d, want %d", got, n, maxIdleWorkers)
	}
	ran := make(chan struct{})
	b.spawn(func() { close(ran) })
	<-ran
}

// An export called through floe_call's op 4 (callIndexed) reads its
// arguments from the port's array and puts its value, or its FloeError, at
// the array's index 0, as its js.Func would return them.
func TestCallIndexed(t *testing.T) {
	b, api := newBridge()
	argv := js.Global().Get("Array").New()
	b.argv = argv
	index := api.Get("exportIndex")
	llm := (&fakeProducer{b: b, script: func(int, string) []batch { return nil }}).host(t)
	argv.SetIndex(0, spec(llm, nil))
	if !b.callIndexed(index.Get("createSession").Int(), 1) {
		t.Fatal("createSession: not called")
	}
	if ref := argv.Index(0).String(); ref != "1 s-test" {
		t.Errorf("createSession = %q, want the handle and the id", ref)
	}
	argv.SetIndex(0, spec(llm, map[string]any{"abortGraceMs": "1"}))
	b.callIndexed(index.Get("createSession").Int(), 1)
	floeError(t, argv.Index(0), CodeBadArgument, "createSession: abortGraceMs")
	argv.SetIndex(0, 1)
	argv.SetIndex(1, "text")
	argv.SetIndex(2, "hello")
	if !b.callIndexed(index.Get("start").Int(), 3) || argv.Index(0).Type() != js.TypeNumber {
		t.Errorf("start = %v, want a stream id", argv.Index(0))
	}
	// A panic is recovered into the FloeError, as from the js.Func.
	argv.SetIndex(0, "sync")
	b.callIndexed(index.Get("debugPanic").Int(), 1)
	floeError(t, argv.Index(0), CodeInternal, "debugPanic: sync")
	for _, c := range [][2]int{{-1, 0}, {len(b.calls), 0}, {0, maxIndexedArgs + 1}, {0, -1}} {
		if b.callIndexed(c[0], c[1]) {
			t.Errorf("callIndexed(%d, %d) = true, want false", c[0], c[1])
		}
	}
	b.argv = js.Undefined()
	if b.callIndexed(index.Get("createSession").Int(), 0) {
		t.Error("callIndexed without the port's array = true, want false")
	}
}
