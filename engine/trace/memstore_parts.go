//go:build !js || floenode

package trace

import "context"

var _ PartReader = (*MemStore)(nil)

// ReadParts implements [PartReader]: the file as it is at the call is
// copied partBytes at a time (what an append adds lies past it). Not in
// floe.wasm, whose size is budgeted: a resume there reads a MemStore's
// file whole.
func (s *MemStore) ReadParts(ctx context.Context, id string, index int, part func([]byte) error) error {
	if err := checkFile(ctx, id, index); err != nil {
		return opErr("read", id, index, err)
	}
	s.mu.RLock()
	var f *memFile
	if sess := s.sessions[id]; sess != nil {
		f = sess.files[index]
	}
	var data []byte
	if f != nil {
		data = f.data
	}
	s.mu.RUnlock()
	if f == nil {
		return opErr("read", id, index, ErrNotFound)
	}
	buf := make([]byte, min(len(data), partBytes))
	for len(data) > 0 {
		if err := ctx.Err(); err != nil {
			return opErr("read", id, index, err)
		}
		n := copy(buf, data)
		if err := part(buf[:n]); err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}
