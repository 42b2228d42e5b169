//go:build !js || floenode

package trace_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

// Interop fixtures: traces written by the reference implementation and what
// its resume rebuilt from them. They live in the shared folder next to the
// repository (override with FLOE_SHARED).

func interopDir(t *testing.T) string {
	t.Helper()
	shared := os.Getenv("FLOE_SHARED")
	if shared == "" {
		root, err := repoRoot()
		if err != nil {
			t.Fatalf("interop fixtures: %v", err)
		}
		shared = filepath.Join(root, "..", "shared")
	}
	dir := filepath.Join(shared, "interop")
	if _, err := os.Stat(filepath.Join(dir, "README.md")); err != nil {
		t.Fatalf("interop fixtures expected in %s: %v (the shared folder sits next to the repository, or set FLOE_SHARED to it)", dir, err)
	}
	return dir
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}

type interopParse struct {
	Records         int   `json:"records"`
	SkippedLines    []int `json:"skipped_lines"`
	TornTailIgnored bool  `json:"torn_tail_ignored"`
}

type interopResume struct {
	SessionID          string           `json:"session_id"`
	Files              []string         `json:"files"`
	Reads              string           `json:"reads"`
	Parse              interopParse     `json:"parse"`
	History            json.RawMessage  `json:"history"`
	CarryOver          json.RawMessage  `json:"carry_over"`
	PendingSummary     json.RawMessage  `json:"pending_summary"`
	ContextClosed      bool             `json:"context_closed"`
	SessionTurns       int64            `json:"session_turns"`
	SessionTokens      omni.TokenCounts `json:"session_tokens"`
	LastRequestTotal   int64            `json:"last_request_total"`
	DanglingCompaction json.RawMessage  `json:"dangling_compaction"`
	ResumeWrites       json.RawMessage  `json:"resume_writes"`
	NextRun            struct {
		Input            json.RawMessage  `json:"input"`
		HistoryInjected  bool             `json:"history_injected"`
		LLMSessionTokens omni.TokenCounts `json:"llm_session_tokens"`
		FirstRequest     json.RawMessage  `json:"first_request"`
		Stream           json.RawMessage  `json:"stream"`
		TraceAppended    json.RawMessage  `json:"trace_appended"`
		EngineAfter      json.RawMessage  `json:"engine_after"`
	} `json:"next_run"`
}

