//go:build !js

package trace_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/floehq/floe/engine/trace"
)

// A lock file that cannot be made or read is an error wrapping
// ErrLockFile and the system's error, naming the file, and not ErrBusy:
// one not made was no lock (a session run unlocked wherever its date
// directory could be written), and one not read was taken for another
// process's. Nothing is written, and the next Lock, the obstacle gone,
// holds the session. Each case works as root too (permission bits do
// not stop root: those cases skip).
func TestFileStoreLockFileFails(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, root, path string) (store string, undo func())
		what  string
		is    error
	}{
		{"root is a file", func(t *testing.T, root, path string) (string, func()) {
			file := filepath.Join(root, "a-file")
			write(t, file, "not a directory")
			return file, func() {}
		}, "made: not a directory", nil},
		{"a directory in its place", func(t *testing.T, root, path string) (string, func()) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
			return root, func() { os.Remove(path) }
		}, "read: is a directory", nil},
		{"read-only directory", func(t *testing.T, root, path string) (string, func()) {
			asUser(t)
			os.Chmod(root, 0o500)
			return root, func() { os.Chmod(root, 0o700) }
		}, "made: permission denied", fs.ErrPermission},
		{"unreadable lock file", func(t *testing.T, root, path string) (string, func()) {
			asUser(t)
			write(t, path, `{"pid":1,"host":"elsewhere","token":"t"}`+"\n")
			os.Chmod(path, 0)
			return root, func() { os.Remove(path) }
		}, "read: permission denied", fs.ErrPermission},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir, undo := tc.setup(t, root, filepath.Join(root, ".s.lock"))
			path := filepath.Join(dir, ".s.lock")
			s := trace.NewFileStore(dir, trace.FileStoreOptions{})
			release, err := s.Lock("s")
			if err == nil {
				release()
				undo()
				t.Fatal("Lock held the session: want an error")
			}
			undo()
			want := `trace: lock "s": its lock file ` + path + ` cannot be ` + tc.what
			if err.Error() != want || !errors.Is(err, trace.ErrLockFile) || errors.Is(err, trace.ErrBusy) {
				t.Fatalf("Lock: %v\nwant %s, wrapping ErrLockFile and not ErrBusy", err, want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Fatalf("Lock: %v, want it to wrap %v", err, tc.is)
			}
			var te *trace.Error
			if !errors.As(err, &te) || te.Op != "lock" || te.SessionID != "s" {
				t.Fatalf("Lock: %#v, want a *trace.Error of lock on s", err)
			}
			if dir != root {
				return
			}
			release, err = s.Lock("s")
			if err != nil {
				t.Fatalf("the next Lock, the obstacle gone: %v", err)
			}
			release()
			if entries, _ := os.ReadDir(root); len(entries) != 0 {
				t.Fatalf("left in the store: %v", entries)
			}
		})
	}
}

// asUser skips a test that permission bits decide: root passes them.
func asUser(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("permission bits do not stop root")
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
