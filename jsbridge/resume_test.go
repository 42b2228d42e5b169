//go:build js && wasm

package jsbridge

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"syscall/js"
	"testing"
	"time"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

// longTrace is a Trace file of session id of turns turns (a prompt,
// request_begin, an answer, token_usage, request_end), about 1.2 kB a turn.
func longTrace(id string, turns int) []byte {
	pad := strings.Repeat("lorem ipsum ", 18)
	b := []byte(`{"timestamp":"2026-11-30T04:09:45.308Z","type":"session_meta","payload":{"session_id":"` + id + `","provider":"test","model_id":"m","model_context_window":200000,"system_prompt":"sys","agent_state":"/a","workspace":"/w"}}` + "\n")
	for i := range turns {
		n := strconv.Itoa(i)
		b = append(b, `{"timestamp":"2026-11-30T04:09:45.314Z","type":"model_msg","payload":{"type":"text","role":"user","text":"prompt `+n+pad+`","stop_reason":"completed"}}`+"\n"...)
		b = append(b, `{"timestamp":"2026-11-30T04:09:45.315Z","type":"event_msg","payload":{"type":"request_begin"}}`+"\n"...)
		b = append(b, `{"timestamp":"2026-11-30T04:09:45.316Z","type":"model_msg","payload":{"type":"text","role":"assistant","text":"answer `+n+pad+`","stop_reason":"completed"}}`+"\n"...)
		b = append(b, `{"timestamp":"2026-11-30T04:09:45.316Z","type":"event_msg","payload":{"type":"token_usage","session":{"cache_read":0,"cache_write":0,"output":5,"total":`+n+`},"request":{"cache_read":0,"cache_write":0,"output":5,"total":300}}}`+"\n"...)
		b = append(b, `{"timestamp":"2026-11-30T04:09:45.316Z","type":"event_msg","payload":{"type":"request_end","status":"completed"}}`+"\n"...)
	}
	return b
}

// jsonLength is a shim-shaped loadHistory(waiterID, json) that notes the
// length of the JSON and settles at once, all in JavaScript (no Go copy).
func jsonLength() js.Value {
	return js.Global().Get("Function").New("id", "json", "globalThis.floeTestLoaded = json.length; return ''")
}

func loadedJSON() int { return js.Global().Get("floeTestLoaded").Int() }

// liveHeap is the heap in use after a collection.
func liveHeap() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// A resumed session that ran holds nothing of its Trace file: the
// Batcher's report held the export's engine.Config, the Config the
// snapshot Resume made, and so the history stayed after the model took it
// (and, before Resume let them go, every record of the file: three times
// its size, for as long as the session lived).
func TestResumedSessionLetsItsTraceGo(t *testing.T) {
	noPanics(t)
	b, api := newBridge()
	const id = "session-2026-01-01-00-00-00-longlonglo"
	data := longTrace(id, 2000)
	b.stores.mem = &trace.MemStore{Now: time.Now}
	if err := b.stores.mem.Create(context.Background(), id, [][]byte{data}); err != nil {
		t.Fatal(err)
	}
	llm := &fakeProducer{b: b, script: func(int, string) []batch {
		return []batch{{msgs: []string{usageJSON()}}, {end: endDone, value: outcome("completed")}}
	}}
	host := llm.host(t)
	host.Set("loadHistory", jsonLength())
	before := liveHeap()
	ref, ok := await(t, api.Call("resumeSession", id, spec(host, nil), "memory"))
	if !ok {
		t.Fatalf("resumeSession: %v", ref.Get("message"))
	}
	runAll(t, b, api, handleOf(ref), "hello")
	if n := loadedJSON(); n < len(data)/2 {
		t.Fatalf("loadHistory got %d bytes of JSON", n)
	}
	if n := liveHeap() - before; n > int64(len(data))/4 {
		t.Errorf("a resumed session of a %d-byte Trace holds %d bytes after its first run; want under a quarter of the file", len(data), n)
	}
	runtime.KeepAlive(host)
}

// The JSON of a history handed to the model is made once and not copied:
// appended to from nil, it grew a quarter at a time (five times its size
// allocated in all), then was copied into a string.
func TestLoadHistoryMakesItsJSONOnce(t *testing.T) {
	noPanics(t)
	b := New()
	history := make([]omni.Message, 0, 20000)
	pad := strings.Repeat("lorem ipsum ", 18)
	for i := range 10000 {
		history = append(history, omni.UserText("prompt "+strconv.Itoa(i)+pad), omni.AssistantText("answer "+pad, omni.StatusCompleted))
	}
	host := js.Global().Get("Object").New()
	host.Set("loadHistory", jsonLength())
	l := &jsHistoryLLM{jsLLM: &jsLLM{b: b, host: host}}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := l.LoadHistory(context.Background(), history); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	got := loadedJSON()
	if n := after.TotalAlloc - before.TotalAlloc; got == 0 || n > uint64(got)*3/2 {
		t.Errorf("LoadHistory of %d bytes of JSON allocated %d bytes; want under 1.5 times the JSON", got, n)
	}
}

