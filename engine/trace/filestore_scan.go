//go:build !js || floenode

package trace

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/floehq/floe/internal/errf"
)

// The reading side of FileStore: finding a session's files on disk.

// Files implements [Store].
func (s *FileStore) Files(ctx context.Context, id string) ([]FileInfo, error) {
	if err := checkSession(ctx, id); err != nil {
		return nil, opErr("files", id, 0, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	files, err := s.scan(id)
	if err != nil {
		return nil, opErr("files", id, 0, err)
	}
	if len(files[id]) == 0 {
		return nil, opErr("files", id, 0, s.notFound())
	}
	out := make([]FileInfo, len(files[id]))
	for i, f := range files[id] {
		out[i] = FileInfo{Index: f.index, Size: f.size, Modified: f.modified}
	}
	return out, nil
}

// ReadFile implements [Store].
func (s *FileStore) ReadFile(ctx context.Context, id string, index int) ([]byte, error) {
	if err := checkFile(ctx, id, index); err != nil {
		return nil, opErr("read", id, index, err)
	}
	s.mu.Lock()
	path, err := s.path(id, index)
	s.mu.Unlock()
	if err != nil {
		return nil, opErr("read", id, index, err)
	}
	data, err := readCapped(path)
	if err != nil {
		return nil, opErr("read", id, index, err)
	}
	return data, nil
}

var _ PartReader = (*FileStore)(nil)

// ReadParts implements [PartReader]: the file is read partBytes at a time.
func (s *FileStore) ReadParts(ctx context.Context, id string, index int, part func([]byte) error) error {
	if err := checkFile(ctx, id, index); err != nil {
		return opErr("read", id, index, err)
	}
	s.mu.Lock()
	path, err := s.path(id, index)
	s.mu.Unlock()
	if err != nil {
		return opErr("read", id, index, err)
	}
	f, err := os.Open(path)
	if err == nil {
		defer f.Close()
		var fi fs.FileInfo
		if fi, err = f.Stat(); err == nil && fi.Size() > MaxFileBytes {
			err = errf.Errorf("%w: %d bytes", ErrTooLarge, fi.Size())
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		err = ErrNotFound
	}
	var buf []byte
	for err == nil {
		if buf == nil {
			buf = make([]byte, partBytes)
		}
		var n int
		n, err = f.Read(buf)
		if n > 0 {
			if perr := part(buf[:n]); perr != nil {
				return perr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err == nil {
			err = ctx.Err()
		}
	}
	return opErr("read", id, index, err)
}

// notFound is ErrNotFound saying where the session was looked for, as
// the Node build's { dir } store says it: a program started in another
// working directory than its sessions' found nothing, and "not found"
// alone said neither. Under js (that build) JavaScript adds it itself.
func (s *FileStore) notFound() error {
	if runtime.GOOS == "js" {
		return ErrNotFound
	}
	where := ""
	if !filepath.IsAbs(s.root) {
		if wd, err := os.Getwd(); err == nil {
			where = " (relative to the working directory " + wd + ")"
		}
	}
	return errf.Errorf("%w in the directory %s%s", ErrNotFound, errf.Quote(s.root), where)
}

// path finds an existing file. s.mu is held.
func (s *FileStore) path(id string, index int) (string, error) {
	if name, ok := s.dirs[id]; ok {
		p := filepath.Join(s.root, name, FileName(id, index))
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	files, err := s.scan(id)
	if err != nil {
		return "", err
	}
	for _, f := range files[id] {
		if f.index == index {
			return filepath.Join(s.root, f.dir, f.name), nil
		}
	}
	return "", ErrNotFound
}

func readCapped(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if fi.Size() > MaxFileBytes {
		return nil, errf.Errorf("%w: %d bytes", ErrTooLarge, fi.Size())
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	return data, err
}

// Sessions implements [Store].
func (s *FileStore) Sessions(ctx context.Context) ([]SessionInfo, error) {
	files, err := s.scanAll(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]SessionInfo, 0, len(files))
	for id, found := range files {
		out = append(out, sessionInfo(id, found))
	}
	heapSort(len(out), func(i, j int) bool { return out[i].ID < out[j].ID }, func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out, nil
}

// Summaries implements [Summarizer]: one scan of the directory, then each
// session's lowest-index file read for its first prompt. [List] without it
// scanned the whole directory again for each session (twice), which took
// seconds for a few hundred sessions in Node, where each entry's stat is a
// call into JavaScript.
func (s *FileStore) Summaries(ctx context.Context) ([]Summary, error) {
	files, err := s.scanAll(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Summary, 0, len(files))
	for id, found := range files {
		if err := ctx.Err(); err != nil {
			return nil, opErr("sessions", "", 0, err)
		}
		first := found[0]
		f, err := os.Open(filepath.Join(s.root, first.dir, first.name))
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted meanwhile
		}
		var prompt, source string
		if err == nil {
			prompt, source, err = firstPrompt(f)
			f.Close()
		}
		if err != nil {
			return nil, opErr("read", id, first.index, err)
		}
		out = append(out, Summary{SessionInfo: sessionInfo(id, found), FirstPrompt: prompt, Source: source})
	}
	return out, nil
}

// promptChunk is how much of a session's first file Summaries reads for
// its first prompt at first.
const promptChunk = 64 << 10

// firstPrompt returns FirstPrompt and MetaSource of the Trace file r, reading its whole
// lines promptChunk bytes at first, twice as many each time they hold no
// user text, and no more than MaxFileBytes. The first prompt is near the
// start of a file: reading whole files, listing ten sessions of 14 MB read
// 145 MB, for a page of titles.
func firstPrompt(r io.Reader) (prompt, source string, err error) {
	var data []byte
	for n := promptChunk; ; n = min(2*n, MaxFileBytes) {
		have := len(data)
		data = append(data, make([]byte, n-have)...)
		k, err := io.ReadFull(r, data[have:])
		data = data[:have+k]
		end := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !end {
			return "", "", err
		}
		lines := data
		if !end {
			lines = data[:bytes.LastIndexByte(data, '\n')+1]
		}
		if p, ok := FirstPrompt(lines); ok || end || n == MaxFileBytes {
			return p, MetaSource(lines), nil
		}
	}
}

func (s *FileStore) scanAll(ctx context.Context) (map[string][]located, error) {
	if err := ctx.Err(); err != nil {
		return nil, opErr("sessions", "", 0, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	files, err := s.scan("")
	if err != nil {
		return nil, opErr("sessions", "", 0, err)
	}
	return files, nil
}

func sessionInfo(id string, found []located) SessionInfo {
	info := SessionInfo{ID: id, Files: len(found)}
	for _, f := range found {
		info.Size += f.size
		if f.modified.After(info.LastActivity) {
			info.LastActivity = f.modified
		}
	}
	return info
}

// located is one trace file found on disk.
type located struct {
	dir, name string
	index     int
	size      int64
	modified  time.Time
}

// scan lists the trace files of session id ("" = every session), grouped by
// session id, each group in ascending index order. When an index appears in
// two date directories, the earlier date wins. s.mu is held.
func (s *FileStore) scan(id string) (map[string][]located, error) {
	return s.scanFiles(id, false)
}

// scanFiles is scan; with all, it keeps every file of an index (Delete
// removes them all).
func (s *FileStore) scanFiles(id string, all bool) (map[string][]located, error) {
	out := map[string][]located{}
	dates, err := os.ReadDir(s.root)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	for _, d := range dates { // ReadDir sorts by name: earlier dates first
		if !d.IsDir() || !isDateDir(d.Name()) {
			continue
		}
		// The names alone, then a stat of the files of id only: os.ReadDir
		// stats every entry where the OS does not give its type (in Node,
		// a call into JavaScript each), and a session's lookup (its first
		// write, a resume) would pay for every session of the directory.
		names, err := readNames(filepath.Join(s.root, d.Name()))
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			if f, sid, ok := s.locate(d.Name(), name, id); ok {
				out[sid] = append(out[sid], f)
			}
		}
	}
	for sid, found := range out {
		if all {
			continue
		}
		insertionSort(len(found), func(i, j int) bool { return found[i].index < found[j].index }, func(i, j int) { found[i], found[j] = found[j], found[i] })
		kept := found[:1] // the earlier date's file of an index wins
		for _, f := range found[1:] {
			if f.index != kept[len(kept)-1].index {
				kept = append(kept, f)
			}
		}
		out[sid] = kept
	}
	return out, nil
}

// locate stats the trace file dir/name of session id ("" = any session).
func (s *FileStore) locate(dir, name, id string) (located, string, bool) {
	sid, index, ok := ParseFileName(name)
	if !ok || index < 1 || (id != "" && sid != id) {
		return located{}, "", false
	}
	fi, err := os.Lstat(filepath.Join(s.root, dir, name))
	if err != nil || !fi.Mode().IsRegular() {
		return located{}, "", false
	}
	return located{dir: dir, name: name, index: index, size: fi.Size(), modified: fi.ModTime()}, sid, true
}

func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	names, err := f.Readdirnames(-1)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return names, err
}
