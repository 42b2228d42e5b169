//go:build linux

package trace_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/floehq/floe/engine/trace"
)

// A lock file whose write fails (a full disk; here the file size limit,
// whose signal Go ignores, so the write fails with EFBIG) is not left
// behind empty: it named no holder, so every later Lock of the session,
// by any process, was refused as busy until someone deleted it.
func TestFileStoreLockWriteFails(t *testing.T) {
	root := t.TempDir()
	s := trace.NewFileStore(root, trace.FileStoreOptions{})
	var saved syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &saved); err != nil {
		t.Skip(err)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 0, Max: saved.Max}); err != nil {
		t.Skip(err)
	}
	release, err := s.Lock("full")
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &saved); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatalf("a lock that cannot be written is no lock, not an error: %v", err)
	}
	release()
	if _, err := os.Stat(filepath.Join(root, ".full.lock")); !os.IsNotExist(err) {
		t.Fatalf("the lock file is left behind: %v", err)
	}
	release, err = s.Lock("full")
	if err != nil {
		t.Fatalf("the next Lock: %v", err)
	}
	release()
}
