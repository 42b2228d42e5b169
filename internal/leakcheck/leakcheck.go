// Package leakcheck helps tests check that what a run used is let go:
// it waits, a bounded time, for a condition (goroutines ended, files
// closed) and, when it does not come, fails naming it with every
// goroutine's stack. Tests only.
package leakcheck

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// Until waits up to within until cond holds, polling it; a test that
// waits for goroutines to end or files to close, which nothing signals.
// It orders nothing: cond is checked, not scheduled.
func Until(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("waited %s for %s; goroutines:\n%s", within, what, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(time.Millisecond) // polls cond; orders nothing
	}
}

// OpenFiles counts this process's open file descriptors; the test is
// skipped where /proc/self/fd does not list them (not Linux).
func OpenFiles(t testing.TB) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	return len(fds)
}
