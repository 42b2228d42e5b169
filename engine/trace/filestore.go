//go:build !js || floenode

package trace

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/internal/errf"
)

// FileStore is a [Store] over a directory in the reference layout
// (PROTOCOL.md P-11):
//
//	<root>/<yyyy-mm-dd>/<session_id>_<NNN>.jsonl
//
// NNN is the file index, zero-padded to three digits and starting at 001.
// The date directory is the local date of the session's first file and does
// not change on rotation. FileStore dates a new session by the timestamp of
// its first record (the engine stamps every record with its Clock), so it
// never reads the wall clock itself; Options.Now is only the fallback for
// records without a readable timestamp.
//
// # Durability
//
// Each Append is one write(2) on a file opened with O_APPEND, under a mutex
// of the FileStore, so records of one process never interleave. By default
// FileStore does not fsync: a process crash loses nothing (the data is in
// the OS page cache); a machine crash may lose the last records or tear the
// last line — exactly the damage readers tolerate (P-12) and writers heal
// (P-13). With Options.Sync every Append fsyncs the file, and the directory
// when it created the file. Several FileStores (or processes) appending to
// the same session at once are not supported: a writer holds the session
// with [FileStore.Lock] (native builds), which refuses a second process.
//
// A file FileStore appended to or found that is gone (its directory
// removed while the session was open) is made again only by an append that
// starts it with a session_meta; any other fails wrapping ErrNotFound.
//
// Files are created with mode 0600 and directories with 0700: traces hold
// the whole conversation. FileStore is safe for concurrent use.
type FileStore struct {
	root string
	opts FileStoreOptions

	mu   sync.Mutex
	dirs map[string]string // session id → date directory name, once known
	// files is, by session, the highest file index this store appended
	// to or found: one of those gone (its directory removed while the
	// session was open) is not made again by an append that does not
	// start it with a session_meta.
	files map[string]int
	// held are, by session, the checks of the locks this store holds
	// (Lock), each asked before a write whether it still holds it; lost,
	// the sessions whose lock was taken from it, until Lock says so.
	held map[string]func() error
	lost map[string]error
}

// FileStoreOptions configure a [FileStore].
type FileStoreOptions struct {
	Sync     bool             // fsync after every append (see FileStore)
	Location *time.Location   // time zone of the date directory; nil = time.Local
	Now      func() time.Time // dates a session whose first record has no timestamp; nil = refuse
	// Held, if set, is asked before each write (Append, Create) of
	// session id whether this process still holds a lock on it that is
	// held outside the FileStore: the Node build's, whose lock file
	// JavaScript holds, or a lease of the caller's own. A non-nil error
	// refuses the write, wrapped in a *Error; one wrapping ErrLockLost
	// also makes a [Batcher] write the session no further. It is called
	// with the store's mutex held, so it must not call the store. The
	// locks of [FileStore.Lock] are asked without it.
	Held func(id string) error
}

// NewFileStore returns a FileStore rooted at root. The directory is created
// on the first write.
func NewFileStore(root string, opts FileStoreOptions) *FileStore {
	return &FileStore{root: root, opts: opts, dirs: map[string]string{}, files: map[string]int{}, held: map[string]func() error{}, lost: map[string]error{}}
}

var (
	_ Store      = (*FileStore)(nil)
	_ Summarizer = (*FileStore)(nil)
)

