//go:build js && wasm

package dostore_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"syscall/js"
	"testing"
	"time"

	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/engine/trace/tracetest"
	"github.com/floehq/floe/web/dostore"
	"github.com/floehq/floe/web/jsx"
)

// newSQL returns a fresh, empty SqlStorage. In Node, scripts/test-wasm.sh
// loads tests/dostore/sql.cjs (NODE_OPTIONS=--require), which serves
// Cloudflare's ctx.storage.sql API over sql.js.
func newSQL(t *testing.T) js.Value {
	t.Helper()
	return sqlStorage(t).Invoke()
}

// sqlStorage returns the shim's function that makes a SqlStorage: given
// one, a new one over a copy of its database, closing it.
func sqlStorage(t *testing.T) js.Value {
	t.Helper()
	p := js.Global().Get("floeSQLStorage")
	if !p.Truthy() {
		t.Skip("no floeSQLStorage in this JavaScript environment (run through scripts/test-wasm.sh)")
	}
	mk, err := jsx.Await(context.Background(), p)
	if err != nil {
		t.Fatalf("floeSQLStorage: %v", err)
	}
	return mk
}

func newStore(t *testing.T) *dostore.Store {
	t.Helper()
	s, err := dostore.New(newSQL(t), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStoreContract(t *testing.T) {
	tracetest.TestStore(t, func(t *testing.T) trace.Store { return newStore(t) })
}

// TestStoreReopen: a reopen is a new Store over a copy of the database,
// the old one closed, as a Durable Object that restarts finds its storage.
func TestStoreReopen(t *testing.T) {
	tracetest.TestReopen(t, func(t *testing.T) (trace.Store, func() trace.Store) {
		mk := sqlStorage(t)
		sql := mk.Invoke()
		open := func() trace.Store {
			s, err := dostore.New(sql, time.Now)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		return open(), func() trace.Store {
			sql = mk.Invoke(sql)
			return open()
		}
	})
}

// The contract holds with a clock that yields to other goroutines (one of
// a host's own, behind a lock or a channel): the Store reads it between
// Create's look for the id and its write, and between Append's look for
// the file and its write, so concurrent Creates of one id all stored
// their files, and concurrent first appends all said Created. A GC
// assist parks a goroutine at an allocation the same way.
func TestStoreContractYieldingClock(t *testing.T) {
	tracetest.TestStore(t, func(t *testing.T) trace.Store {
		s, err := dostore.New(newSQL(t), func() time.Time {
			runtime.Gosched()
			return time.Now()
		})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestInvalidSaysWhy: a bad id or index is ErrInvalid in every method (not
// ErrNotFound), and the error says what was wrong.
func TestInvalidSaysWhy(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	if _, err := s.Append(ctx, "s", 1, tracetest.Record(1)); err != nil {
		t.Fatal(err)
	}
	_, files := s.Files(ctx, "a/b")
	_, read := s.ReadFile(ctx, "s", 0)
	_, readID := s.ReadFile(ctx, "", 1)
	_, lines := s.Append(ctx, "s", 1, []byte(`{"a":1}`))
	_, index := s.Append(ctx, "s", -1, tracetest.Record(2))
	for _, c := range []struct {
		op, want string
		err      error
	}{
		{"Files(\"a/b\")", `session id "a/b" contains '/'`, files},
		{"ReadFile(\"s\", 0)", "file index 0 (want ≥ 1)", read},
		{"ReadFile(\"\", 1)", "session id \"\" is empty", readID},
		{"Delete(\"..\")", "session id \"..\" starts with a dot", s.Delete(ctx, "..")},
		{"Append of no whole line", "records must be whole lines", lines},
		{"Append to file -1", "file index -1 (want ≥ 1)", index},
		{"Create with no files", "no files", s.Create(ctx, "new", nil)},
	} {
		if !errors.Is(c.err, trace.ErrInvalid) || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s = %v, want ErrInvalid saying %q", c.op, c.err, c.want)
		}
	}
}

// TestCreateKeepsEmptyFiles: Create stores each file byte for byte, an
// empty one too (it wrote no row for it: the file was missing, and a
// session of only empty files was not stored at all).
func TestCreateKeepsEmptyFiles(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	if err := s.Create(ctx, "gap", [][]byte{{}, tracetest.Record(1)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, "empty", [][]byte{{}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id    string
		sizes []int64
	}{{"gap", []int64{0, int64(len(tracetest.Record(1)))}}, {"empty", []int64{0}}} {
		files, err := s.Files(ctx, c.id)
		var sizes []int64
		for i, f := range files {
			if f.Index != i+1 {
				t.Errorf("Files(%q): file %d has index %d", c.id, i+1, f.Index)
			}
			sizes = append(sizes, f.Size)
		}
		if err != nil || !slices.Equal(sizes, c.sizes) {
			t.Errorf("Files(%q) = sizes %v, %v; want %v", c.id, sizes, err, c.sizes)
		}
	}
	if data, err := s.ReadFile(ctx, "gap", 1); err != nil || len(data) != 0 {
		t.Errorf("ReadFile of the empty file = %q, %v; want no bytes", data, err)
	}
	if err := s.Create(ctx, "empty", [][]byte{tracetest.Record(2)}); !errors.Is(err, trace.ErrExists) {
		t.Errorf("Create over a session of one empty file = %v, want ErrExists", err)
	}
	res, err := s.Append(ctx, "empty", 1, tracetest.Record(3))
	if err != nil || res != (trace.AppendResult{}) {
		t.Errorf("Append to the empty file = %+v, %v; want neither Created nor Healed", res, err)
	}
}

// TestRefusesBytesNotText: a row is text, so bytes that are not UTF-8 are
// refused (they were stored with each such byte turned into U+FFFD).
func TestRefusesBytesNotText(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	bad := []byte("{\"text\":\"\xff\xfe\"}\n")
	_, err := s.Append(ctx, "s", 1, bad)
	if !errors.Is(err, trace.ErrInvalid) || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("Append of bytes not UTF-8 = %v, want ErrInvalid naming UTF-8", err)
	}
	err = s.Create(ctx, "c", [][]byte{tracetest.Record(1), bad})
	var te *trace.Error
	if !errors.Is(err, trace.ErrInvalid) || !errors.As(err, &te) || te.Index != 2 {
		t.Errorf("Create with file 2 not UTF-8 = %v, want ErrInvalid naming file 2", err)
	}
	if sessions, err := s.Sessions(ctx); err != nil || len(sessions) != 0 {
		t.Errorf("refused writes stored %+v, %v", sessions, err)
	}
}

// ReadParts hands a part over without holding the Store's lock: a part
// may use the Store (here, Files and Append) without waiting for ever.
func TestReadPartsMayUseTheStore(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	if _, err := s.Append(ctx, "s", 1, tracetest.Record(1)); err != nil {
		t.Fatal(err)
	}
	err := s.ReadParts(ctx, "s", 1, func([]byte) error {
		if _, err := s.Files(ctx, "s"); err != nil {
			return err
		}
		_, err := s.Append(ctx, "s", 2, tracetest.Record(2))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if files, err := s.Files(ctx, "s"); err != nil || len(files) != 2 {
		t.Fatalf("files %v, %v, want two", files, err)
	}
}
