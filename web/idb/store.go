//go:build js && wasm

package idb

import (
	"context"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"syscall/js"
	"time"

	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/internal/errf"
)

// Store is a [trace.Store] and a [trace.Summarizer] over one IndexedDB
// database. The zero value is not usable; call [New]. See the package doc
// for the layout and the guarantees.
type Store struct {
	name string
	// Now stamps modification times; nil = time.Now.
	Now func() time.Time

	openMu sync.Mutex
	conn   atomic.Pointer[conn]
}

var (
	_ trace.Store      = (*Store)(nil)
	_ trace.Summarizer = (*Store)(nil)
)

// New returns a Store over the database name. Nothing is opened until the
// first call.
func New(name string) *Store { return &Store{name: name} }

var all = []string{recordsStore, filesStore, sessionsStore}

func (s *Store) now() int64 {
	if s.Now != nil {
		return s.Now().UnixMilli()
	}
	return time.Now().UnixMilli()
}

func opErr(op, id string, index int, err error) error {
	return &trace.Error{Op: op, SessionID: id, Index: index, Err: err}
}

// check validates the arguments of an operation on a session (index 0) or
// one of its files.
func check(ctx context.Context, id string, index int, checkIndex bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := trace.ValidateID(id); err != nil {
		return err
	}
	if checkIndex && index < 1 {
		return errf.Errorf("%w: file index %d (want ≥ 1)", trace.ErrInvalid, index)
	}
	return nil
}

// Append implements [trace.Store]: one transaction reads the file and
// session rows, heals a torn tail, adds the records and updates both rows.
func (s *Store) Append(ctx context.Context, id string, index int, data []byte) (res trace.AppendResult, err error) {
	if err := check(ctx, id, index, true); err != nil {
		return res, opErr("append", id, index, err)
	}
	if len(data) == 0 || data[len(data)-1] != '\n' {
		return res, opErr("append", id, index, errf.Errorf("%w: records must be whole lines ending in \\n", trace.ErrInvalid))
	}
	chunk := bytesJS(data)
	err = s.transact(ctx, all, "readwrite", func(t *txn) {
		var file, row js.Value
		pending := 2
		then := func() {
			if pending--; pending > 0 {
				return
			}
			f, r := readFile(file, index), readSession(row, id)
			now := s.now()
			res.Created = file.IsUndefined()
			if n := f.size; n > 0 && f.last != '\n' {
				t.put(recordsStore, bytesJS([]byte{'\n'}), recordKey(id, index, f.chunks))
				f.chunks++
				f.size++
				r.size++
				res.Healed = true
			}
			t.put(recordsStore, chunk, recordKey(id, index, f.chunks))
			f.chunks++
			f.size += int64(len(data))
			f.last = int(data[len(data)-1])
			f.modified = now
			t.put(filesStore, f.value(), fileKey(id, index))
			if res.Created {
				r.files++
			}
			r.size += int64(len(data))
			r.lastActivity = now
			if r.firstPrompt == "" {
				r.firstPrompt, _ = trace.FirstPrompt(data)
			}
			t.put(sessionsStore, r.value(), id)
		}
		t.get(filesStore, fileKey(id, index), func(v js.Value) { file = v; then() })
		t.get(sessionsStore, id, func(v js.Value) { row = v; then() })
	})
	if err != nil {
		return trace.AppendResult{}, opErr("append", id, index, err)
	}
	return res, nil
}

// Files implements [trace.Store].
func (s *Store) Files(ctx context.Context, id string) ([]trace.FileInfo, error) {
	if err := check(ctx, id, 0, false); err != nil {
		return nil, opErr("files", id, 0, err)
	}
	var rows js.Value
	err := s.transact(ctx, []string{filesStore}, "readonly", func(t *txn) {
		t.getAll(filesStore, sessionRange(id), func(v js.Value) { rows = v })
	})
	if err != nil {
		return nil, opErr("files", id, 0, err)
	}
	n := rows.Length()
	if n == 0 {
		return nil, opErr("files", id, 0, trace.ErrNotFound)
	}
	out := make([]trace.FileInfo, n)
	for i := range n {
		f := readFile(rows.Index(i), 0)
		out[i] = trace.FileInfo{Index: f.index, Size: f.size, Modified: time.UnixMilli(f.modified)}
	}
	return out, nil
}

