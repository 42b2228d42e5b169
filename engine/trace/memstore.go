package trace

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/floehq/floe/internal/errf"
)

// MemStore is an in-memory [Store]. The zero value is ready to use; it is
// safe for concurrent use. Set Now before first use to get modification
// times in Files and Sessions (they are zero otherwise).
type MemStore struct {
	// Now, if set, stamps appends and creations for FileInfo.Modified and
	// SessionInfo.LastActivity.
	Now func() time.Time

	mu       sync.RWMutex
	sessions map[string]*memSession
}

type memSession struct {
	files map[int]*memFile
}

type memFile struct {
	data     []byte
	modified time.Time
}

var _ Store = (*MemStore)(nil)

func (s *MemStore) now() time.Time {
	if s.Now == nil {
		return time.Time{}
	}
	return s.Now()
}

// Append implements [Store].
func (s *MemStore) Append(ctx context.Context, id string, index int, data []byte) (AppendResult, error) {
	if err := checkFile(ctx, id, index); err != nil {
		return AppendResult{}, opErr("append", id, index, err)
	}
	if err := validateRecords(data); err != nil {
		return AppendResult{}, opErr("append", id, index, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessions == nil {
		s.sessions = map[string]*memSession{}
	}
	sess := s.sessions[id]
	if sess == nil {
		sess = &memSession{files: map[int]*memFile{}}
		s.sessions[id] = sess
	}
	var res AppendResult
	f := sess.files[index]
	if f == nil {
		f = &memFile{}
		sess.files[index] = f
		res.Created = true
	}
	if n := len(f.data); n > 0 && f.data[n-1] != '\n' {
		f.data = append(f.data, '\n')
		res.Healed = true
	}
	f.data = append(f.data, data...)
	f.modified = s.now()
	return res, nil
}

// Files implements [Store].
func (s *MemStore) Files(ctx context.Context, id string) ([]FileInfo, error) {
	if err := checkSession(ctx, id); err != nil {
		return nil, opErr("files", id, 0, err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	sess := s.sessions[id]
	if sess == nil {
		return nil, opErr("files", id, 0, ErrNotFound)
	}
	infos := make([]FileInfo, 0, len(sess.files))
	for i, f := range sess.files {
		infos = append(infos, FileInfo{Index: i, Size: int64(len(f.data)), Modified: f.modified})
	}
	insertionSort(len(infos), func(i, j int) bool { return infos[i].Index < infos[j].Index }, func(i, j int) { infos[i], infos[j] = infos[j], infos[i] })
	return infos, nil
}

// ReadFile implements [Store]. It returns a copy.
func (s *MemStore) ReadFile(ctx context.Context, id string, index int) ([]byte, error) {
	if err := checkFile(ctx, id, index); err != nil {
		return nil, opErr("read", id, index, err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	sess := s.sessions[id]
	if sess == nil || sess.files[index] == nil {
		return nil, opErr("read", id, index, ErrNotFound)
	}
	return slices.Clone(sess.files[index].data), nil
}

// Sessions implements [Store].
func (s *MemStore) Sessions(ctx context.Context) ([]SessionInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, opErr("sessions", "", 0, err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]SessionInfo, 0, len(s.sessions))
	for id, sess := range s.sessions {
		info := SessionInfo{ID: id, Files: len(sess.files)}
		for _, f := range sess.files {
			info.Size += int64(len(f.data))
			if f.modified.After(info.LastActivity) {
				info.LastActivity = f.modified
			}
		}
		out = append(out, info)
	}
	heapSort(len(out), func(i, j int) bool { return out[i].ID < out[j].ID }, func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out, nil
}

// Create implements [Store].
func (s *MemStore) Create(ctx context.Context, id string, files [][]byte) error {
	if err := checkSession(ctx, id); err != nil {
		return opErr("create", id, 0, err)
	}
	if len(files) == 0 {
		return opErr("create", id, 0, errf.Errorf("%w: no files", ErrInvalid))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessions[id] != nil {
		return opErr("create", id, 0, ErrExists)
	}
	if s.sessions == nil {
		s.sessions = map[string]*memSession{}
	}
	sess := &memSession{files: make(map[int]*memFile, len(files))}
	now := s.now()
	for i, data := range files {
		sess.files[i+1] = &memFile{data: slices.Clone(data), modified: now}
	}
	s.sessions[id] = sess
	return nil
}

// Delete implements [Store].
func (s *MemStore) Delete(ctx context.Context, id string) error {
	if err := checkSession(ctx, id); err != nil {
		return opErr("delete", id, 0, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessions[id] == nil {
		return opErr("delete", id, 0, ErrNotFound)
	}
	delete(s.sessions, id)
	return nil
}

func checkSession(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return ValidateID(id)
}

func checkFile(ctx context.Context, id string, index int) error {
	if err := checkSession(ctx, id); err != nil {
		return err
	}
	return validateIndex(index)
}
