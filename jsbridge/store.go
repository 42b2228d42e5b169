//go:build js && wasm

package jsbridge

import (
	"context"
	"errors"
	"strings"
	"sync"
	"syscall/js"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

// Codes of a FloeError for persisted sessions (static/floe.d.ts
// FloeErrorCode).
const (
	CodeNotFound      = "not_found"      // no stored session has that id
	CodeSessionExists = "session_exists" // importSession: the id is already stored
	CodeInvalidTrace  = "invalid_trace"  // a trace that does not read (file and line named)
	CodeStorage       = "storage"        // the store failed (quota, IndexedDB unavailable, blocked upgrade, I/O)
)

// flushTimeout bounds how long the end of a run waits for its records to
// be committed before it reports them as not yet stored.
const flushTimeout = 30 * time.Second

// stores holds the trace stores a Bridge hands out, one per kind (and per
// directory), so that every session of a kind shares one store.
type stores struct {
	mu      sync.Mutex
	mem     *trace.MemStore
	idb     trace.Store
	openDir func(dir string) trace.Store
	dirs    map[string]trace.Store
}

// UseIndexedDB makes s the store of the option store: "indexeddb"
// (floe.d.ts StoreOption). Call it before Exports.
func (b *Bridge) UseIndexedDB(s trace.Store) {
	b.stores.mu.Lock()
	b.stores.idb = s
	b.stores.mu.Unlock()
}

// UseDirectories makes open the maker of the store of the option store:
// {dir} (one per directory; Node's build passes a trace.FileStore). Call it
// before Exports. Without it, {dir} is refused: the browser build leaves
// the file system out (size).
func (b *Bridge) UseDirectories(open func(dir string) trace.Store) {
	b.stores.mu.Lock()
	b.stores.openDir = open
	b.stores.mu.Unlock()
}

// traceStore returns the store named by the shim's normalized store
// option: "memory", "indexeddb", "dir:<path>", or "" for none.
func (b *Bridge) traceStore(v js.Value, name string) (trace.Store, error) {
	kind := ""
	if !absent(v) {
		var err error
		if kind, err = wantString(v, name); err != nil {
			return nil, err
		}
	}
	st := &b.stores
	st.mu.Lock()
	defer st.mu.Unlock()
	switch dir, isDir := strings.CutPrefix(kind, "dir:"); {
	case kind == "":
		return nil, nil
	case kind == "memory":
		if st.mem == nil {
			st.mem = &trace.MemStore{Now: time.Now}
		}
		return st.mem, nil
	case kind == "indexeddb" && st.idb != nil:
		return st.idb, nil
	case isDir && dir != "" && st.openDir != nil:
		if st.dirs == nil {
			st.dirs = map[string]trace.Store{}
		}
		if st.dirs[dir] == nil {
			st.dirs[dir] = st.openDir(dir)
		}
		return st.dirs[dir], nil
	}
	return nil, badArg(name, kind+" is not available in this build (IndexedDB: the browser build; {dir}: the Node build, floe-node.wasm: install @floehq/floe-node next to @floehq/floe)")
}

// batcher returns the Batcher of a session persisted in store, so that the
// engine's writes never wait for storage; its failures are diagnostics.
// fresh: a new session, whose id must not be stored yet.
func batcher(cfg *engine.Config, store trace.Store, fresh bool) *trace.Batcher {
	diag := diagFunc(cfg.OnDiagnostic) // not cfg: a resumed one holds what Resume read
	report := func(err error) { diag(engine.DiagTrace, err) }
	return trace.NewBatcher(store, trace.BatcherOptions{Fresh: fresh, Report: report})
}

// teeTrace makes cfg.Trace write to w as well as to the trace callback.
func teeTrace(cfg *engine.Config, w engine.TraceSink) {
	if cfg.Trace == nil {
		cfg.Trace = w
		return
	}
	cfg.Trace = teeSink{w, cfg.Trace}
}

// teeSink writes each record to both sinks; both are always attempted.
type teeSink [2]engine.TraceSink

func (t teeSink) Write(ctx context.Context, m omni.Message) error {
	return either(t[0].Write(ctx, m), t[1].Write(ctx, m))
}
func (t teeSink) Rotate() error { return either(t[0].Rotate(), t[1].Rotate()) }

// either returns the first non-nil error.
func either(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// flushTrace waits until the session's records are committed; a failure
// is a diagnostic (the run has ended either way, E-16.7).
func (s *session) flushTrace() {
	if s.trace == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer time.AfterFunc(flushTimeout, cancel).Stop()
	if err := s.trace.Flush(ctx); err != nil {
		diagFunc(s.onDiag)(engine.DiagTrace, errors.New("trace: records not yet stored at the end of the run: "+err.Error()))
	}
}

// storeErr maps an error of a store operation to a FloeError.
func storeErr(fn string, err error) error {
	code := CodeStorage
	switch {
	case errors.Is(err, trace.ErrExists):
		code = CodeSessionExists
	case errors.Is(err, trace.ErrNotFound):
		code = CodeNotFound
	case errors.Is(err, trace.ErrInvalid), errors.Is(err, trace.ErrNotResumable), errors.Is(err, trace.ErrTooLarge):
		code = CodeInvalidTrace
	}
	return &Error{Code: code, Msg: fn + ": " + err.Error()}
}

// isoTime formats t like Date.prototype.toISOString; null when unknown.
func isoTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return omni.FormatTimestamp(t)
}
