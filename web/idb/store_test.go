//go:build js && wasm

package idb_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall/js"
	"testing"

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

// fresh returns a Store over a database no other test uses.
func fresh() *idb.Store {
	return idb.New("floe-test-" + strconv.FormatInt(dbs.Add(1), 10))
}

func TestStoreContract(t *testing.T) {
	needIndexedDB(t)
	tracetest.TestStore(t, func(t *testing.T) trace.Store { return fresh() })
}

func TestReopenedDatabaseKeepsEverything(t *testing.T) {
	needIndexedDB(t)
	ctx := context.Background()
	name := "floe-test-reopen"
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
	name := "floe-test-newer"
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
	s := fresh()
	name := "floe-test-" + strconv.FormatInt(dbs.Load(), 10)
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
