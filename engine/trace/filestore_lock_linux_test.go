//go:build linux

package trace_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/floehq/floe/engine/trace"
)

// A lock file whose write fails (a full disk; here the file size limit,
// whose signal Go ignores, so the write fails with EFBIG) is not left
// behind empty: it named no holder, so every later Lock of the session,
// by any process, was refused as busy until someone deleted it. The Lock
// fails, naming the file and the error (it was no lock, not an error).
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
	path := filepath.Join(root, ".full.lock")
	if err == nil {
		release()
		t.Fatal("a lock file that cannot be written was taken for a lock")
	}
	if !errors.Is(err, trace.ErrLockFile) || !errors.Is(err, syscall.EFBIG) || errors.Is(err, trace.ErrBusy) ||
		err.Error() != `trace: lock "full": its lock file `+path+` cannot be written: file too large` {
		t.Fatalf("Lock: %v, want ErrLockFile naming the file and EFBIG, not ErrBusy", err)
	}
	if _, err := os.Stat(filepath.Join(root, ".full.lock")); !os.IsNotExist(err) {
		t.Fatalf("the lock file is left behind: %v", err)
	}
	release, err = s.Lock("full")
	if err != nil {
		t.Fatalf("the next Lock: %v", err)
	}
	release()
}
