//go:build unix && !js

package trace_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/floehq/floe/engine/trace"
)

// TestLockHelperProcess is the other process of the tests below: it holds
// the session's lock, says "locked", and releases it when its stdin closes.
func TestLockHelperProcess(t *testing.T) {
	dir := os.Getenv("FLOE_TRACE_LOCK_DIR")
	if dir == "" {
		t.Skip("run by the lock tests")
	}
	release, err := trace.NewFileStore(dir, trace.FileStoreOptions{}).Lock("s1")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	io.Copy(io.Discard, os.Stdin)
	release()
}

// holder starts the helper process on dir and returns once it holds the
// lock; closing stdin makes it release the lock and exit.
func holder(t *testing.T, dir string) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHelperProcess$")
	cmd.Env = append(os.Environ(), "FLOE_TRACE_LOCK_DIR="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "locked\n" {
		t.Fatalf("helper said %q, want locked", line)
	}
	go io.Copy(io.Discard, stdout)
	return cmd, stdin
}

func wantBusy(t *testing.T, dir string, pid int) {
	s := trace.NewFileStore(dir, trace.FileStoreOptions{})
	t.Helper()
	release, err := s.Lock("s1")
	if err == nil {
		release()
		t.Fatal("Lock: got the lock another process holds")
	}
	host, _ := os.Hostname()
	if !errors.Is(err, trace.ErrBusy) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(pid)+" on "+host) || !strings.Contains(err.Error(), filepath.Join(dir, ".s1.lock")) {
		t.Fatalf("Lock: %v, want ErrBusy naming pid %d on %s and the lock file", err, pid, host)
	}
}

// Two processes on one directory: the second is refused, naming the
// first, until the first releases the session.
func TestFileStoreLockAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	s := trace.NewFileStore(dir, trace.FileStoreOptions{})
	cmd, stdin := holder(t, dir)
	wantBusy(t, dir, cmd.Process.Pid)
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal("helper:", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".s1.lock")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the helper's release left its lock file: %v", err)
	}
	release, err := s.Lock("s1")
	if err != nil {
		t.Fatal(err)
	}
	// One process: a second Lock is refused too, until the first is
	// released, and the error says the holder is this process (it said
	// another process, to be deleted if gone).
	wantBusy(t, dir, os.Getpid())
	if _, err := s.Lock("s1"); err == nil || strings.Contains(err.Error(), "another process") || !strings.Contains(err.Error(), "this process") {
		t.Fatalf("second Lock of one process: %v, want ErrBusy naming this process", err)
	}
	release()
	release, err = s.Lock("s1")
	if err != nil {
		t.Fatal(err)
	}
	release()
}

// A killed holder leaves its file; the next Lock takes it over.
func TestFileStoreLockKilledHolder(t *testing.T) {
	dir := t.TempDir()
	cmd, _ := holder(t, dir)
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := os.Stat(filepath.Join(dir, ".s1.lock")); err != nil {
		t.Fatal("the killed helper left no lock file:", err)
	}
	release, err := trace.NewFileStore(dir, trace.FileStoreOptions{}).Lock("s1")
	if err != nil {
		t.Fatal("a killed holder's lock:", err)
	}
	release()
}

// The Node build's lock file: the same name and format. One written by a
// running process refuses the lock; one of a pid that no longer runs is
// taken over; one of another host is never judged.
func TestFileStoreLockNodeFormat(t *testing.T) {
	host, _ := os.Hostname()
	done := exec.Command(os.Args[0], "-test.run=^$")
	if err := done.Run(); err != nil {
		t.Fatal(err)
	}
	gone := done.Process.Pid
	nodeFile := func(pid int, host string) string {
		// JSON.stringify({ pid, host, token }) + "\n"
		return `{"pid":` + strconv.Itoa(pid) + `,"host":` + strconv.Quote(host) + `,"token":"k2j4x0lq8mbz1"}` + "\n"
	}
	for _, tc := range []struct {
		name string
		file string
		busy string // "" = taken over
	}{
		{"running", nodeFile(os.Getppid(), host), "pid " + strconv.Itoa(os.Getppid()) + " on " + host},
		{"gone", nodeFile(gone, host), ""},
		{"other host", nodeFile(gone, host+"-elsewhere"), "pid " + strconv.Itoa(gone) + " on " + host + "-elsewhere"},
		{"unreadable", "{", "a process"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, ".s1.lock")
			if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			release, err := trace.NewFileStore(dir, trace.FileStoreOptions{}).Lock("s1")
			if tc.busy != "" {
				if err == nil || !errors.Is(err, trace.ErrBusy) || !strings.Contains(err.Error(), "("+tc.busy+")") {
					t.Fatalf("Lock: %v, want ErrBusy naming %s", err, tc.busy)
				}
				if data, _ := os.ReadFile(path); string(data) != tc.file {
					t.Fatalf("the holder's file changed to %q", data)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(path)
			want := regexp.MustCompile(`^\{"pid":` + strconv.Itoa(os.Getpid()) + `,"host":` + regexp.QuoteMeta(strconv.Quote(host)) + `,"token":"[0-9a-f]+","beat":30\}\n$`)
			if !want.Match(data) {
				t.Fatalf("lock file %q, want the Node build's format naming this process", data)
			}
			release()
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("release left the lock file: %v", err)
			}
		})
	}
}

// Lock refuses an id that cannot name a session (no path outside root).
func TestFileStoreLockBadID(t *testing.T) {
	for _, id := range []string{"", "../x", ".hidden"} {
		if _, err := trace.NewFileStore(t.TempDir(), trace.FileStoreOptions{}).Lock(id); !errors.Is(err, trace.ErrInvalid) {
			t.Errorf("Lock(%q): %v, want ErrInvalid", id, err)
		}
	}
}

// A release called twice (a defer and an explicit call) is a no-op the
// second time: every Lock of one process writes the same bytes, so it
// removed the lock file a later Lock of the session held.
func TestFileStoreLockReleaseTwice(t *testing.T) {
	dir := t.TempDir()
	s := trace.NewFileStore(dir, trace.FileStoreOptions{})
	release1, err := s.Lock("s1")
	if err != nil {
		t.Fatal(err)
	}
	release1()
	release2, err := s.Lock("s1")
	if err != nil {
		t.Fatal(err)
	}
	defer release2()
	release1()
	if _, err := os.Stat(filepath.Join(dir, ".s1.lock")); err != nil {
		t.Fatalf("a second call of an earlier release removed the lock a later Lock holds: %v", err)
	}
	if release3, err := s.Lock("s1"); err == nil {
		release3()
		t.Fatal("Lock: got the lock a Lock of this process holds")
	}
}