// forgetting is a store that notes the sessions it is told nothing writes
// any more (trace.FileStore.Forget).
type forgetting struct {
	*trace.MemStore
	forgot chan string
	hold   chan struct{} // when not nil, Forget waits for it to close
}

func (f forgetting) Forget(id string) {
	if f.hold != nil {
		<-f.hold
	}
	f.forgot <- id
}

// A closed session's store lets go of what it kept of it (a {dir}
// store: its date directory and file index, for every session a
// long-lived program ever wrote), once its records are stored and no
// other session of the program writes its Trace.
func TestClosedSessionIsForgottenByItsStore(t *testing.T) {
	noPanics(t)
	b, api := newBridge()
	store := forgetting{&trace.MemStore{Now: time.Now}, make(chan string, 4), nil}
	b.UseDirectories(func(string) trace.Store { return store })
	llm := &fakeProducer{b: b, script: func(int, string) []batch {
		return []batch{{msgs: []string{usageJSON()}}, {end: endDone, value: outcome("completed")}}
	}}
	host := llm.host(t)
	open := func() js.Value {
		ref := api.Call("createSession", spec(host, map[string]any{"store": "dir:x"}))
		if ref.Type() != js.TypeString {
			t.Fatalf("createSession: %v", ref)
		}
		return handleOf(ref)
	}
	closeIt := func(h js.Value) {
		api.Call("closeSession", h)
		if _, ok := await(t, api.Call("closeSession", h, true)); !ok {
			t.Fatal("closeSession rejected")
		}
	}
	first, second := open(), open() // two session objects of one id
	runAll(t, b, api, first, "hello")
	closeIt(first)
	select {
	case id := <-store.forgot:
		t.Fatalf("%s forgotten while another session object writes it", id)
	default:
	}
	closeIt(second)
	select {
	case id := <-store.forgot:
		if id != "s-test" {
			t.Errorf("forgot %q, want s-test", id)
		}
	default:
		t.Fatal("the store was not told once the last session of the id closed")
	}
	if data, err := store.ReadFile(context.Background(), "s-test", 1); err != nil || !strings.Contains(string(data), "request_end") {
		t.Errorf("the Trace before the store was told: %q, %v", data, err)
	}
}

// A closed subagent's store lets go of what it kept of the child's Trace,
// as a closed session's does: a long-lived program running a subagent per
// tool call kept a date directory and a file index for every child. A
// subagent closed while its run is in flight is let go once that run's
// records are stored.
func TestClosedSubagentIsForgottenByItsStore(t *testing.T) {
	noPanics(t)
	b, api := newBridge()
	// Forget waits as a {dir} store's does while a write holds its lock,
	// waiting for the file system: JavaScript's close() must not wait
	// with it (JavaScript went on, and the wasm module trapped when the
	// write came back).
	store := forgetting{&trace.MemStore{Now: time.Now}, make(chan string, 4), make(chan struct{})}
	b.UseDirectories(func(string) trace.Store { return store })
	gate := make(chan struct{})
	llm := &fakeProducer{b: b, script: func(int, string) []batch {
		<-gate
		return []batch{{msgs: []string{usageJSON()}}, {end: endDone, value: outcome("completed")}}
	}}
	host := llm.host(t)
	open := func(id string) js.Value {
		ref := api.Call("createSubagent", spec(host, map[string]any{"store": "dir:x", "meta": strings.Replace(metaJSON, "s-test", id, 1)}))
		if ref.Type() != js.TypeString {
			t.Fatalf("createSubagent: %v", ref.Get("message"))
		}
		return handleOf(ref)
	}
	drain := func(id js.Value) {
		for {
			v, ok := await(t, pullP(b, api, id))
			if !ok {
				t.Fatalf("pull rejected: %v", v.Get("message"))
			}
			if v.IsNull() {
				return
			}
		}
	}
	forgot := func() string {
		select {
		case id := <-store.forgot:
			return id
		default:
			return ""
		}
	}
	// Closed after its run.
	h := open("child-a")
	close(gate)
	drain(api.Call("subagentRun", h, "task"))
	if id := forgot(); id != "" {
		t.Fatalf("%s forgotten before its subagent closed", id)
	}
	api.Call("closeSubagent", h) // returns while Forget waits
	close(store.hold)
	if id := <-store.forgot; id != "child-a" {
		t.Fatalf("forgot %q after the subagent closed, want child-a", id)
	}
	if data, err := store.ReadFile(context.Background(), "child-a", 1); err != nil || !strings.Contains(string(data), "request_end") {
		t.Errorf("the child's Trace: %q, %v", data, err)
	}
	// Closed while its run is in flight: let go once the run has ended.
	h = open("child-b")
	run := api.Call("subagentRun", h, "task")
	api.Call("closeSubagent", h)
	drain(run)
	if id := <-store.forgot; id != "child-b" {
		t.Fatalf("forgot %q after the closed subagent's run ended, want child-b", id)
	}
	// (close() aborted that run: its Trace ends with the abort.)
	if data, err := store.ReadFile(context.Background(), "child-b", 1); err != nil || !strings.Contains(string(data), `"abort"`) {
		t.Errorf("the child's Trace: %q, %v", data, err)
	}
}