// ReadFile implements [trace.Store].
func (s *Store) ReadFile(ctx context.Context, id string, index int) ([]byte, error) {
	if err := check(ctx, id, index, true); err != nil {
		return nil, opErr("read", id, index, err)
	}
	var file, chunks js.Value
	err := s.transact(ctx, []string{filesStore, recordsStore}, "readonly", func(t *txn) {
		t.get(filesStore, fileKey(id, index), func(v js.Value) { file = v })
		t.getAll(recordsStore, fileRange(id, index), func(v js.Value) { chunks = v })
	})
	if err != nil {
		return nil, opErr("read", id, index, err)
	}
	if file.IsUndefined() {
		return nil, opErr("read", id, index, trace.ErrNotFound)
	}
	if f := readFile(file, index); f.size > trace.MaxFileBytes {
		return nil, opErr("read", id, index, errf.Errorf("%w: %d bytes", trace.ErrTooLarge, f.size))
	}
	n, total := chunks.Length(), 0
	for i := range n {
		total += chunks.Index(i).Get("byteLength").Int()
	}
	out := make([]byte, total)
	off := 0
	for i := range n {
		off += js.CopyBytesToGo(out[off:], chunks.Index(i))
	}
	return out[:off], nil
}

// Sessions implements [trace.Store].
func (s *Store) Sessions(ctx context.Context) ([]trace.SessionInfo, error) {
	sums, err := s.summaries(ctx, "sessions")
	if err != nil {
		return nil, err
	}
	out := make([]trace.SessionInfo, len(sums))
	for i := range sums {
		out[i] = sums[i].SessionInfo
	}
	return out, nil
}

// Summaries implements [trace.Summarizer]: one read of the session rows.
func (s *Store) Summaries(ctx context.Context) ([]trace.Summary, error) {
	return s.summaries(ctx, "summaries")
}

