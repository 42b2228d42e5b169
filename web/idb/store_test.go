//go:build js && wasm

package idb_test

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall/js"
	"testing"
	"time"

	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/engine/trace/tracetest"
	"github.com/floehq/floe/web/idb"
)

// In Node these tests need an IndexedDB: scripts/test-wasm.sh loads the
// in-memory one of tests/idb (NODE_OPTIONS=--require fake-indexeddb/auto).
func needIndexedDB(t *testing.T) {
	t.Helper()
	if !js.Global().Get("indexedDB").Truthy() {
		t.Skip("no indexedDB in this JavaScript environment (run through scripts/test-wasm.sh)")
	}
}

var dbs atomic.Int64

// freshName names a database no other test (nor a run of -count) uses.
func freshName() string { return "floe-test-" + strconv.FormatInt(dbs.Add(1), 10) }

// fresh returns a Store over a database no other test uses.
func fresh() *idb.Store { return idb.New(freshName()) }

func TestStoreContract(t *testing.T) {
	needIndexedDB(t)
	tracetest.TestStore(t, func(t *testing.T) trace.Store { return fresh() })
}

// TestStoreReopen: a reopen closes the Store's connection and opens a new
// Store over the same database, as a reload does.
func TestStoreReopen(t *testing.T) {
	needIndexedDB(t)
	tracetest.TestReopen(t, func(t *testing.T) (trace.Store, func() trace.Store) {
		name := freshName()
		s := idb.New(name)
		return s, func() trace.Store {
			idb.Close(s)
			s = idb.New(name)
			return s
		}
	})
}

