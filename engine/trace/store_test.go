package trace_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/engine/trace/tracetest"
)

func TestMemStore(t *testing.T) {
	tracetest.TestStore(t, func(t *testing.T) trace.Store { return &trace.MemStore{} })
}

func TestFileStore(t *testing.T) {
	for _, sync := range []bool{false, true} {
		name := map[bool]string{false: "NoSync", true: "Sync"}[sync]
		t.Run(name, func(t *testing.T) {
			tracetest.TestStore(t, func(t *testing.T) trace.Store {
				return trace.NewFileStore(t.TempDir(), trace.FileStoreOptions{Sync: sync, Location: time.UTC})
			})
		})
	}
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

func TestFileStoreLayout(t *testing.T) {
	plus10 := time.FixedZone("+10", 10*3600)
	fallback := time.Date(2027, 1, 2, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		loc     *time.Location
		now     func() time.Time
		first   []byte
		later   []byte // appended to file 2
		want    []string
		errIs   error
		errOnly bool
	}{
		{name: "utc", loc: time.UTC, first: stamped("2026-11-30T04:09:45.282Z"),
			want: []string{"2026-11-30/s_001.jsonl"}},
		{name: "local date, not UTC date", loc: plus10, first: stamped("2026-11-30T20:00:00.000Z"),
			want: []string{"2026-12-01/s_001.jsonl"}},
		{name: "rotation keeps the date", loc: time.UTC, first: stamped("2026-11-30T23:59:59.999Z"),
			later: stamped("2026-12-01T00:00:01.000Z"),
			want:  []string{"2026-11-30/s_001.jsonl", "2026-11-30/s_002.jsonl"}},
		{name: "no timestamp, Now fallback", loc: time.UTC, now: func() time.Time { return fallback },
			first: []byte(`{"type":"event_msg","payload":{"type":"request_begin"}}` + "\n"),
			want:  []string{"2027-01-02/s_001.jsonl"}},
		{name: "no timestamp, no Now", loc: time.UTC,
			first: []byte(`{"type":"event_msg","payload":{"type":"request_begin"}}` + "\n"),
			errIs: trace.ErrInvalid, errOnly: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			s := trace.NewFileStore(root, trace.FileStoreOptions{Location: tc.loc, Now: tc.now})
			ctx := context.Background()
			_, err := s.Append(ctx, "s", 1, tc.first)
			if tc.errOnly {
				if !errors.Is(err, tc.errIs) {
					t.Fatalf("Append = %v, want %v", err, tc.errIs)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.later != nil {
				if _, err := s.Append(ctx, "s", 2, tc.later); err != nil {
					t.Fatal(err)
				}
			}
			if got := listTree(t, root); !slices.Equal(got, tc.want) {
				t.Errorf("files = %v, want %v", got, tc.want)
			}
		})
	}
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

func TestFileStoreReadsReferenceLayout(t *testing.T) {
	root := t.TempDir()
	write := func(rel string, data []byte) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("2026-11-30/sess_a_001.jsonl", tracetest.Record(1))
	write("2026-11-30/sess_a_002.jsonl", tracetest.Record(2))
	write("2026-11-30/sess_001.jsonl", tracetest.Record(3)) // a different session: "sess"
	write("2026-11-30/notes.txt", []byte("ignored"))
	write("2026-11-30/sess_a_003.jsonl.import", []byte("ignored"))
	write("misc/sess_a_009.jsonl", []byte("ignored: not a date directory"))
	s := trace.NewFileStore(root, trace.FileStoreOptions{Location: time.UTC})
	ctx := context.Background()
	files, err := s.Files(ctx, "sess_a")
	if err != nil || len(files) != 2 || files[0].Index != 1 || files[1].Index != 2 {
		t.Fatalf("Files(sess_a) = %+v, %v", files, err)
	}
	sessions, err := s.Sessions(ctx)
	if err != nil || len(sessions) != 2 || sessions[0].ID != "sess" || sessions[1].ID != "sess_a" {
		t.Fatalf("Sessions = %+v, %v", sessions, err)
	}
	if sessions[1].LastActivity.IsZero() {
		t.Errorf("FileStore LastActivity is zero")
	}
	// Appending continues in the session's existing date directory.
	if _, err := s.Append(ctx, "sess_a", 3, stamped("2030-01-01T00:00:00.000Z")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "2026-11-30", "sess_a_003.jsonl")); err != nil {
		t.Errorf("file 3 not in the session's date directory: %v", err)
	}
	if err := s.Delete(ctx, "sess_a"); err != nil {
		t.Fatal(err)
	}
	if got := listTree(t, root); !slices.Equal(got, []string{"2026-11-30/notes.txt", "2026-11-30/sess_001.jsonl", "2026-11-30/sess_a_003.jsonl.import", "misc/sess_a_009.jsonl"}) {
		t.Errorf("after Delete: %v", got)
	}
}

func TestFileStoreCreateDatesByFirstRecord(t *testing.T) {
	root := t.TempDir()
	s := trace.NewFileStore(root, trace.FileStoreOptions{Location: time.UTC})
	files := [][]byte{append([]byte("\n"), stamped("2025-03-04T10:00:00.000Z")...), stamped("2025-03-05T10:00:00.000Z")}
	if err := s.Create(context.Background(), "imp", files); err != nil {
		t.Fatal(err)
	}
	if got := listTree(t, root); !slices.Equal(got, []string{"2025-03-04/imp_001.jsonl", "2025-03-04/imp_002.jsonl"}) {
		t.Errorf("files = %v", got)
	}
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
