//go:build js && wasm

// Package dostore is a trace.Store in a Cloudflare Durable Object's SQLite
// storage (ctx.storage.sql): an append is one row, or several when it is
// larger than a row may be, written together or not at all, so a record is
// never torn and a file is the concatenation of its rows. Only Create
// stores a torn tail (an imported file may end inside a record): the next
// append writes "\n" first and reports Healed. The rows are text, so
// bytes that are not UTF-8 are refused (ErrInvalid) rather than stored
// changed. The object's
// storage survives hibernation, eviction and restarts; a session object
// resumes from it when it wakes.
package dostore

import (
	"context"
	"sync"
	"syscall/js"
	"time"
	"unicode/utf8"

	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/internal/errf"
)

const schema = `CREATE TABLE IF NOT EXISTS floe_trace (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  session TEXT NOT NULL,
  idx INTEGER NOT NULL,
  data TEXT NOT NULL,
  at INTEGER NOT NULL)`

// RowBytes is the most one row holds of an append's bytes. Cloudflare
// refuses a string, BLOB or row over 2 MB (its SQL limits for Durable
// Objects; local workerd takes more), so a longer append (a model's reply
// or a tool's output of megabytes) is split into rows of at most RowBytes,
// each cut at the start of a UTF-8 character, as the column is text.
const RowBytes = 1 << 20

// Store is the SQLite-backed Store, safe for concurrent use from
// goroutines. The SQL API is synchronous, but a method's goroutine can
// still be switched out between its look and its write: in a call of the
// clock (now, the host's), or at an allocation when the garbage collector
// parks it to assist. So each method holds mu while it reads and writes
// the table (ReadParts not while a part is handed over).
//
// Its table is made by the first write and dropped with the last session:
// an object that a request for an unknown id woke writes nothing, so it
// keeps no storage.
type Store struct {
	mu   sync.Mutex
	sql  js.Value
	now  func() time.Time
	made bool // the table exists
}

var (
	_ trace.Store      = (*Store)(nil)
	_ trace.PartReader = (*Store)(nil)
)

// New returns the Store over sql (a SqlStorage). It writes nothing: the
// table is made by the first write.
func New(sql js.Value, now func() time.Time) (*Store, error) {
	s := &Store{sql: sql, now: now}
	rows, err := s.exec("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'floe_trace'")
	if err != nil {
		return nil, err
	}
	s.made = len(rows) > 0 && rows[0].Index(0).Int() > 0
	return s, nil
}

// make creates the table before a write.
func (s *Store) make() error {
	if s.made {
		return nil
	}
	if _, err := s.exec(schema); err != nil {
		return err
	}
	s.made = true
	return nil
}

// exec runs one statement and returns its rows as arrays of values.
func (s *Store) exec(query string, args ...any) (rows []js.Value, err error) {
	defer func() {
		if p := recover(); p != nil {
			if e, ok := p.(js.Error); ok {
				err = e
				return
			}
			panic(p)
		}
	}()
	cur := s.sql.Call("exec", append([]any{query}, args...)...)
	it := cur.Call("raw").Call("toArray")
	for i := 0; i < it.Length(); i++ {
		rows = append(rows, it.Index(i))
	}
	return rows, nil
}

func fail(op, id string, index int, err error) error {
	return &trace.Error{Op: op, SessionID: id, Index: index, Err: err}
}

// notText refuses bytes a text row would change: JavaScript's strings
// hold UTF-8's characters, and each byte that is not one becomes U+FFFD.
var notText = errf.Errorf("%w: not UTF-8 text (a Trace record is JSON)", trace.ErrInvalid)

// checkID refuses a done context and an id trace.ValidateID refuses.
func checkID(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return trace.ValidateID(id)
}

// checkFile is checkID, and refuses a file index below 1.
func checkFile(ctx context.Context, id string, index int) error {
	if err := checkID(ctx, id); err != nil {
		return err
	}
	if index < 1 {
		return errf.Errorf("%w: file index %d (want ≥ 1)", trace.ErrInvalid, index)
	}
	return nil
}