func TestReopenedDatabaseKeepsEverything(t *testing.T) {
	needIndexedDB(t)
	ctx := context.Background()
	name := freshName()
	s := idb.New(name)
	prompt := []byte(`{"timestamp":"2026-11-30T04:09:45.282Z","type":"model_msg","payload":{"type":"text","role":"user","text":"first words","stop_reason":"completed"}}` + "\n")
	for _, data := range [][]byte{tracetest.Record(1), prompt, tracetest.Record(2)} {
		if _, err := s.Append(ctx, "s", 1, data); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Append(ctx, "s", 2, tracetest.Record(3)); err != nil {
		t.Fatal(err)
	}
	again := idb.New(name) // a new connection, as after a reload
	got, err := again.ReadFile(ctx, "s", 1)
	if want := slices.Concat(tracetest.Record(1), prompt, tracetest.Record(2)); err != nil || !bytes.Equal(got, want) {
		t.Errorf("file 1 = %q, %v; want %q", got, err, want)
	}
	sums, err := again.Summaries(ctx)
	if err != nil || len(sums) != 1 {
		t.Fatalf("Summaries = %+v, %v", sums, err)
	}
	want := int64(len(got) + len(tracetest.Record(3)))
	if s := sums[0]; s.FirstPrompt != "first words" || s.Files != 2 || s.Size != want || s.LastActivity.IsZero() {
		t.Errorf("summary = %+v, want first prompt, 2 files, %d bytes, a last activity", s, want)
	}
}

// A newer schema version opened elsewhere (another tab) makes this
// connection close; the next call reports the version error by name.
func TestNewerVersionElsewhere(t *testing.T) {
	needIndexedDB(t)
	ctx := context.Background()
	name := freshName()
	s := idb.New(name)
	if _, err := s.Append(ctx, "s", 1, tracetest.Record(1)); err != nil {
		t.Fatal(err)
	}
	if v := openVersion(t, name, idb.Version+1); v != idb.Version+1 {
		t.Fatalf("upgrade elsewhere: version %d", v)
	}
	_, err := s.ReadFile(ctx, "s", 1)
	var te *trace.Error
	if !errors.As(err, &te) || te.Op != "read" || !strings.Contains(err.Error(), "VersionError") {
		t.Errorf("ReadFile after a newer version = %v, want a read error naming VersionError", err)
	}
}

// openVersion opens name at version from JavaScript (as another tab would),
// closes it and returns the version it got, or 0 on error.
func openVersion(t *testing.T, name string, version int) int {
	t.Helper()
	req := js.Global().Get("indexedDB").Call("open", name, version)
	done := make(chan int, 1)
	var ok, fail js.Func
	ok = js.FuncOf(func(js.Value, []js.Value) any {
		db := req.Get("result")
		v := db.Get("version").Int()
		db.Call("close")
		done <- v
		return nil
	})
	fail = js.FuncOf(func(js.Value, []js.Value) any { done <- 0; return nil })
	defer ok.Release()
	defer fail.Release()
	req.Set("onsuccess", ok)
	req.Set("onerror", fail)
	return <-done
}

func TestSchemaVersionIsStored(t *testing.T) {
	needIndexedDB(t)
	name := freshName()
	s := idb.New(name)
	if _, err := s.Sessions(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Opening without a version gives the stored one.
	req := js.Global().Get("indexedDB").Call("open", name)
	done := make(chan int, 1)
	f := js.FuncOf(func(js.Value, []js.Value) any {
		db := req.Get("result")
		done <- db.Get("version").Int()
		db.Call("close")
		return nil
	})
	defer f.Release()
	req.Set("onsuccess", f)
	if v := <-done; v != idb.Version {
		t.Errorf("stored version = %d, want %d", v, idb.Version)
	}
}

// Summaries gives each session's source (a subagent's child session says
// so), appended or imported, and for a row an older build wrote, without
// it, reads it from the session's first record.
func TestSummariesSource(t *testing.T) {
	needIndexedDB(t)
	ctx := context.Background()
	name := freshName()
	s := idb.New(name)
	meta := func(id, source string) []byte {
		src := ""
		if source != "" {
			src = `,"source":"` + source + `"`
		}
		system := ""
		if id == "old-long-child" { // a first line longer than what is read of it at first
			system = strings.Repeat("Be brief. ", 1000)
		}
		return []byte(`{"timestamp":"2026-11-30T04:09:45.282Z","type":"session_meta","payload":{"session_id":"` + id + `","provider":"p","model_id":"m","model_context_window":1,"system_prompt":"` + system + `","agent_state":"","workspace":""` + src + `}}` + "\n")
	}
	for _, c := range []struct{ id, source string }{{"own", ""}, {"child", "subagent"}, {"old-child", "subagent"}, {"old-long-child", "subagent"}} {
		if _, err := s.Append(ctx, c.id, 1, meta(c.id, c.source)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, c.id, 1, tracetest.Record(1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Create(ctx, "imported-child", [][]byte{append(meta("imported-child", "subagent"), tracetest.Record(2)...)}); err != nil {
		t.Fatal(err)
	}
	// The row of an older build: five elements, no source.
	done := make(chan string, 1)
	var onOpen, onDone js.Func
	onOpen = js.FuncOf(func(this js.Value, _ []js.Value) any {
		db := this.Get("result")
		tx := db.Call("transaction", "sessions", "readwrite")
		tx.Call("objectStore", "sessions").Call("put", []any{"old-child", "", 0, 0, 1}, "old-child")
		tx.Call("objectStore", "sessions").Call("put", []any{"old-long-child", "", 0, 0, 1}, "old-long-child")
		tx.Set("oncomplete", onDone)
		tx.Set("onerror", onDone)
		return nil
	})
	onDone = js.FuncOf(func(this js.Value, args []js.Value) any {
		done <- args[0].Get("type").String()
		return nil
	})
	defer onOpen.Release()
	defer onDone.Release()
	js.Global().Get("indexedDB").Call("open", name).Set("onsuccess", onOpen)
	if ev := <-done; ev != "complete" {
		t.Fatalf("rewriting the row: %s", ev)
	}
	sums, err := idb.New(name).Summaries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range sums {
		got[s.ID] = s.Source
	}
	want := map[string]string{"own": "", "child": "subagent", "old-child": "subagent", "old-long-child": "subagent", "imported-child": "subagent"}
	if len(got) != len(want) {
		t.Fatalf("sources %v, want %v", got, want)
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: source %q, want %q", id, got[id], w)
		}
	}
}

// ReadParts reads a file a batch of rows at a time and hands it over in
// parts no larger than its part size, rows larger cut: joined, they are
// the file, and a resume from them is the resume of the file whole (one
// the reader cuts across batches, rows and lines).
func TestReadPartsInBatches(t *testing.T) {
	needIndexedDB(t)
	t.Cleanup(idb.SetReadSizes(3, 100))
	ctx := context.Background()
	s := fresh()
	meta := `{"timestamp":"2026-11-30T04:09:45.282Z","type":"session_meta","payload":{"session_id":"s","provider":"p","model_id":"m","model_context_window":1,"system_prompt":"` + strings.Repeat("Be brief. ", 30) + `","agent_state":"","workspace":""}}` + "\n"
	turn := func(n int) []byte {
		return []byte(`{"timestamp":"2026-11-30T04:09:45.283Z","type":"model_msg","payload":{"type":"text","role":"user","text":"prompt ` + strconv.Itoa(n) + `","stop_reason":"completed"}}
{"timestamp":"2026-11-30T04:09:45.284Z","type":"event_msg","payload":{"type":"request_begin"}}
{"timestamp":"2026-11-30T04:09:45.285Z","type":"model_msg","payload":{"type":"text","role":"assistant","text":"answer ` + strconv.Itoa(n) + `","stop_reason":"completed"}}
{"timestamp":"2026-11-30T04:09:45.286Z","type":"event_msg","payload":{"type":"request_end","status":"completed"}}
`)
	}
	want := []byte(meta)
	if _, err := s.Append(ctx, "s", 1, []byte(meta)); err != nil {
		t.Fatal(err)
	}
	for n := range 10 {
		if _, err := s.Append(ctx, "s", 1, turn(n)); err != nil {
			t.Fatal(err)
		}
		want = append(want, turn(n)...)
	}
	var got []byte
	parts := 0
	err := s.ReadParts(ctx, "s", 1, func(part []byte) error {
		if len(part) == 0 || len(part) > 100 {
			t.Errorf("a part of %d bytes, want 1 to 100", len(part))
		}
		parts++
		got = append(got, part...)
		return nil
	})
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("ReadParts = %d bytes in %d parts, %v; want the file's %d", len(got), parts, err, len(want))
	}
	mem := &trace.MemStore{}
	if err := mem.Create(ctx, "s", [][]byte{want}); err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC) }
	res, err := trace.Resume(ctx, s, "s", now)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := trace.Resume(ctx, mem, "s", now)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Snapshot.History) != 20 || !reflect.DeepEqual(res.Snapshot, whole.Snapshot) || !reflect.DeepEqual(res.Meta, whole.Meta) {
		t.Errorf("resumed from parts: %d messages in history, %d turns; whole: %d, %d", len(res.Snapshot.History), res.Snapshot.SessionTurns, len(whole.Snapshot.History), whole.Snapshot.SessionTurns)
	}
}

