package trace_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/engine/trace/tracetest"
)

// MemStore keeps nothing a new store could open: it runs no TestReopen.
func TestMemStore(t *testing.T) {
	tracetest.TestStore(t, func(t *testing.T) trace.Store { return &trace.MemStore{} })
}

func TestMemStoreModified(t *testing.T) {
	at := time.Date(2026, 11, 30, 4, 9, 45, 0, time.UTC)
	s := &trace.MemStore{Now: func() time.Time { return at }}
	ctx := context.Background()
	if _, err := s.Append(ctx, "s", 1, tracetest.Record(1)); err != nil {
		t.Fatal(err)
	}
	files, _ := s.Files(ctx, "s")
	sessions, _ := s.Sessions(ctx)
	if !files[0].Modified.Equal(at) || !sessions[0].LastActivity.Equal(at) {
		t.Errorf("Modified = %v, LastActivity = %v, want %v", files[0].Modified, sessions[0].LastActivity, at)
	}
}

// stamped returns a record line stamped with ts.
func stamped(ts string) []byte {
	return []byte(`{"timestamp":"` + ts + `","type":"event_msg","payload":{"type":"request_begin"}}` + "\n")
}

// listTree lists the regular files under root as slash paths.
func listTree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestFileName(t *testing.T) {
	for _, tc := range []struct {
		id    string
		index int
		want  string
	}{
		{"sess-01", 1, "sess-01_001.jsonl"},
		{"s", 42, "s_042.jsonl"},
		{"s", 1000, "s_1000.jsonl"},
	} {
		if got := trace.FileName(tc.id, tc.index); got != tc.want {
			t.Errorf("FileName(%q, %d) = %q, want %q", tc.id, tc.index, got, tc.want)
		}
	}
}