// Append implements trace.Store.
func (s *Store) Append(ctx context.Context, id string, index int, data []byte) (trace.AppendResult, error) {
	if err := checkFile(ctx, id, index); err != nil {
		return trace.AppendResult{}, fail("append", id, index, err)
	}
	if len(data) == 0 || data[len(data)-1] != '\n' {
		return trace.AppendResult{}, fail("append", id, index, errf.Errorf("%w: records must be whole lines ending in \\n", trace.ErrInvalid))
	}
	if !utf8.Valid(data) {
		return trace.AppendResult{}, fail("append", id, index, notText)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.make(); err != nil {
		return trace.AppendResult{}, fail("append", id, index, err)
	}
	// The file's last character: no row when there is no file, "\n" after
	// whole records. Another is a torn tail, which only Create stores (an
	// append's rows are written together or not at all): a "\n" ends it.
	rows, err := s.exec("SELECT substr(data, -1) FROM floe_trace WHERE session = ? AND idx = ? ORDER BY seq DESC LIMIT 1", id, index)
	if err != nil {
		return trace.AppendResult{}, fail("append", id, index, err)
	}
	var res trace.AppendResult
	if len(rows) == 0 {
		res.Created = true
	} else if last := rows[0].Index(0).String(); last != "" && last != "\n" {
		res.Healed = true
		data = append([]byte{'\n'}, data...)
	}
	if err := s.insert(id, index, data); err != nil {
		return trace.AppendResult{}, fail("append", id, index, err)
	}
	return res, nil
}

// insert writes data to file index of the session as rows of at most
// RowBytes, at least one: an empty file (Create's) is an empty row. A row
// refused takes those written before it away again, so that no part of a
// record stays.
func (s *Store) insert(id string, index int, data []byte) error {
	at := s.now().UnixMilli()
	first := -1.0
	for {
		n := min(len(data), RowBytes)
		for n < len(data) && !utf8.RuneStart(data[n]) { // UTF-8: within 3 bytes
			n--
		}
		rows, err := s.exec("INSERT INTO floe_trace (session, idx, data, at) VALUES (?, ?, ?, ?) RETURNING seq", id, index, string(data[:n]), at)
		if err != nil {
			if first >= 0 {
				s.exec("DELETE FROM floe_trace WHERE seq >= ? AND session = ? AND idx = ?", first, id, index)
			}
			return err
		}
		if first < 0 && len(rows) > 0 {
			first = rows[0].Index(0).Float()
		}
		if data = data[n:]; len(data) == 0 {
			return nil
		}
	}
}

// Files implements trace.Store.
func (s *Store) Files(ctx context.Context, id string) ([]trace.FileInfo, error) {
	if err := checkID(ctx, id); err != nil {
		return nil, fail("files", id, 0, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.made {
		return nil, fail("files", id, 0, trace.ErrNotFound)
	}
	rows, err := s.exec("SELECT idx, sum(length(CAST(data AS BLOB))), max(at) FROM floe_trace WHERE session = ? GROUP BY idx ORDER BY idx", id)
	if err != nil {
		return nil, fail("files", id, 0, err)
	}
	if len(rows) == 0 {
		return nil, fail("files", id, 0, trace.ErrNotFound)
	}
	out := make([]trace.FileInfo, 0, len(rows))
	for _, r := range rows {
		out = append(out, trace.FileInfo{Index: r.Index(0).Int(), Size: int64(r.Index(1).Float()), Modified: time.UnixMilli(int64(r.Index(2).Float()))})
	}
	return out, nil
}

// ReadFile implements trace.Store.
func (s *Store) ReadFile(ctx context.Context, id string, index int) ([]byte, error) {
	var out []byte
	if err := s.ReadParts(ctx, id, index, func(part []byte) error {
		out = append(out, part...)
		return nil
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// ReadParts implements trace.PartReader: a row at a time (at most
// RowBytes); the rows not yet handed over stay in JavaScript.
func (s *Store) ReadParts(ctx context.Context, id string, index int, part func([]byte) error) error {
	if err := checkFile(ctx, id, index); err != nil {
		return fail("read", id, index, err)
	}
	rows, err := s.rows(id, index)
	if err != nil {
		return fail("read", id, index, err)
	}
	if len(rows) == 0 {
		return fail("read", id, index, trace.ErrNotFound)
	}
	for _, r := range rows {
		if err := ctx.Err(); err != nil {
			return fail("read", id, index, err)
		}
		if err := part([]byte(r.Index(0).String())); err != nil {
			return err
		}
	}
	return nil
}

// rows returns the rows of file index of the session, under s.mu: the
// parts are handed over without it, so that part may use the Store.
func (s *Store) rows(id string, index int) ([]js.Value, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.made {
		return nil, trace.ErrNotFound
	}
	return s.exec("SELECT data FROM floe_trace WHERE session = ? AND idx = ? ORDER BY seq", id, index)
}

// Sessions implements trace.Store.
func (s *Store) Sessions(ctx context.Context) ([]trace.SessionInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, fail("sessions", "", 0, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.made {
		return []trace.SessionInfo{}, nil
	}
	rows, err := s.exec("SELECT session, count(DISTINCT idx), sum(length(CAST(data AS BLOB))), max(at) FROM floe_trace GROUP BY session ORDER BY session")
	if err != nil {
		return nil, fail("sessions", "", 0, err)
	}
	out := make([]trace.SessionInfo, 0, len(rows))
	for _, r := range rows {
		out = append(out, trace.SessionInfo{ID: r.Index(0).String(), Files: r.Index(1).Int(), Size: int64(r.Index(2).Float()), LastActivity: time.UnixMilli(int64(r.Index(3).Float()))})
	}
	return out, nil
}

// Create implements trace.Store.
func (s *Store) Create(ctx context.Context, id string, files [][]byte) error {
	if err := checkID(ctx, id); err != nil {
		return fail("create", id, 0, err)
	}
	if len(files) == 0 {
		return fail("create", id, 0, errf.Errorf("%w: no files", trace.ErrInvalid))
	}
	for i, f := range files {
		if !utf8.Valid(f) {
			return fail("create", id, i+1, notText)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.make(); err != nil {
		return fail("create", id, 0, err)
	}
	rows, err := s.exec("SELECT count(*) FROM floe_trace WHERE session = ?", id)
	if err != nil {
		return fail("create", id, 0, err)
	}
	if len(rows) > 0 && rows[0].Index(0).Int() > 0 {
		return fail("create", id, 0, trace.ErrExists)
	}
	for i, f := range files {
		if err := s.insert(id, i+1, f); err != nil {
			// Nothing stored, as the contract wants: the files before go too.
			s.exec("DELETE FROM floe_trace WHERE session = ?", id)
			return fail("create", id, i+1, err)
		}
	}
	return nil
}

// Delete implements trace.Store.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := checkID(ctx, id); err != nil {
		return fail("delete", id, 0, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.made {
		return fail("delete", id, 0, trace.ErrNotFound)
	}
	rows, err := s.exec("SELECT count(*) FROM floe_trace WHERE session = ?", id)
	if err != nil {
		return fail("delete", id, 0, err)
	}
	if len(rows) == 0 || rows[0].Index(0).Int() == 0 {
		return fail("delete", id, 0, trace.ErrNotFound)
	}
	_, err = s.exec("DELETE FROM floe_trace WHERE session = ?", id)
	if err != nil {
		return fail("delete", id, 0, err)
	}
	// The last session gone, the table goes too: the object keeps no
	// storage.
	if rows, err := s.exec("SELECT count(*) FROM floe_trace"); err == nil && len(rows) > 0 && rows[0].Index(0).Int() == 0 {
		if _, err := s.exec("DROP TABLE floe_trace"); err == nil {
			s.made = false
		}
	}
	return nil
}