// startMeta is a session_meta record of session id: the first record of a
// Trace file.
func startMeta(id string) []byte {
	return []byte(`{"timestamp":"2026-11-30T04:09:45.282Z","type":"session_meta","payload":{"session_id":"` + id + `","provider":"p","model_id":"m","model_context_window":1,"system_prompt":"","agent_state":"","workspace":""}}` + "\n")
}

// A session deleted through another Store (another tab) while this Store
// writes it is not made again by this Store's next append: a Trace
// without its session_meta would be listed and never resumable. An append
// that starts the file with a session_meta does make it again, and the
// Store's own Delete or Forget lets the session go.
func TestDeletedElsewhereWhileOpen(t *testing.T) {
	needIndexedDB(t)
	ctx := context.Background()
	name := freshName()
	tab1, tab2 := idb.New(name), idb.New(name)
	gone := func(s *idb.Store, id string, index int) {
		t.Helper()
		_, err := s.Append(ctx, id, index, tracetest.Record(9))
		var te *trace.Error
		if !errors.As(err, &te) || !errors.Is(err, trace.ErrNotFound) || te.SessionID != id || te.Index != index || !strings.Contains(err.Error(), "deleted while it was open") {
			t.Errorf("append to %s file %d after its delete elsewhere = %v, want not found, deleted while it was open", id, index, err)
		}
		if _, err := tab2.Files(ctx, id); !errors.Is(err, trace.ErrNotFound) {
			t.Errorf("Files(%s) after the refused append = %v, want not found", id, err)
		}
	}
	// Written by this Store.
	for _, data := range [][]byte{startMeta("w"), tracetest.Record(1)} {
		if _, err := tab1.Append(ctx, "w", 1, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tab2.Delete(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	gone(tab1, "w", 1)
	// Found by this Store (a resume reads Files), written elsewhere.
	for i, data := range [][]byte{startMeta("r"), startMeta("r")} {
		if _, err := tab2.Append(ctx, "r", i+1, data); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tab1.Files(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	if err := tab2.Delete(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	gone(tab1, "r", 2)
	gone(tab1, "r", 1)
	// A file started anew, with its session_meta, is made again.
	if res, err := tab1.Append(ctx, "w", 1, startMeta("w")); err != nil || !res.Created {
		t.Errorf("append of a session_meta after the delete = %+v, %v; want the file created", res, err)
	}
	// This Store's own Delete, and Forget, let the session go: an append
	// after them makes it again, whatever it starts with.
	if err := tab1.Delete(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	if res, err := tab1.Append(ctx, "w", 1, tracetest.Record(2)); err != nil || !res.Created {
		t.Errorf("append after the Store's own Delete = %+v, %v; want the file created", res, err)
	}
	tab1.Forget("r")
	if res, err := tab1.Append(ctx, "r", 1, tracetest.Record(3)); err != nil || !res.Created {
		t.Errorf("append after Forget = %+v, %v; want the file created", res, err)
	}
}
