//go:build js && wasm

package idb

import (
	"bytes"
	"context"
	"math"
	"sync"
	"sync/atomic"
	"syscall/js"
	"time"

	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/internal/errf"
)

// Store is a [trace.Store] and a [trace.Summarizer] over one IndexedDB
// database. Create it with [New]. See the package doc for the layout and
// the guarantees.
type Store struct {
	_    [0]func() // not comparable: no equality code in floe.wasm
	name string

	openMu sync.Mutex
	conn   atomic.Pointer[conn]

	// known is, by session, the highest file index this Store appended
	// to, created or listed: one of those gone (the session deleted
	// through another Store, another tab, while this one writes it) is
	// made again only by an append that starts it with a session_meta.
	mu    sync.Mutex
	known map[string]int
}

var (
	_ trace.Store      = (*Store)(nil)
	_ trace.Summarizer = (*Store)(nil)
	_ trace.PartReader = (*Store)(nil)
)

// New returns a Store over the database name. Nothing is opened until the
// first call.
func New(name string) *Store { return &Store{name: name, known: map[string]int{}} }

// note records that file index of session id exists (index 0: the
// session is gone, through this Store).
func (s *Store) note(id string, index int) {
	s.mu.Lock()
	if index == 0 {
		delete(s.known, id)
	} else {
		s.known[id] = max(s.known[id], index)
	}
	s.mu.Unlock()
}

// Forget drops what s keeps of session id once nothing of this page
// writes it: a later append of id no longer tells a file deleted
// elsewhere from a new one.
func (s *Store) Forget(id string) { s.note(id, 0) }

var (
	all       = []any{recordsStore, filesStore, sessionsStore}
	readFiles = []any{filesStore, recordsStore}
	sessions  = []any{sessionsStore}
	summaries = []any{sessionsStore, recordsStore}
)

// do runs one operation on session id (file index; 0 = none): it checks
// ctx and the id, runs body in a transaction and wraps a failure as a
// trace.Error naming op.
func (s *Store) do(ctx context.Context, op, id string, index int, mode string, stores []any, body func(t *txn)) error {
	err := ctx.Err()
	if err == nil && op != "sessions" {
		err = trace.ValidateID(id)
	}
	if err == nil {
		err = s.transact(ctx, stores, mode, body)
	}
	if err != nil {
		return &trace.Error{Op: op, SessionID: id, Index: index, Err: err}
	}
	return nil
}

// badIndex refuses a file index below 1.
func badIndex(op, id string, index int) error {
	if index >= 1 {
		return nil
	}
	return &trace.Error{Op: op, SessionID: id, Index: index, Err: errf.Errorf("%w: file index %d (want ≥ 1)", trace.ErrInvalid, index)}
}

// Append implements [trace.Store]: one transaction reads the file and
// session rows, heals a torn tail, adds the records and updates both rows.
func (s *Store) Append(ctx context.Context, id string, index int, data []byte) (res trace.AppendResult, err error) {
	if err := badIndex("append", id, index); err != nil {
		return res, err
	}
	if len(data) == 0 || data[len(data)-1] != '\n' {
		return res, &trace.Error{Op: "append", SessionID: id, Index: index, Err: errf.Errorf("%w: records must be whole lines ending in \\n", trace.ErrInvalid)}
	}
	chunk := bytesJS(data)
	s.mu.Lock()
	known := index <= s.known[id]
	s.mu.Unlock()
	err = s.do(ctx, "append", id, index, "readwrite", all, func(t *txn) {
		var file js.Value
		t.request(filesStore, "get", func(v js.Value) { file = v }, fileKey(id, index))
		t.request(sessionsStore, "get", func(row js.Value) {
			f, r := readFile(file, index), readSession(row, id)
			res.Created = file.IsUndefined()
			if res.Created && known && !trace.StartsFile(data) {
				t.fail(errf.Errorf("%w: the session was deleted while it was open (in another tab or window?): its records are not written", trace.ErrNotFound))
				return
			}
			res.Healed = t.add(&r, &f, data, chunk, res.Created)
			t.request(sessionsStore, "put", nil, r.value(), id)
		}, id)
	})
	if err != nil {
		return trace.AppendResult{}, err
	}
	s.note(id, index)
	return res, nil
}

