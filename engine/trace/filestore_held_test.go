//go:build !js || floenode

package trace_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/floehq/floe/engine/trace"
)

// FileStoreOptions.Held, a lock held outside the store, refuses the writes
// of a session it says is lost, as its doc says: Append and Create fail
// with a *trace.Error naming the operation and wrapping its error
// (ErrLockLost there), the other sessions are written, and a Batcher
// writes that session no further.
func TestFileStoreHeld(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	lost := fmt.Errorf("%w: pid 4242 holds it", trace.ErrLockLost)
	held := func(id string) error {
		if id == "taken" {
			return lost
		}
		return nil
	}
	s := trace.NewFileStore(root, trace.FileStoreOptions{Held: held})
	meta := []byte(metaLine)
	_, err := s.Append(ctx, "taken", 1, meta)
	var te *trace.Error
	if !errors.Is(err, trace.ErrLockLost) || !errors.As(err, &te) || te.Op != "append" || te.SessionID != "taken" {
		t.Fatalf("Append of a lost session: %v, want a *trace.Error of append wrapping ErrLockLost", err)
	}
	if err := s.Create(ctx, "taken", [][]byte{meta}); !errors.Is(err, trace.ErrLockLost) || !errors.As(err, &te) || te.Op != "create" {
		t.Fatalf("Create of a lost session: %v, want a *trace.Error of create wrapping ErrLockLost", err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("refused writes left %v", entries)
	}
	if _, err := s.Append(ctx, "mine", 1, meta); err != nil {
		t.Fatalf("Append of a session still held: %v", err)
	}

	var mu sync.Mutex
	var reports []error
	b := trace.NewBatcher(s, trace.BatcherOptions{Report: func(err error) { mu.Lock(); reports = append(reports, err); mu.Unlock() }})
	b.Append(ctx, "taken", 1, meta)
	b.Flush(ctx)
	b.Append(ctx, "taken", 1, meta)
	b.Flush(ctx)
	mu.Lock()
	defer mu.Unlock()
	if len(reports) != 1 || !errors.Is(reports[0], trace.ErrLockLost) {
		t.Fatalf("the Batcher reported %v, want one error wrapping ErrLockLost", reports)
	}
}
