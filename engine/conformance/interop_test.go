//go:build !js || floenode

package conformance

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/trace"
)

// TestInteropScriptsWriteReferenceTraces runs every script of the shared
// interop directory (written by the reference implementation, format
// omni-conformance/1) with a file-backed trace store, and checks that every
// file it writes equals the reference's own .jsonl record by record, as JSON
// values with timestamps aside (interop README, "How an implementation uses
// them" (c)). Which files belong to which session comes from the
// .resume.json files next to the scripts.
func TestInteropScriptsWriteReferenceTraces(t *testing.T) {
	dir := filepath.Join(filepath.Dir(sharedDir(t)), "interop")
	scripts, err := filepath.Glob(filepath.Join(dir, "*.script.json"))
	if err != nil || len(scripts) == 0 {
		t.Fatalf("interop: scripts expected in %s (the shared folder sits next to the repository, or set FLOE_SHARED to it)", dir)
	}
	for _, path := range scripts {
		base := strings.TrimSuffix(filepath.Base(path), ".script.json")
		t.Run(base, func(t *testing.T) {
			s, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			store := trace.NewFileStore(t.TempDir(), trace.FileStoreOptions{Location: time.UTC})
			res := Run(context.Background(), s, Options{TraceFor: func(id string) engine.TraceSink { return NewStoreTrace(store, id) }})
			if !res.Pass {
				t.Fatalf("scenario failed with a file-backed store: %s", res.Diff)
			}
			prefix := strings.SplitN(base, "_", 2)[0] + "_"
			resumes, _ := filepath.Glob(filepath.Join(dir, prefix+"*.resume.json"))
			checked := 0
			for _, rp := range resumes {
				if strings.Contains(rp, "_001only") {
					continue // the same session as if only file 001 existed
				}
				var r struct {
					SessionID string   `json:"session_id"`
					Files     []string `json:"files"`
				}
				raw, err := os.ReadFile(rp)
				if err != nil || json.Unmarshal(raw, &r) != nil {
					t.Fatalf("%s: unreadable", rp)
				}
				for k, name := range r.Files {
					want, err := os.ReadFile(filepath.Join(dir, name))
					if err != nil {
						t.Fatal(err)
					}
					got, err := store.ReadFile(context.Background(), r.SessionID, k+1)
					if err != nil {
						t.Fatalf("session %s file %d (reference %s): %v", r.SessionID, k+1, name, err)
					}
					compareRecords(t, r.SessionID+" file "+name, got, want)
					checked++
				}
				if files, _ := store.Files(context.Background(), r.SessionID); len(files) != len(r.Files) {
					t.Errorf("session %s: wrote %d files, the reference %d", r.SessionID, len(files), len(r.Files))
				}
			}
			if checked == 0 {
				t.Fatalf("no reference trace file names session of %s", base)
			}
		})
	}
}

// compareRecords compares two JSONL files line by line as JSON values,
// ignoring each envelope's timestamp.
func compareRecords(t *testing.T, what string, got, want []byte) {
	t.Helper()
	lines := func(b []byte) []any {
		var out []any
		for _, l := range strings.Split(string(b), "\n") {
			if strings.TrimSpace(l) == "" {
				continue
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(l), &v); err != nil {
				t.Fatalf("%s: %v in %q", what, err, l)
			}
			delete(v, "timestamp")
			out = append(out, v)
		}
		return out
	}
	g, w := lines(got), lines(want)
	if len(g) != len(w) {
		t.Errorf("%s: %d records, the reference %d", what, len(g), len(w))
	}
	for i := range min(len(g), len(w)) {
		gj, _ := json.Marshal(g[i])
		wj, _ := json.Marshal(w[i])
		if string(gj) != string(wj) {
			t.Errorf("%s record %d:\n got %s\nwant %s", what, i+1, gj, wj)
			return
		}
	}
}