func loadResumes(t *testing.T, dir string) map[string]interopResume {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, "*.resume.json"))
	if len(names) == 0 {
		t.Fatalf("no *.resume.json in %s", dir)
	}
	out := map[string]interopResume{}
	for _, n := range names {
		var r interopResume
		if err := json.Unmarshal(readFile(t, n), &r); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		out[strings.TrimSuffix(filepath.Base(n), ".resume.json")] = r
	}
	return out
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestInteropParse: every reference trace reads as the reference read it.
func TestInteropParse(t *testing.T) {
	dir := interopDir(t)
	want := map[string]interopParse{}
	for _, r := range loadResumes(t, dir) {
		want[r.Reads] = r.Parse
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	for _, n := range names {
		name := filepath.Base(n)
		t.Run(name, func(t *testing.T) {
			data := readFile(t, n)
			p, err := trace.ReadFile(data)
			if err != nil {
				t.Fatal(err)
			}
			w, ok := want[name]
			if !ok { // not read by any resume: must be clean
				w = interopParse{Records: bytes.Count(bytes.TrimSpace(data), []byte("\n")) + 1}
			}
			if len(p.Records) != w.Records || !slices.Equal(p.SkippedLines(), w.SkippedLines) && len(w.SkippedLines)+len(p.Skipped) > 0 || p.TornTail != w.TornTailIgnored {
				t.Errorf("records %d, skipped %v, torn %v; want %d, %v, %v",
					len(p.Records), p.SkippedLines(), p.TornTail, w.Records, w.SkippedLines, w.TornTailIgnored)
			}
			for _, m := range p.Records {
				if m.Timestamp == "" {
					t.Errorf("record without timestamp: %+v", m)
				}
			}
		})
	}
}

// storeKinds build a store holding the fixture's files, named as the
// reference names them.
var storeKinds = []struct {
	name string
	new  func(t *testing.T, id string, files [][]byte) trace.Store
}{
	{"MemStore", func(t *testing.T, id string, files [][]byte) trace.Store {
		s := &trace.MemStore{}
		if err := s.Create(context.Background(), id, files); err != nil {
			t.Fatal(err)
		}
		return s
	}},
	{"FileStore", func(t *testing.T, id string, files [][]byte) trace.Store {
		root := t.TempDir()
		dir := filepath.Join(root, "2026-11-30")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		for i, data := range files {
			if err := os.WriteFile(filepath.Join(dir, trace.FileName(id, i+1)), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return trace.NewFileStore(root, trace.FileStoreOptions{Location: time.UTC})
	}},
}

func fixtureFiles(t *testing.T, dir string, r interopResume) [][]byte {
	var files [][]byte
	for _, f := range r.Files {
		files = append(files, readFile(t, filepath.Join(dir, f)))
	}
	return files
}

// TestInteropResume: resume rebuilds exactly what the reference rebuilt.
func TestInteropResume(t *testing.T) {
	dir := interopDir(t)
	for name, want := range loadResumes(t, dir) {
		for _, kind := range storeKinds {
			t.Run(name+"/"+kind.name, func(t *testing.T) {
				t.Parallel()
				store := &recordingStore{Store: kind.new(t, want.SessionID, fixtureFiles(t, dir, want))}
				r, err := trace.Resume(context.Background(), store, want.SessionID, fixedNow)
				if err != nil {
					t.Fatal(err)
				}
				if got := trace.FileName(want.SessionID, r.Index); got != trace.FileName(want.SessionID, len(want.Files)) {
					t.Errorf("read file %d, want the highest, %d", r.Index, len(want.Files))
				}
				p := r.Parsed // the Resumed keeps no records: count them in the file, less what Resume wrote
				data, err := store.ReadFile(context.Background(), want.SessionID, r.Index)
				if err != nil {
					t.Fatal(err)
				}
				read, _ := trace.ReadFile(data)
				if n := len(read.Records) - len(r.Writes); n != want.Parse.Records || p.TornTail != want.Parse.TornTailIgnored ||
					!slices.Equal(p.SkippedLines(), want.Parse.SkippedLines) && len(p.Skipped)+len(want.Parse.SkippedLines) > 0 {
					t.Errorf("parse: %d records, skipped %v, torn %v; want %+v", n, p.SkippedLines(), p.TornTail, want.Parse)
				}
				s := r.Snapshot
				sameJSON(t, "history", messagesJSON(s.History), want.History)
				sameJSON(t, "carry_over", messagesJSON(s.CarryOver), want.CarryOver)
				var summary any
				if s.PendingSummary != nil {
					summary = messageJSON(*s.PendingSummary)
				}
				sameJSON(t, "pending_summary", summary, want.PendingSummary)
				var dangling any
				if r.Dangling != nil {
					dangling = map[string]any{"reason": r.Dangling.Reason, "mode": r.Dangling.Mode}
				}
				sameJSON(t, "dangling_compaction", dangling, want.DanglingCompaction)
				sameJSON(t, "resume_writes", writtenJSON(r.Writes), want.ResumeWrites)
				sameJSON(t, "resume_writes (as the store saw them)", writtenJSON(store.take(t)), want.ResumeWrites)
				if s.ContextClosed != want.ContextClosed || s.SessionTurns != want.SessionTurns ||
					s.SessionTokens != want.SessionTokens || s.LastRequestTotal != want.LastRequestTotal || !s.MetaWritten {
					t.Errorf("closed %v turns %d tokens %+v last %d meta %v; want %v %d %+v %d true",
						s.ContextClosed, s.SessionTurns, s.SessionTokens, s.LastRequestTotal, s.MetaWritten,
						want.ContextClosed, want.SessionTurns, want.SessionTokens, want.LastRequestTotal)
				}
				if r.Meta.Type != omni.TypeSessionMeta || r.Meta.Payload.SessionID() != want.SessionID {
					t.Errorf("meta = %+v", r.Meta)
				}
			})
		}
	}
}

// TestInteropWriterContinues: the first record after resume lands where the
// reference's landed (same file, new file after a closed context, healed
// torn tail) — the Writer's share of next_run.trace_appended.
func TestInteropWriterContinues(t *testing.T) {
	dir := interopDir(t)
	for name, want := range loadResumes(t, dir) {
		for _, kind := range storeKinds {
			t.Run(name+"/"+kind.name, func(t *testing.T) {
				t.Parallel()
				store := kind.new(t, want.SessionID, fixtureFiles(t, dir, want))
				r, err := trace.Resume(context.Background(), store, want.SessionID, fixedNow)
				if err != nil {
					t.Fatal(err)
				}
				first := userText("Continue.")
				if r.Snapshot.ContextClosed { // the engine rotates, then writes the header
					if err := r.Writer.Rotate(); err != nil {
						t.Fatal(err)
					}
					first = stamp(r.Meta)
				}
				w, err := r.Writer.WriteRecord(context.Background(), first)
				if err != nil {
					t.Fatal(err)
				}
				var appended []map[string]any
				if err := json.Unmarshal(want.NextRun.TraceAppended, &appended); err != nil || len(appended) == 0 {
					t.Fatalf("trace_appended: %v", err)
				}
				exp := appended[0]
				exp["records"] = exp["records"].([]any)[:1]
				got := writtenJSON([]trace.Written{w})[0]
				sameJSON(t, "first append", got, mustJSON(t, exp))
				data, err := store.ReadFile(context.Background(), want.SessionID, w.Index)
				if err != nil {
					t.Fatal(err)
				}
				if p, _ := trace.ReadFile(data); p.TornTail || !reflect.DeepEqual(messageJSON(p.Records[len(p.Records)-1]), messageJSON(first)) {
					t.Errorf("file %d does not end with the appended record (torn %v)", w.Index, p.TornTail)
				}
			})
		}
	}
}

// TestInteropNextRun drives the follow-up run of each fixture on the real
// engine and compares it with the reference's.
func TestInteropNextRun(t *testing.T) {
	dir := interopDir(t)
	for name, want := range loadResumes(t, dir) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			files := fixtureFiles(t, dir, want)
			store := &recordingStore{Store: storeKinds[0].new(t, want.SessionID, files)}
			r, err := trace.Resume(context.Background(), store, want.SessionID, fixedNow)
			if err != nil {
				t.Fatal(err)
			}
			store.take(t)                                    // resume's own writes are checked elsewhere
			llm := newRecordingLLM(r.Snapshot.SessionTokens) // as an LLMFactory would
			var diags []engine.Diagnostic
			var dmu sync.Mutex
			snap := r.Snapshot
			sess, err := engine.New(engine.Config{
				Meta:     r.Meta,
				LLM:      llm,
				Trace:    r.Writer,
				ToolList: toolList(t, files[0]),
				MaxTurns: -1,
				Clock:    fixedClock{resumeAt},
				Resume:   &snap,
				OnDiagnostic: func(d engine.Diagnostic) {
					dmu.Lock()
					diags = append(diags, d)
					dmu.Unlock()
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			input := decodeMessages(t, want.NextRun.Input)
			for i := range input {
				input[i].Timestamp = resumeStamp
			}
			run, err := sess.Start(context.Background(), input, engine.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var stream []omni.Message
			for m, ok := run.Next(); ok; m, ok = run.Next() {
				stream = append(stream, m)
			}
			llm.mu.Lock()
			defer llm.mu.Unlock()
			if llm.injected != want.NextRun.HistoryInjected {
				t.Errorf("history injected = %v, want %v", llm.injected, want.NextRun.HistoryInjected)
			}
			if llm.injected {
				sameJSON(t, "injected history", messagesJSON(llm.history), want.History)
			}
			if llm.created != want.NextRun.LLMSessionTokens {
				t.Errorf("llm session tokens = %+v, want %+v", llm.created, want.NextRun.LLMSessionTokens)
			}
			if len(llm.requests) == 0 {
				t.Fatal("the LLM was never called")
			}
			sameJSON(t, "first_request", messagesJSON(llm.requests[0]), want.NextRun.FirstRequest)
			sameJSON(t, "stream", messagesJSON(stream), want.NextRun.Stream)
			sameJSON(t, "trace_appended", writtenJSON(store.take(t)), want.NextRun.TraceAppended)
			after := sess.Snapshot()
			sameJSON(t, "engine_after", map[string]any{
				"session_turns": after.SessionTurns, "last_request_total": after.LastRequestTotal,
				"session_tokens": after.SessionTokens,
			}, want.NextRun.EngineAfter)
			dmu.Lock()
			defer dmu.Unlock()
			for _, d := range diags {
				t.Errorf("diagnostic: %s: %v", d.Kind, d.Err)
			}
		})
	}
}