// Append implements [Store].
func (s *FileStore) Append(ctx context.Context, id string, index int, data []byte) (AppendResult, error) {
	if err := checkFile(ctx, id, index); err != nil {
		return AppendResult{}, opErr("append", id, index, err)
	}
	if err := validateRecords(data); err != nil {
		return AppendResult{}, opErr("append", id, index, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.stillHeld(id); err != nil {
		return AppendResult{}, opErr("append", id, index, err)
	}
	dir, err := s.dirFor(id, data)
	if err != nil {
		return AppendResult{}, opErr("append", id, index, err)
	}
	res, err := appendFile(filepath.Join(dir, FileName(id, index)), data, s.opts.Sync, index <= s.files[id])
	if errors.Is(err, errGone) {
		os.Remove(dir) // dirFor made it again; fails harmlessly unless empty
		return res, opErr("append", id, index, errf.Errorf("%w: the file was removed while the session was open (its directory deleted?): its records are not written", ErrNotFound))
	}
	if err != nil {
		return res, opErr("append", id, index, err)
	}
	s.files[id] = max(s.files[id], index)
	return res, nil
}

// stillHeld returns an error wrapping ErrLockLost once another process
// took the lock this process holds on session id: its writes would go in
// beside that process's. s.mu is held.
func (s *FileStore) stillHeld(id string) error {
	if check := s.held[id]; check != nil {
		if err := check(); err != nil {
			return err
		}
	}
	if s.opts.Held != nil {
		return s.opts.Held(id)
	}
	return nil
}

// errGone is appendFile's error for a file it knew that is gone.
var errGone = errors.New("gone")

// dirFor returns the date directory of the session, creating it if needed.
// s.mu is held.
func (s *FileStore) dirFor(id string, firstRecords []byte) (string, error) {
	name, ok := s.dirs[id]
	if !ok {
		files, err := s.scan(id)
		if err != nil {
			return "", err
		}
		if found := files[id]; len(found) > 0 {
			// The last file's directory: a session whose files were
			// moved apart (P-11 keeps them in one) goes on where its
			// last file is, as the reference's resume reopens it.
			name = found[len(found)-1].dir
			for _, f := range found {
				s.files[id] = max(s.files[id], f.index)
			}
		} else if name, err = s.dateDir(firstRecords); err != nil {
			return "", err
		}
	}
	dir := filepath.Join(s.root, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	s.dirs[id] = name
	return dir, nil
}

// dateDir names the date directory of a new session from the timestamp of
// its first record.
func (s *FileStore) dateDir(data []byte) (string, error) {
	t, ok := firstTimestamp(data)
	if !ok {
		if s.opts.Now == nil {
			return "", errf.Errorf("%w: first record has no timestamp to date the session by", ErrInvalid)
		}
		t = s.opts.Now()
	}
	loc := s.opts.Location
	if loc == nil {
		loc = time.Local
	}
	return omni.FormatDate(t.In(loc)), nil
}

// appendFile appends data to the file at path, creating it unless known
// (the store wrote or found it) and data does not start a file: a file
// whose first record is not a session_meta cannot be resumed.
func appendFile(path string, data []byte, sync, known bool) (AppendResult, error) {
	var res AppendResult
	var f *os.File
	err := fs.ErrNotExist
	if known {
		f, err = os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
		if errors.Is(err, fs.ErrNotExist) && !StartsFile(data) {
			return res, errGone
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			res.Created = true
		} else if errors.Is(err, fs.ErrExist) {
			f, err = os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
		}
	}
	if err != nil {
		return res, err
	}
	if !res.Created {
		if res.Healed, err = tornTail(f); err != nil {
			f.Close()
			return res, err
		}
	}
	buf := data
	if res.Healed {
		buf = append([]byte{'\n'}, data...)
	}
	if _, err := f.Write(buf); err != nil {
		f.Close()
		return res, err
	}
	if sync {
		if err := f.Sync(); err != nil {
			f.Close()
			return res, err
		}
		if res.Created {
			if err := syncDir(filepath.Dir(path)); err != nil {
				f.Close()
				return res, err
			}
		}
	}
	return res, f.Close()
}

// tornTail reports whether f is non-empty and its last byte is not "\n".
func tornTail(f *os.File) (bool, error) {
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return false, err
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], fi.Size()-1); err != nil {
		return false, err
	}
	return last[0] != '\n', nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Create implements [Store]. The files are written under temporary names
// and renamed into place, so a failed import leaves nothing behind.
func (s *FileStore) Create(ctx context.Context, id string, files [][]byte) error {
	if err := checkSession(ctx, id); err != nil {
		return opErr("create", id, 0, err)
	}
	if len(files) == 0 {
		return opErr("create", id, 0, errf.Errorf("%w: no files", ErrInvalid))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.stillHeld(id); err != nil {
		return opErr("create", id, 0, err)
	}
	existing, err := s.scan(id)
	if err != nil {
		return opErr("create", id, 0, err)
	}
	if len(existing[id]) > 0 {
		return opErr("create", id, 0, ErrExists)
	}
	name, err := s.dateDir(files[0])
	if err != nil {
		return opErr("create", id, 1, err)
	}
	dir := filepath.Join(s.root, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return opErr("create", id, 0, err)
	}
	if index, err := s.writeAll(dir, id, files); err != nil {
		return opErr("create", id, index, err)
	}
	s.dirs[id] = name
	s.files[id] = len(files)
	return nil
}

// writeAll writes every file under a temporary name, then renames them all;
// on failure it removes what it wrote and reports the failing index.
func (s *FileStore) writeAll(dir, id string, files [][]byte) (int, error) {
	var done []string
	fail := func(index int, err error) (int, error) {
		for _, p := range done {
			os.Remove(p)
		}
		return index, err
	}
	tmp := func(i int) string { return filepath.Join(dir, FileName(id, i+1)+".import") }
	for i, data := range files {
		done = append(done, tmp(i))
		os.Remove(tmp(i)) // an import killed midway left it
		if err := writeNew(tmp(i), data, s.opts.Sync); err != nil {
			return fail(i+1, err)
		}
	}
	for i := range files {
		final := filepath.Join(dir, FileName(id, i+1))
		if err := os.Rename(tmp(i), final); err != nil {
			return fail(i+1, err)
		}
		done[i] = final
	}
	if s.opts.Sync {
		if err := syncDir(dir); err != nil {
			return fail(0, err)
		}
	}
	return 0, nil
}

// writeNew makes the file at path holding data; a file it made but could
// not fill (a full disk) is removed: a lock file left empty would name no
// holder, and refuse every later Lock.
func writeNew(path string, data []byte, sync bool) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

// Forget drops what s keeps of session id (its date directory and the
// highest file index known) once this process writes it no more: a
// long-lived process kept both for every session it ever wrote. A later
// write of id looks for its files again, and no longer tells a file of
// id removed meanwhile from a new one: call it once nothing writes id.
func (s *FileStore) Forget(id string) {
	s.mu.Lock()
	delete(s.dirs, id)
	delete(s.files, id)
	s.mu.Unlock()
}

// Delete implements [Store]. A date directory left empty is removed too.
func (s *FileStore) Delete(ctx context.Context, id string) error {
	if err := checkSession(ctx, id); err != nil {
		return opErr("delete", id, 0, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	files, err := s.scanFiles(id, true) // a file of an index in two date directories goes too
	if err != nil {
		return opErr("delete", id, 0, err)
	}
	if len(files[id]) == 0 {
		return opErr("delete", id, 0, s.notFound())
	}
	delete(s.dirs, id)
	delete(s.files, id)
	dirs := map[string]bool{}
	for _, f := range files[id] {
		if err := os.Remove(filepath.Join(s.root, f.dir, f.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return opErr("delete", id, f.index, err)
		}
		dirs[f.dir] = true
	}
	for d := range dirs {
		os.Remove(filepath.Join(s.root, d)) // fails harmlessly unless empty
	}
	return nil
}
