//go:build !js

package trace_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/floehq/floe/engine/trace"
)

// A session not in a FileStore is not found "in the directory" of the
// store, as the Node build says it, with the working directory a relative
// one was read from: a program started elsewhere than its sessions found
// nothing, and the error said neither.
func TestFileStoreNotFoundNamesTheDirectory(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	ctx := context.Background()
	for _, tc := range []struct{ root, want string }{
		{dir, `: not found in the directory "` + dir + `"`},
		{"sessions", `: not found in the directory "sessions" (relative to the working directory ` + dir + `)`},
	} {
		store := trace.NewFileStore(tc.root, trace.FileStoreOptions{})
		_, rerr := trace.Resume(ctx, store, "elsewhere", time.Now)
		derr := store.Delete(ctx, "elsewhere")
		for _, err := range []error{rerr, derr} {
			if !errors.Is(err, trace.ErrNotFound) || !strings.HasSuffix(err.Error(), tc.want) || !strings.Contains(err.Error(), `"elsewhere"`) {
				t.Errorf("root %q: %v; want an error wrapping ErrNotFound naming the session and ending %q", tc.root, err, tc.want)
			}
		}
	}
	if _, err := os.Stat("sessions"); err == nil {
		t.Error("looking made the directory")
	}
}
