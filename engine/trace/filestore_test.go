//go:build !js || floenode

package trace_test

import (
	"bytes"
	"context"
	"errors"
	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/engine/trace/tracetest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

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

// TestFileStoreReopen: a reopen is a new FileStore on the same directory.
func TestFileStoreReopen(t *testing.T) {
	for _, sync := range []bool{false, true} {
		name := map[bool]string{false: "NoSync", true: "Sync"}[sync]
		t.Run(name, func(t *testing.T) {
			tracetest.TestReopen(t, func(t *testing.T) (trace.Store, func() trace.Store) {
				root := t.TempDir()
				open := func() trace.Store {
					return trace.NewFileStore(root, trace.FileStoreOptions{Sync: sync, Location: time.UTC})
				}
				return open(), open
			})
		})
	}
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
	write("2026-12-01/sess_a_002.jsonl", tracetest.Record(9)) // the earlier date's file 2 is read; Delete removes both
	write("2026-11-30/sess_a_0004.jsonl", []byte("ignored: not a name the store writes"))
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
	if got := listTree(t, root); !slices.Equal(got, []string{"2026-11-30/notes.txt", "2026-11-30/sess_001.jsonl", "2026-11-30/sess_a_0004.jsonl", "2026-11-30/sess_a_003.jsonl.import", "misc/sess_a_009.jsonl"}) {
		t.Errorf("after Delete: %v", got)
	}
}

// A session whose files are in two date directories (moved by hand, or
// written by another tool: P-11 keeps them in one) is read whole, and
// continues in its last file's directory, as the reference's resume
// reopens it: appends went to the first file's directory, where file 2 is
// not, and failed as a file removed while the session was open.
func TestFileStoreContinuesWhereTheLastFileIs(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	for rel, data := range map[string][]byte{
		"2026-11-30/s_001.jsonl": stamped("2026-11-30T04:00:00.000Z"),
		"2026-12-01/s_002.jsonl": stamped("2026-12-01T04:00:00.000Z"),
	} {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := trace.NewFileStore(root, trace.FileStoreOptions{Location: time.UTC})
	if files, err := s.Files(ctx, "s"); err != nil || len(files) != 2 {
		t.Fatalf("Files = %+v, %v", files, err)
	}
	if _, err := s.Append(ctx, "s", 2, stamped("2026-12-02T04:00:00.000Z")); err != nil {
		t.Fatalf("append to file 2: %v", err)
	}
	if _, err := s.Append(ctx, "s", 3, stamped("2026-12-02T05:00:00.000Z")); err != nil {
		t.Fatalf("append to file 3: %v", err)
	}
	want := []string{"2026-11-30/s_001.jsonl", "2026-12-01/s_002.jsonl", "2026-12-01/s_003.jsonl"}
	if got := listTree(t, root); !slices.Equal(got, want) {
		t.Fatalf("files = %v, want %v", got, want)
	}
	data, err := s.ReadFile(ctx, "s", 2)
	if err != nil || bytes.Count(data, []byte("\n")) != 2 {
		t.Fatalf("file 2 = %q, %v", data, err)
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

// An import killed midway (SIGKILL) leaves its temporary file; the next
// import of that session writes over it instead of failing with "file
// exists" (which also removed it, so that only a second try went through).
func TestFileStoreCreateOverAKilledImport(t *testing.T) {
	root := t.TempDir()
	s := trace.NewFileStore(root, trace.FileStoreOptions{Location: time.UTC})
	if err := os.MkdirAll(filepath.Join(root, "2025-03-04"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "2025-03-04", "imp_001.jsonl.import"), []byte(`{"timest`), 0o600); err != nil {
		t.Fatal(err)
	}
	file := stamped("2025-03-04T10:00:00.000Z")
	if err := s.Create(context.Background(), "imp", [][]byte{file}); err != nil {
		t.Fatal(err)
	}
	if got := listTree(t, root); !slices.Equal(got, []string{"2025-03-04/imp_001.jsonl"}) {
		t.Errorf("files = %v", got)
	}
	if got, _ := s.ReadFile(context.Background(), "imp", 1); !bytes.Equal(got, file) {
		t.Errorf("file 1 = %q", got)
	}
}

func TestExportImportRoundTrip(t *testing.T) {
	ctx := context.Background()
	src := &trace.MemStore{}
	file2 := metaLine + beginLine + `{"timestamp":"2026-12-01T00:00:00.000Z","type":"ev` // torn tail kept
	if err := src.Create(ctx, "s1", [][]byte{[]byte(metaLine + promptLine), []byte(file2)}); err != nil {
		t.Fatal(err)
	}
	files, err := trace.Export(ctx, src, "s1", time.FixedZone("+1", 3600))
	if err != nil {
		t.Fatal(err)
	}
	if files[0].Name != "2026-12-01/s1_001.jsonl" || files[1].Name != "2026-12-01/s1_002.jsonl" {
		t.Errorf("names = %q, %q", files[0].Name, files[1].Name)
	}
	dst := trace.NewFileStore(t.TempDir(), trace.FileStoreOptions{Location: time.UTC})
	id, err := trace.Import(ctx, dst, []trace.File{files[1], files[0]})
	if err != nil || id != "s1" {
		t.Fatalf("Import = %q, %v", id, err)
	}
	for i, f := range files {
		if got, _ := dst.ReadFile(ctx, "s1", i+1); !bytes.Equal(got, f.Data) {
			t.Errorf("file %d = %q, want %q", i+1, got, f.Data)
		}
	}
	if _, err := trace.Import(ctx, dst, files); !errors.Is(err, trace.ErrExists) {
		t.Errorf("second Import = %v, want ErrExists", err)
	}
	id, err = trace.Import(ctx, &trace.MemStore{}, []trace.File{{Data: []byte(metaLine + promptLine)}})
	if err != nil || id != "s1" {
		t.Errorf("Import of one unnamed file = %q, %v", id, err)
	}
}

// storeOnly hides a store's Summarizer, so List takes its generic path.
type storeOnly struct{ trace.Store }

func TestFileStoreSummariesMatchList(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	prompt := func(text string) string {
		return `{"timestamp":"2026-11-30T04:09:45.282Z","type":"model_msg","payload":{"type":"text","role":"user","text":"` + text + `","stop_reason":"completed"}}` + "\n"
	}
	write("2026-11-30/a_001.jsonl", prompt("first of a"))
	write("2026-11-30/a_002.jsonl", prompt("rotated"))
	write("2026-12-01/a_002.jsonl", prompt("later date, not read"))
	write("2026-11-30/b_001.jsonl", string(tracetest.Record(1))) // no prompt
	write("2026-12-01/c d_001.jsonl", prompt("second day"))
	write("2026-12-01/notes.txt", "ignored")
	if err := os.Symlink(filepath.Join(root, "2026-11-30", "a_001.jsonl"), filepath.Join(root, "2026-12-01", "e_001.jsonl")); err != nil {
		t.Fatal(err)
	}
	s := trace.NewFileStore(root, trace.FileStoreOptions{Location: time.UTC})
	ctx := context.Background()
	got, err := trace.List(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	want, err := trace.List(ctx, storeOnly{s})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || !slices.Equal(got, want) {
		t.Fatalf("List through Summaries = %+v\nthrough the generic path = %+v", got, want)
	}
	for _, sum := range got {
		if sum.ID == "a" && (sum.FirstPrompt != "first of a" || sum.Files != 2) {
			t.Errorf("a: %+v, want the prompt of its file 1 and 2 files", sum)
		}
	}
}

// Listing reads a session's first prompt from the start of its first
// file: it read the file whole, and a file over MaxFileBytes failed the
// whole listing (here a sparse one, its prompt first).
func TestFileStoreListsAFileOverTheReadCap(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "2026-11-30", "big_001.jsonl")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	rec := `{"timestamp":"2026-11-30T04:09:45.282Z","type":"model_msg","payload":{"type":"text","role":"user","text":"big one","stop_reason":"completed"}}` + "\n"
	if err := os.WriteFile(p, []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, trace.MaxFileBytes+1); err != nil {
		t.Skipf("no sparse file: %v", err)
	}
	got, err := trace.List(context.Background(), trace.NewFileStore(root, trace.FileStoreOptions{Location: time.UTC}))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != "big" || got[0].FirstPrompt != "big one" {
		t.Fatalf("List = %+v", got)
	}
}

// A session's directory removed while it is open (rm -rf of the store, a
// temp cleaner): its next append does not make the file again without the
// session_meta it began with, a Trace that lists and never resumes; it
// fails naming what happened. A file that starts a context (session_meta
// first: the session made anew under that id) is made as before.
func TestFileStoreAppendToARemovedFile(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s := trace.NewFileStore(root, trace.FileStoreOptions{Location: time.UTC})
	meta := []byte(`{"timestamp":"2026-12-06T07:00:00.000Z","type":"session_meta","payload":{"session_id":"gone"}}` + "\n")
	rec := []byte(`{"timestamp":"2026-12-06T07:00:01.000Z","type":"event_msg","payload":{"type":"request_begin"}}` + "\n")
	for i, data := range [][]byte{meta, rec} {
		if _, err := s.Append(ctx, "gone", 1, data); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	if err := os.RemoveAll(filepath.Join(root, "2026-12-06")); err != nil {
		t.Fatal(err)
	}
	_, err := s.Append(ctx, "gone", 1, rec)
	if !errors.Is(err, trace.ErrNotFound) || !strings.Contains(err.Error(), `append "gone" file 1: not found: the file was removed while the session was open`) {
		t.Fatalf("append after the removal: %v", err)
	}
	if _, err := s.Append(ctx, "gone", 1, rec); !errors.Is(err, trace.ErrNotFound) {
		t.Fatalf("a second append after the removal: %v", err)
	}
	if left, _ := os.ReadDir(root); len(left) != 0 {
		t.Fatalf("the appends left %v in the store", left)
	}
	if _, err := s.Files(ctx, "gone"); !errors.Is(err, trace.ErrNotFound) {
		t.Fatalf("Files: %v", err)
	}
	// The session made again: its session_meta starts the file.
	if res, err := s.Append(ctx, "gone", 1, append(append([]byte(nil), meta...), rec...)); err != nil || !res.Created {
		t.Fatalf("append of a new start: %+v, %v", res, err)
	}
	if _, err := s.Append(ctx, "gone", 1, rec); err != nil {
		t.Fatal(err)
	}
	r, err := trace.Resume(ctx, s, "gone", time.Now)
	if err != nil || r.Meta.Payload.SessionID() != "gone" {
		t.Fatalf("resume: %v", err)
	}
}

// A long-lived process writes many sessions: what the store keeps of each
// (its date directory, its highest file index) goes with Forget, and a
// later write of the session finds its files again.
func TestFileStoreForget(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s := trace.NewFileStore(root, trace.FileStoreOptions{Location: time.UTC})
	meta := func(id string) []byte {
		return []byte(`{"timestamp":"2026-12-06T07:00:00.000Z","type":"session_meta","payload":{"session_id":"` + id + `"}}` + "\n")
	}
	rec := []byte(`{"timestamp":"2026-12-06T07:00:01.000Z","type":"event_msg","payload":{"type":"request_begin"}}` + "\n")
	for _, id := range []string{"a", "b", "open"} {
		if _, err := s.Append(ctx, id, 1, meta(id)); err != nil {
			t.Fatal(err)
		}
	}
	if n := trace.FileStoreKept(s); n != 3 {
		t.Fatalf("kept %d sessions after three, want 3", n)
	}
	bat := trace.NewBatcher(s, trace.BatcherOptions{})
	bat.Forget("a")
	s.Forget("b")
	if n := trace.FileStoreKept(s); n != 1 {
		t.Fatalf("kept %d sessions after two were forgotten, want 1", n)
	}
	// A later write continues the session's file.
	if res, err := s.Append(ctx, "a", 1, rec); err != nil || res.Created {
		t.Fatalf("append after Forget: %+v, %v", res, err)
	}
	data, err := s.ReadFile(ctx, "a", 1)
	if err != nil || string(data) != string(meta("a"))+string(rec) {
		t.Fatalf("file 1 of a: %q, %v", data, err)
	}
	// A session not forgotten still tells its removed file from a new one.
	if err := os.RemoveAll(filepath.Join(root, "2026-12-06")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "open", 1, rec); !errors.Is(err, trace.ErrNotFound) {
		t.Fatalf("append to a removed file: %v", err)
	}
	trace.NewBatcher(&trace.MemStore{}, trace.BatcherOptions{}).Forget("a") // a store that keeps nothing of it: nothing to do
}
