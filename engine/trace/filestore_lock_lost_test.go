//go:build !js

package trace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// successor is the lock file another process makes when it judged this
// one gone: it moved this process's file aside and made its own.
const successor = `{"pid":4242,"host":"elsewhere","token":"k2j4x0lq8mbz1","beat":30}` + "\n"

func stamped(text string) []byte {
	return []byte(`{"timestamp":"2026-01-02T03:04:05.000Z","type":"event_msg","payload":{"type":"note","text":"` + text + `"}}` + "\n")
}

// fakeLockClock makes lockNow a clock the test moves.
func fakeLockClock(t *testing.T) (advance func(time.Duration)) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	lockNow = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	t.Cleanup(func() { lockNow = time.Now })
	return func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
}

func takeLock(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(successor), 0o600); err != nil {
		t.Fatal(err)
	}
}

func traceFile(t *testing.T, root, id string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(root, "*", id+"_001.jsonl"))
	if len(files) != 1 {
		t.Fatalf("trace files %v", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// A holder stopped (Ctrl-Z, a debugger) for longer than ten beats is
// taken for gone, and another process takes its lock. Resumed, it writes
// before its beat runs again: that write finds its beat late, reads its
// lock file, and is refused, as is every later write of the session; the
// next Lock says so once.
func TestFileStoreLockLostWhileStopped(t *testing.T) {
	advance := fakeLockClock(t)
	ctx := context.Background()
	root := t.TempDir()
	s := NewFileStore(root, FileStoreOptions{})
	var reports []error
	bat := NewBatcher(s, BatcherOptions{Report: func(err error) { reports = append(reports, err) }})
	release, err := s.Lock("s1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bat.Append(ctx, "s1", 1, stamped("mine, before")); err != nil {
		t.Fatal(err)
	}
	bat.Flush(ctx)
	path := filepath.Join(root, ".s1.lock")

	advance(time.Minute) // a beat late, no more: the file is read and still this process's
	if _, err := s.Append(ctx, "s1", 1, stamped("mine, a beat late")); err != nil {
		t.Fatal(err)
	}

	advance(6 * time.Minute) // stopped; meanwhile another process took the lock and wrote
	takeLock(t, path)
	other := NewFileStore(root, FileStoreOptions{})
	if _, err := other.Append(ctx, "s1", 1, stamped("theirs")); err != nil {
		t.Fatal(err)
	}
	bat.Append(ctx, "s1", 1, stamped("mine, after"))
	bat.Append(ctx, "s1", 1, stamped("mine, later"))
	bat.Flush(ctx)
	if len(reports) != 1 || !errors.Is(reports[0], ErrLockLost) || !strings.Contains(reports[0].Error(), `"s1"`) || !strings.Contains(reports[0].Error(), "pid 4242 on elsewhere holds its lock file "+path) {
		t.Fatalf("reports %v, want one naming the session, ErrLockLost and the other holder", reports)
	}
	release()
	if got, _ := os.ReadFile(path); string(got) != successor {
		t.Fatalf("release left the other process's lock file %q", got)
	}
	os.Remove(path) // the other process is done
	bat.Retry("s1")
	bat.Append(ctx, "s1", 1, stamped("mine, after it released"))
	bat.Flush(ctx)
	if len(reports) != 1 {
		t.Fatalf("reports %v, want one", reports)
	}
	want := string(stamped("mine, before")) + string(stamped("mine, a beat late")) + string(stamped("theirs"))
	if got := traceFile(t, root, "s1"); got != want {
		t.Fatalf("trace holds\n%s\nwant\n%s", got, want)
	}

	_, err = s.Lock("s1")
	if !errors.Is(err, ErrBusy) || !errors.Is(err, ErrLockLost) || !strings.Contains(err.Error(), "resume the session") {
		t.Fatalf("next Lock: %v, want ErrBusy and ErrLockLost", err)
	}
	release, err = s.Lock("s1") // said once: a resume goes on from the Trace
	if err != nil {
		t.Fatal(err)
	}
	release()
}

// The beat finds the lock taken too, without a write, and so does the
// release: the session's next Lock says so.
func TestFileStoreLockLostFoundByBeatOrRelease(t *testing.T) {
	fakeLockClock(t) // never late: only the beat and the release read the file
	beaten := make(chan struct{}, 1)
	lockBeat, lockBeaten = time.Millisecond, func() {
		select {
		case beaten <- struct{}{}:
		default:
		}
	}
	t.Cleanup(func() { lockBeat, lockBeaten = 30*time.Second, func() {} })
	ctx := context.Background()
	root := t.TempDir()
	s := NewFileStore(root, FileStoreOptions{})
	release, err := s.Lock("s1")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, ".s1.lock")
	takeLock(t, path)
	for beats := 0; ; beats++ {
		s.mu.Lock()
		err := s.stillHeld("s1")
		s.mu.Unlock()
		if err != nil {
			break
		}
		if beats == 1000 {
			t.Fatal("1000 beats did not find the lock taken")
		}
		<-beaten
	}
	if _, err := s.Append(ctx, "s1", 1, stamped("mine")); !errors.Is(err, ErrLockLost) {
		t.Fatalf("append after the beat found the lock taken: %v", err)
	}
	release()
	os.Remove(path)
	if _, err := s.Lock("s1"); !errors.Is(err, ErrLockLost) {
		t.Fatalf("next Lock: %v, want ErrLockLost", err)
	}

	lockBeat = 30 * time.Second // no beat: the release alone finds it
	release, err = s.Lock("s1")
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(path) // taken, and released by the other process since
	release()
	if _, err := s.Lock("s1"); !errors.Is(err, ErrLockLost) || !strings.Contains(err.Error(), "is gone") {
		t.Fatalf("next Lock: %v, want ErrLockLost saying the file is gone", err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("left %v: a refused append made the session's directory", entries)
	}
}
