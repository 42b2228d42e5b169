//go:build !js || floenode

package trace

// FileStoreKept returns how many sessions s keeps something of (a date
// directory, a file index).
func FileStoreKept(s *FileStore) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return max(len(s.dirs), len(s.files))
}