func (s *Store) summaries(ctx context.Context, op string) ([]trace.Summary, error) {
	if err := ctx.Err(); err != nil {
		return nil, opErr(op, "", 0, err)
	}
	var rows js.Value
	err := s.transact(ctx, []string{sessionsStore}, "readonly", func(t *txn) {
		t.getAll(sessionsStore, js.Undefined(), func(v js.Value) { rows = v })
	})
	if err != nil {
		return nil, opErr(op, "", 0, err)
	}
	out := make([]trace.Summary, rows.Length())
	for i := range out {
		r := readSession(rows.Index(i), "")
		out[i] = trace.Summary{
			SessionInfo: trace.SessionInfo{ID: r.id, Files: r.files, Size: r.size, LastActivity: time.UnixMilli(r.lastActivity)},
			FirstPrompt: r.firstPrompt,
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Create implements [trace.Store]: one transaction checks that the session
// is absent and writes every file.
func (s *Store) Create(ctx context.Context, id string, files [][]byte) error {
	if err := check(ctx, id, 0, false); err != nil {
		return opErr("create", id, 0, err)
	}
	if len(files) == 0 {
		return opErr("create", id, 0, errf.Errorf("%w: no files", trace.ErrInvalid))
	}
	chunks := make([]js.Value, len(files))
	for i, data := range files {
		chunks[i] = bytesJS(data)
	}
	err := s.transact(ctx, all, "readwrite", func(t *txn) {
		t.get(sessionsStore, id, func(v js.Value) {
			if !v.IsUndefined() {
				t.fail(trace.ErrExists)
				return
			}
			now := s.now()
			r := session{id: id, files: len(files), lastActivity: now}
			for i, data := range files {
				f := file{index: i + 1, size: int64(len(data)), chunks: 1, last: '\n', modified: now}
				if len(data) > 0 {
					f.last = int(data[len(data)-1])
				}
				t.put(recordsStore, chunks[i], recordKey(id, i+1, 0))
				t.put(filesStore, f.value(), fileKey(id, i+1))
				r.size += f.size
				if r.firstPrompt == "" {
					r.firstPrompt, _ = trace.FirstPrompt(data)
				}
			}
			t.put(sessionsStore, r.value(), id)
		})
	})
	if err != nil {
		return opErr("create", id, 0, err)
	}
	return nil
}

// Delete implements [trace.Store]: one transaction removes the session's
// records, file rows and session row.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := check(ctx, id, 0, false); err != nil {
		return opErr("delete", id, 0, err)
	}
	err := s.transact(ctx, all, "readwrite", func(t *txn) {
		t.get(sessionsStore, id, func(v js.Value) {
			if v.IsUndefined() {
				t.fail(trace.ErrNotFound)
				return
			}
			t.delete(recordsStore, sessionRange(id))
			t.delete(filesStore, sessionRange(id))
			t.delete(sessionsStore, id)
		})
	})
	if err != nil {
		return opErr("delete", id, 0, err)
	}
	return nil
}

// ---- rows and keys -----------------------------------------------------------

// file is a row of the "files" store.
type file struct {
	index    int
	size     int64
	chunks   int // the next ordinal
	last     int // the last byte; '\n' when empty
	modified int64
}

func (f file) value() any {
	return map[string]any{"index": f.index, "size": f.size, "chunks": f.chunks, "last": f.last, "modified": f.modified}
}

// readFile reads a file row; undefined gives an empty file of index.
func readFile(v js.Value, index int) file {
	if v.Type() != js.TypeObject {
		return file{index: index, last: '\n'}
	}
	return file{index: num(v, "index"), size: int64(num(v, "size")), chunks: num(v, "chunks"), last: num(v, "last"), modified: int64(num(v, "modified"))}
}

// session is a row of the "sessions" store.
type session struct {
	id           string
	firstPrompt  string
	lastActivity int64
	size         int64
	files        int
}

func (r session) value() any {
	return map[string]any{"id": r.id, "firstPrompt": r.firstPrompt, "lastActivity": r.lastActivity, "size": r.size, "files": r.files}
}

// readSession reads a session row; undefined gives an empty row for id.
func readSession(v js.Value, id string) session {
	if v.Type() != js.TypeObject {
		return session{id: id}
	}
	r := session{id: id, lastActivity: int64(num(v, "lastActivity")), size: int64(num(v, "size")), files: num(v, "files")}
	if s := v.Get("id"); s.Type() == js.TypeString {
		r.id = s.String()
	}
	if s := v.Get("firstPrompt"); s.Type() == js.TypeString {
		r.firstPrompt = s.String()
	}
	return r
}

// num reads a numeric field; 0 when it is not a number.
func num(v js.Value, key string) int {
	if f := v.Get(key); f.Type() == js.TypeNumber {
		return f.Int()
	}
	return 0
}

func recordKey(id string, index, ordinal int) any { return []any{id, index, ordinal} }
func fileKey(id string, index int) any            { return []any{id, index} }

var keyRange = js.Global().Get("IDBKeyRange")

// fileRange covers the records of one file.
func fileRange(id string, index int) js.Value {
	return bound([]any{id, index, 0}, []any{id, index, math.Inf(1)})
}

// sessionRange covers every key [id, …] (numbers sort before arrays).
func sessionRange(id string) js.Value {
	return bound([]any{id}, []any{id, []any{}})
}

func bound(lower, upper any) js.Value {
	kr := keyRange
	if !kr.Truthy() {
		kr = js.Global().Get("IDBKeyRange")
	}
	return kr.Call("bound", lower, upper)
}

var uint8Array = js.Global().Get("Uint8Array")

// bytesJS copies b into a new Uint8Array.
func bytesJS(b []byte) js.Value {
	u := uint8Array.New(len(b))
	js.CopyBytesToJS(u, b)
	return u
}