// Files implements [trace.Store].
func (s *Store) Files(ctx context.Context, id string) ([]trace.FileInfo, error) {
	var rows js.Value
	err := s.do(ctx, "files", id, 0, "readonly", all[1:2], func(t *txn) {
		t.request(filesStore, "getAll", func(v js.Value) { rows = v }, sessionRange(id))
	})
	if err == nil && rows.Length() == 0 {
		err = &trace.Error{Op: "files", SessionID: id, Err: trace.ErrNotFound}
	}
	if err != nil {
		return nil, err
	}
	out := make([]trace.FileInfo, rows.Length())
	for i := range out {
		f := readFile(rows.Index(i), 0)
		out[i] = trace.FileInfo{Index: f.index, Size: f.size, Modified: time.UnixMilli(f.modified)}
		s.note(id, f.index)
	}
	return out, nil
}

// The rows ReadParts reads in one transaction, and the most bytes it hands
// over at a time (a row larger is handed over in parts).
var (
	batchRows = 256
	partBytes = 64 << 10
)

// ReadFile implements [trace.Store]: the file is read as ReadParts reads
// it, into one slice of its size.
func (s *Store) ReadFile(ctx context.Context, id string, index int) ([]byte, error) {
	var out []byte
	err := s.read(ctx, id, index, func(size int64) { out = make([]byte, 0, size) }, func(part []byte) error {
		out = append(out, part...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReadParts implements [trace.PartReader]: the file's rows, as many as its
// file row counted when the read began, are read batchRows at a time,
// each batch in a transaction of its own, and copied into Go partBytes at
// a time; the rest stays in JavaScript.
func (s *Store) ReadParts(ctx context.Context, id string, index int, part func([]byte) error) error {
	return s.read(ctx, id, index, func(int64) {}, part)
}

// read reads file index of the session into part; size first receives the
// file's size.
func (s *Store) read(ctx context.Context, id string, index int, size func(int64), part func([]byte) error) error {
	if err := badIndex("read", id, index); err != nil {
		return err
	}
	var f file
	var buf []byte
	for next := 0; ; {
		var row, rows js.Value
		err := s.do(ctx, "read", id, index, "readonly", readFiles, func(t *txn) {
			if next == 0 {
				t.request(filesStore, "get", func(v js.Value) { row = v }, fileKey(id, index))
			}
			t.request(recordsStore, "getAll", func(v js.Value) { rows = v }, fileRange(id, index, next), batchRows)
		})
		if err == nil && next == 0 {
			switch f = readFile(row, index); {
			case row.IsUndefined():
				err = &trace.Error{Op: "read", SessionID: id, Index: index, Err: trace.ErrNotFound}
			case f.size > trace.MaxFileBytes:
				err = &trace.Error{Op: "read", SessionID: id, Index: index, Err: trace.ErrTooLarge}
			}
			if err == nil {
				buf = make([]byte, 0, partBytes)
				size(f.size)
			}
		}
		if err == nil && next < f.chunks && rows.Length() == 0 { // deleted while it was read
			err = &trace.Error{Op: "read", SessionID: id, Index: index, Err: trace.ErrNotFound}
		}
		if err != nil {
			return err
		}
		for i := range min(rows.Length(), f.chunks-next) {
			chunk := rows.Index(i)
			for off, n := 0, chunk.Length(); off < n; {
				if len(buf) == cap(buf) {
					if err := part(buf); err != nil {
						return err
					}
					buf = buf[:0]
				}
				k := min(cap(buf)-len(buf), n-off)
				src := chunk
				if off > 0 || k < n {
					src = chunk.Call("subarray", off, off+k)
				}
				buf = buf[:len(buf)+js.CopyBytesToGo(buf[len(buf):len(buf)+k], src)]
				off += k
			}
		}
		if next += rows.Length(); next >= f.chunks {
			break
		}
	}
	if len(buf) == 0 {
		return nil
	}
	return part(buf)
}

// Sessions implements [trace.Store].
func (s *Store) Sessions(ctx context.Context) ([]trace.SessionInfo, error) {
	sums, err := s.Summaries(ctx)
	out := make([]trace.SessionInfo, len(sums))
	for i := range sums {
		out[i] = sums[i].SessionInfo
	}
	return out, err
}

// Summaries implements [trace.Summarizer]: one read of the session rows,
// in IndexedDB key order (by id).
func (s *Store) Summaries(ctx context.Context) ([]trace.Summary, error) {
	var out []trace.Summary
	err := s.do(ctx, "sessions", "", 0, "readonly", summaries, func(t *txn) {
		t.request(sessionsStore, "getAll", func(rows js.Value) {
			out = make([]trace.Summary, rows.Length())
			for i := range out {
				r := readSession(rows.Index(i), "")
				out[i] = trace.Summary{
					SessionInfo: trace.SessionInfo{ID: r.id, Files: r.files, Size: r.size, LastActivity: time.UnixMilli(r.lastActivity)},
					FirstPrompt: r.firstPrompt, Source: r.source,
				}
				if !r.sourceKnown { // a row of an older build: the first record tells
					t.request(recordsStore, "get", func(chunk js.Value) {
						if chunk.Type() == js.TypeObject {
							out[i].Source = trace.MetaSource(firstLine(chunk))
						}
					}, recordKey(r.id, 1, 0))
				}
			}
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Create implements [trace.Store]: one transaction checks that the session
// is absent and writes every file.
func (s *Store) Create(ctx context.Context, id string, files [][]byte) error {
	chunks := make([]js.Value, len(files))
	for i, data := range files {
		chunks[i] = bytesJS(data)
	}
	err := s.do(ctx, "create", id, 0, "readwrite", all, func(t *txn) {
		if len(files) == 0 {
			t.fail(errf.Errorf("%w: no files", trace.ErrInvalid))
			return
		}
		t.request(sessionsStore, "get", func(v js.Value) {
			if !v.IsUndefined() {
				t.fail(trace.ErrExists)
				return
			}
			r := session{id: id}
			for i, data := range files {
				t.add(&r, &file{index: i + 1, last: '\n'}, data, chunks[i], true)
			}
			t.request(sessionsStore, "put", nil, r.value(), id)
		}, id)
	})
	if err == nil {
		s.note(id, len(files))
	}
	return err
}

// Delete implements [trace.Store]: one transaction removes the session's
// records, file rows and session row.
func (s *Store) Delete(ctx context.Context, id string) error {
	err := s.do(ctx, "delete", id, 0, "readwrite", all, func(t *txn) {
		t.request(sessionsStore, "get", func(v js.Value) {
			if v.IsUndefined() {
				t.fail(trace.ErrNotFound)
				return
			}
			t.request(recordsStore, "delete", nil, sessionRange(id))
			t.request(filesStore, "delete", nil, sessionRange(id))
			t.request(sessionsStore, "delete", nil, id)
		}, id)
	})
	if err == nil {
		s.note(id, 0)
	}
	return err
}

// add puts data (chunk holds its bytes) as the next chunk of file f of
// session r, after a "\n" that heals a torn tail (reported), and puts the
// file row; r is updated for the caller to put.
func (t *txn) add(r *session, f *file, data []byte, chunk js.Value, created bool) (healed bool) {
	if f.size > 0 && f.last != '\n' {
		t.request(recordsStore, "put", nil, bytesJS([]byte{'\n'}), recordKey(r.id, f.index, f.chunks))
		f.chunks++
		f.size++
		r.size++
		healed = true
	}
	if len(data) > 0 {
		t.request(recordsStore, "put", nil, chunk, recordKey(r.id, f.index, f.chunks))
		f.chunks++
		f.last = int(data[len(data)-1])
	}
	now := time.Now().UnixMilli()
	f.size += int64(len(data))
	f.modified = now
	t.request(filesStore, "put", nil, f.value(), fileKey(r.id, f.index))
	if created {
		r.files++
	}
	r.size += int64(len(data))
	r.lastActivity = now
	if r.firstPrompt == "" {
		r.firstPrompt, _ = trace.FirstPrompt(data)
	}
	if !r.sourceKnown && f.index == 1 && f.chunks == 1 && !healed {
		r.source, r.sourceKnown = trace.MetaSource(data), true // the session's first record
	}
	return healed
}

// firstLine copies the first line of chunk (a Uint8Array of whole
// records): its first 4 KiB, the whole chunk only when its first line is
// longer (a session_meta with a long system prompt). An imported session's
// first chunk is its whole first file.
func firstLine(chunk js.Value) []byte {
	n := chunk.Length()
	head := make([]byte, min(n, 4096))
	js.CopyBytesToGo(head, chunk)
	if len(head) == n || bytes.IndexByte(head, '\n') >= 0 {
		return head
	}
	data := make([]byte, n)
	js.CopyBytesToGo(data, chunk)
	return data
}

// ---- rows and keys -----------------------------------------------------------

// file is a row of the "files" store: [index, size, chunks, last,
// modified].
type file struct {
	index    int
	size     int64
	chunks   int // the next ordinal
	last     int // the last byte; '\n' when empty
	modified int64
}

func (f *file) value() any { return []any{f.index, f.size, f.chunks, f.last, f.modified} }

// readFile reads a file row; undefined gives an empty file of index.
func readFile(v js.Value, index int) file {
	if v.Type() != js.TypeObject {
		return file{index: index, last: '\n'}
	}
	return file{index: num(v, 0), size: int64(num(v, 1)), chunks: num(v, 2), last: num(v, 3), modified: int64(num(v, 4))}
}

// session is a row of the "sessions" store: [id, firstPrompt,
// lastActivity, size, files, source]. source is the session_meta's
// (trace.MetaSource), null in a row written before it was kept.
type session struct {
	id           string
	firstPrompt  string
	lastActivity int64
	size         int64
	files        int
	source       string
	sourceKnown  bool
}

func (r *session) value() any {
	var source any // null: not known
	if r.sourceKnown {
		source = r.source
	}
	return []any{r.id, r.firstPrompt, r.lastActivity, r.size, r.files, source}
}

// readSession reads a session row; undefined gives an empty row for id.
func readSession(v js.Value, id string) session {
	if v.Type() != js.TypeObject {
		return session{id: id}
	}
	r := session{id: v.Index(0).String(), firstPrompt: v.Index(1).String(), lastActivity: int64(num(v, 2)), size: int64(num(v, 3)), files: num(v, 4)}
	if src := v.Index(5); src.Type() == js.TypeString {
		r.source, r.sourceKnown = src.String(), true
	}
	return r
}

// num reads element i of a row; 0 when it is not a number.
func num(v js.Value, i int) int {
	if f := v.Index(i); f.Type() == js.TypeNumber {
		return f.Int()
	}
	return 0
}

func recordKey(id string, index, ordinal int) any { return []any{id, index, ordinal} }
func fileKey(id string, index int) any            { return []any{id, index} }

// fileRange covers the records of one file from ordinal from.
func fileRange(id string, index, from int) js.Value {
	return bound([]any{id, index, from}, []any{id, index, math.Inf(1)})
}

// sessionRange covers every key [id, …] (numbers sort before arrays).
func sessionRange(id string) js.Value {
	return bound([]any{id}, []any{id, []any{}})
}

func bound(lower, upper any) js.Value {
	return js.Global().Get("IDBKeyRange").Call("bound", lower, upper)
}

// bytesJS copies b into a new Uint8Array.
func bytesJS(b []byte) js.Value {
	u := js.Global().Get("Uint8Array").New(len(b))
	js.CopyBytesToJS(u, b)
	return u
}
