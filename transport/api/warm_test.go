package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/transport"
	"github.com/floehq/floe/transport/host"
	"github.com/floehq/floe/transport/server"
)

// wired counts the sessions a server gives an engine (created or resumed).
func wired(n *atomic.Int32) func(omni.Message) (host.Wiring, error) {
	return func(omni.Message) (host.Wiring, error) {
		n.Add(1)
		return server.Scripted(0), nil
	}
}

// runOnce runs one task of session id to its end, read on its stream,
// and waits for its host to settle.
func (e *env) runOnce(id, input string) {
	e.t.Helper()
	st := e.open("/api/sessions/"+id+"/stream", "", false)
	st.next()
	e.must(202, "POST", "/api/sessions/"+id+"/tasks", `{"input":`+quoteJSON(input)+`}`)
	st.until(taskState("idle"))
	st.Close()
	h, err := e.srv.Registry.Get(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := h.Wait(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// history returns the session's /messages records, compacted.
func (e *env) history(id string) []string {
	e.t.Helper()
	var hist struct{ Messages []json.RawMessage }
	json.Unmarshal(e.must(200, "GET", "/api/sessions/"+id+"/messages", ""), &hist)
	out := make([]string, len(hist.Messages))
	for i, m := range hist.Messages {
		out[i] = compact(m)
	}
	return out
}

func (e *env) engine(id string) bool {
	e.t.Helper()
	h, err := e.srv.Registry.Get(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return h.Session() != nil
}

// A stored session that is only looked at (its info, its stream, its
// history, a new approval mode) is not resumed: its history stays out of
// memory until its first run, which resumes it from the Trace and goes on
// from it. Before, opening it resumed it at once, and the server held the
// whole history of every session ever opened (60 MB for a 15 MB Trace).
func TestOpenedSessionResumesAtItsFirstRun(t *testing.T) {
	store := &trace.MemStore{}
	a := newEnv(t, server.Config{Store: store, Mode: "deny-all"})
	id := a.create("")
	a.runOnce(id, "first")
	before := a.history(id)

	var n atomic.Int32
	b := newEnv(t, server.Config{Store: store, Mode: "deny-all", Wire: wired(&n)})
	b.must(200, "GET", "/api/sessions/"+id, "")
	st := b.open("/api/sessions/"+id+"/stream", "", false)
	if ev := st.next(); !taskState("idle")(ev) {
		t.Fatalf("first event %+v", ev)
	}
	if got := b.history(id); strings.Join(got, "\n") != strings.Join(before, "\n") {
		t.Fatalf("history of the opened session:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(before, "\n"))
	}
	b.must(200, "PATCH", "/api/sessions/"+id, `{"approvalMode":"deny-all"}`)
	b.must(204, "POST", "/api/sessions/"+id+"/abort", "")
	b.must(200, "POST", "/api/sessions/"+id+"/retry-now", "")
	b.must(409, "POST", "/api/sessions/"+id+"/steer", `{"text":"x"}`)
	if got := n.Load(); got != 0 || b.engine(id) {
		t.Fatalf("opening a session wired %d engines (has one: %v), want none", got, b.engine(id))
	}
	b.runOnce(id, "second")
	if got := n.Load(); got != 1 {
		t.Fatalf("the first run wired %d engines, want 1", got)
	}
	after := b.history(id)
	if len(after) <= len(before) || strings.Join(after[:len(before)], "\n") != strings.Join(before, "\n") {
		t.Fatalf("the run did not go on from the Trace:\n%s", strings.Join(after, "\n"))
	}
	if !strings.Contains(strings.Join(after[len(before):], "\n"), `"text":"second"`) {
		t.Fatalf("the second run's input is not in the history:\n%s", strings.Join(after[len(before):], "\n"))
	}
}

// Past Config.KeepWarm idle sessions, the one idle the longest lets its
// engine (and the history its model holds) go, and resumes from its Trace
// at its next run, keeping its approval mode; its Trace goes on in the
// same file, one session_meta.
func TestIdleSessionsPastKeepWarmLetTheirEngineGo(t *testing.T) {
	var n atomic.Int32
	e := newEnv(t, server.Config{Mode: "deny-all", Wire: wired(&n), KeepWarm: 2})
	ids := []string{e.create(""), e.create(""), e.create("")}
	e.must(200, "PATCH", "/api/sessions/"+ids[0], `{"approvalMode":"allow-all"}`)
	for _, id := range ids {
		e.runOnce(id, "Count the lines of main.go")
	}
	if got := n.Load(); got != 3 {
		t.Fatalf("%d engines wired, want 3 (one per created session)", got)
	}
	if e.engine(ids[0]) || !e.engine(ids[1]) || !e.engine(ids[2]) {
		t.Fatalf("engines held: %v %v %v, want the first let go", e.engine(ids[0]), e.engine(ids[1]), e.engine(ids[2]))
	}
	before := e.history(ids[0])
	e.runOnce(ids[0], "Count the lines of main.go again")
	if got := n.Load(); got != 4 {
		t.Fatalf("%d engines wired, want 4 (the first resumed)", got)
	}
	if !e.engine(ids[0]) || e.engine(ids[1]) || !e.engine(ids[2]) {
		t.Fatalf("engines held: %v %v %v, want the second let go", e.engine(ids[0]), e.engine(ids[1]), e.engine(ids[2]))
	}
	after := e.history(ids[0])
	if len(after) <= len(before) || strings.Join(after[:len(before)], "\n") != strings.Join(before, "\n") {
		t.Fatalf("the resumed run did not go on from the Trace:\n%s", strings.Join(after, "\n"))
	}
	metas, allowed := 0, 0
	for i, m := range after {
		metas += strings.Count(m, `"type":"session_meta"`)
		if i >= len(before) {
			allowed += strings.Count(m, `"decision":"allow"`)
		}
	}
	if metas != 1 || allowed == 0 {
		t.Fatalf("%d session_meta, %d calls allowed: want 1 and the allow-all mode kept\n%s", metas, allowed, strings.Join(after, "\n"))
	}
	files, err := e.srv.Registry.History(context.Background(), ids[0])
	if err != nil || len(files) != len(after) {
		t.Fatalf("Trace: %d records, %v; /messages: %d", len(files), err, len(after))
	}
}

// A compaction a crash cut off is closed (compaction_end, failed, E-17.4)
// before the session's history is first read, though its engine is
// resumed only at its first run: a resume at its opening closed it, and
// a client that read the history before would find it grown in its
// middle.
func TestHistoryClosesACompactionCutOff(t *testing.T) {
	store := &trace.MemStore{}
	a := newEnv(t, server.Config{Store: store, Mode: "deny-all"})
	id := a.create("")
	a.runOnce(id, "first")
	begin := omni.Event(omni.Payload{Type: omni.CompactionBegin, Rest: &omni.Rest{Reason: "manual", Mode: omni.ModeDiscard}})
	begin.Timestamp = "2026-01-02T03:04:05.000Z"
	if err := trace.NewWriter(store, id, 1).Write(context.Background(), begin); err != nil {
		t.Fatal(err)
	}

	var n atomic.Int32
	b := newEnv(t, server.Config{Store: store, Mode: "deny-all", Wire: wired(&n)})
	hist := b.history(id)
	if last := hist[len(hist)-1]; !strings.Contains(last, `"type":"compaction_end"`) || !strings.Contains(last, `"status":"failed"`) {
		t.Fatalf("the history ends with %s, want the compaction closed as failed", last)
	}
	if again := b.history(id); len(again) != len(hist) || b.engine(id) {
		t.Fatalf("a second read: %d records (want %d); engine held: %v", len(again), len(hist), b.engine(id))
	}
	b.runOnce(id, "second")
	ends := 0
	for _, m := range b.history(id) {
		ends += strings.Count(m, `"type":"compaction_end"`)
	}
	if ends != 1 {
		t.Fatalf("%d compaction_end records, want 1", ends)
	}
}

// oneRunsFile is the size of a session's Trace after one run of the
// scripted model, measured on a server of its own.
func oneRunsFile(t *testing.T) int64 {
	t.Helper()
	store := &trace.MemStore{}
	a := newEnv(t, server.Config{Store: store, Mode: "deny-all"})
	id := a.create("")
	a.runOnce(id, "Count the lines of main.go")
	files, err := store.Files(context.Background(), id)
	if err != nil || len(files) != 1 {
		t.Fatal(files, err)
	}
	return files[0].Size
}

// Config.KeepWarmBytes bounds the idle sessions kept warm by the size of
// their Traces' current files, the resumed session's whole file counted:
// past it, the one idle the longest lets its engine go, and a session
// whose file alone is past it lets its own go at once, and only its own
// (it made every session idle before it let its engine go too, though
// they were within the bound).
func TestIdleSessionsPastKeepWarmBytesLetTheirEngineGo(t *testing.T) {
	one := oneRunsFile(t)
	var n atomic.Int32
	e := newEnv(t, server.Config{Mode: "deny-all", Wire: wired(&n), KeepWarm: 8, KeepWarmBytes: one * 3 / 2})
	x, y := e.create(""), e.create("")
	e.runOnce(x, "Count the lines of main.go")
	if !e.engine(x) {
		t.Fatalf("a session of %d bytes let its engine go under a bound of %d", one, one*3/2)
	}
	e.runOnce(y, "Count the lines of main.go")
	if e.engine(x) || !e.engine(y) {
		t.Fatalf("engines held: %v %v, want the first let go (two files of %d bytes past %d)", e.engine(x), e.engine(y), one, one*3/2)
	}
	// x resumes from a file of two runs, past the bound alone.
	e.runOnce(x, "Count the lines of main.go")
	if got := n.Load(); got != 3 {
		t.Fatalf("%d engines wired, want 3 (the first resumed)", got)
	}
	if e.engine(x) || !e.engine(y) {
		t.Fatalf("engines held: %v %v, want the second's alone: the resumed session's file alone is past the bound, the second's within it", e.engine(x), e.engine(y))
	}
}

// A compaction that completed leaves the model context a new one, and the
// Trace's next file holds it (written at the next run): the session kept
// warm weighs that file alone from then on (Config.KeepWarmBytes).
func TestKeepWarmBytesCountsTheFileAfterACompaction(t *testing.T) {
	one := oneRunsFile(t)
	e := newEnv(t, server.Config{Mode: "deny-all", KeepWarm: 8, KeepWarmBytes: one * 3 / 2})
	x, y := e.create(""), e.create("")
	e.runOnce(x, "Count the lines of main.go")
	st := e.open("/api/sessions/"+x+"/stream", "", false)
	st.next()
	e.must(202, "POST", "/api/sessions/"+x+"/compact", "")
	st.until(func(r transport.Received) bool { return strings.Contains(r.Data, `"type":"compaction_end"`) })
	st.until(taskState("idle"))
	h, err := e.srv.Registry.Get(context.Background(), x)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.runOnce(y, "Count the lines of main.go")
	if !e.engine(x) || !e.engine(y) {
		t.Fatalf("engines held: %v %v, want both: the compacted session weighs its new file alone", e.engine(x), e.engine(y))
	}
}
