//go:build !js

package host

import (
	"context"
	"errors"
	"fmt"
	"github.com/floehq/floe/internal/leakcheck"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/floehq/floe/engine/trace"
)

// Many sessions of one registry over one FileStore, each used from
// several goroutines at once (runs, follow-ups, steering, aborts,
// compactions, approval modes, streams, history, the session list, the
// engines let go past KeepWarm and resumed), then deleted while they are
// read: the race detector watches it all; once every session is deleted
// and the hub closed, no goroutine and no file is left open, and the
// registry holds no host.
func TestManySessionsAtOnce(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts /proc/self/fd")
	}
	dir := t.TempDir()
	fds, goroutines := leakcheck.OpenFiles(t), runtime.NumGoroutine()
	func() {
		r, hub := serviceRegistry(t, trace.NewFileStore(dir, trace.FileStoreOptions{}), 2)
		ctx := context.Background()
		const sessions, rounds = 6, 6
		var ids []string
		for i := range sessions {
			h, err := r.Create(ctx, fmt.Sprintf("svc-%d", i), "")
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, h.ID())
		}
		var wg sync.WaitGroup
		for _, id := range ids {
			for g := range 3 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					use(t, r, id, g, rounds)
				}()
			}
		}
		wg.Wait()
		for _, id := range ids { // deleted while read
			wg.Add(2)
			go func() {
				defer wg.Done()
				for range 20 {
					if h, err := r.Get(ctx, id); err == nil {
						h.Messages(ctx)
					}
					r.List(ctx)
				}
			}()
			go func() {
				defer wg.Done()
				if err := r.Delete(ctx, id); err != nil {
					t.Errorf("Delete %s: %v", id, err)
				}
			}()
		}
		wg.Wait()
		r.mu.Lock()
		left := len(r.hosts) + len(r.opening)
		r.mu.Unlock()
		if left != 0 {
			t.Errorf("%d hosts or opens left after every session was deleted", left)
		}
		for _, id := range ids {
			if _, err := r.Get(ctx, id); !errors.Is(err, ErrNotFound) {
				t.Errorf("Get %s after its Delete: %v, want ErrNotFound", id, err)
			}
		}
		hub.Close()
	}()
	leakcheck.Until(t, 10*time.Second, "the goroutines of before", func() bool { return runtime.NumGoroutine() <= goroutines })
	leakcheck.Until(t, 10*time.Second, "the open files of before", func() bool { return leakcheck.OpenFiles(t) <= fds })
}
