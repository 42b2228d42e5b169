package conformance

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

// rulesApplied names, for the scenarios that need one, the normalization
// rules the resume check applies (normalize.go). A scenario listed here
// must apply exactly these rules, so that a rule starting to hide something
// new in a known scenario is noticed.
var rulesApplied = map[string][]string{
	"S01": {"ruleOutputsInTraceOrder"},
	"S09": {"ruleOutputsInTraceOrder"},
	"S11": {"ruleRetriedBlockLost"},
	"S12": {"ruleAbortedInputRestored"},
	"S13": {"ruleRetriedBlockLost"},
	"S14": {"ruleHistoryPlaceholdersFirst", "ruleResumePlaceholder"},
	"S15": {"ruleAbortedInputRestored"},
	"F06": {"ruleCompactionTextSentOnce"},
	"F10": {"ruleAbortedInputRestored"},
	"F12": {"ruleRetriedBlockLost"},
	"F14": {"ruleSupersededOutputsReplayed"},
	"F26": {"ruleAbortedInputRestored"},
	"F28": {"ruleHistoryPlaceholdersFirst", "ruleResumePlaceholder"},
	"F31": {"ruleAbortedInputRestored"},
}

// runResumeDir runs every scenario of dir in resume mode, one subtest each,
// and checks the normalization rules each applied.
func runResumeDir(t *testing.T, dir string) {
	runDir(t, dir, Options{Resume: true}, func(t *testing.T, res Result) {
		if want, ok := rulesApplied[res.ID]; ok {
			if got := slices.Sorted(maps.Keys(res.ResumeRules)); !slices.Equal(got, want) {
				t.Errorf("%s: normalization rules applied %v, want %v", res.ID, got, want)
			}
		}
	})
}

// TestResumeSharedScenarios: every shared scenario, then a resume from the
// Trace it wrote, equals what the engine held.
func TestResumeSharedScenarios(t *testing.T) { runResumeDir(t, sharedDir(t)) }

// TestResumeProjectScenarios: the same over the project's own scenarios.
func TestResumeProjectScenarios(t *testing.T) { runResumeDir(t, projectDir(t)) }

// TestResumeCatchesADifference: the check is not vacuous; a Trace that
// loses a record the engine committed fails the scenario.
func TestResumeCatchesADifference(t *testing.T) {
	t.Parallel()
	path := filepath.Join(sharedDir(t), "S01_seed_two_tool_timeline.json")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("conformance: scenario expected at %s (the shared folder sits next to the repository, or set FLOE_SHARED to it)", path)
	}
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	store := new(trace.MemStore)
	opts := Options{Resume: true, TraceFor: func(id string) engine.TraceSink {
		return &dropping{StoreTrace: NewStoreTrace(store, id), drop: "There are"}
	}}
	res := Run(context.Background(), s, opts)
	if res.Pass {
		t.Fatal("a Trace missing the final assistant text passed the resume check")
	}
	found := false
	for _, p := range res.Problems {
		if strings.HasPrefix(p, "resume sess-main") && strings.Contains(p, "history") {
			found = true
		}
	}
	if !found {
		t.Errorf("no resume history difference reported: %q", res.Problems)
	}
}

// dropping is a StoreTrace that loses the assistant texts starting with
// drop.
type dropping struct {
	*StoreTrace
	drop string
}

func (d *dropping) Write(ctx context.Context, m omni.Message) error {
	if m.IsModel(omni.Text) && m.Payload.Role == omni.RoleAssistant && strings.HasPrefix(m.Payload.Text, d.drop) {
		return nil
	}
	return d.StoreTrace.Write(ctx, m)
}

// TestResumeNeedsAStore: a sink that does not write to a trace.Store
// cannot be resumed, and says so.
func TestResumeNeedsAStore(t *testing.T) {
	t.Parallel()
	s, err := parse([]byte(strings.Replace(minimal, `"tools": {"A": {"steps": [{"wait": {"abort": true}}], "end": {"throw": "boom"}}},
  "approvals": {"A": {"decision": "allow"}},`, `"tools": {}, "approvals": {},`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	res := Run(context.Background(), s, Options{Resume: true, TraceFor: func(string) engine.TraceSink { return new(MemoryTrace) }})
	if res.Pass || !slices.ContainsFunc(res.Problems, func(p string) bool { return strings.Contains(p, "does not write to a trace.Store") }) {
		t.Errorf("Problems = %q", res.Problems)
	}
}

func TestStoreTrace(t *testing.T) {
	t.Parallel()
	store := new(trace.MemStore)
	tr := NewStoreTrace(store, "s1")
	files, err := tr.Files()
	if err != nil || files != nil {
		t.Fatalf("before any write: %v, %v", files, err)
	}
	stamp := func(m omni.Message) omni.Message { m.Timestamp = "2025-01-01T00:00:00.000Z"; return m }
	for _, op := range []any{stamp(omni.RequestBeginMsg()), "rotate", "rotate", stamp(omni.AbortMsg("x")), "rotate"} {
		if m, ok := op.(omni.Message); ok {
			err = tr.Write(context.Background(), m)
		} else {
			err = tr.Rotate()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := tr.Write(context.Background(), omni.RequestBeginMsg()); err == nil {
		t.Error("an unstamped record was accepted")
	}
	files, err = tr.Files()
	if err != nil {
		t.Fatal(err)
	}
	// File 2 was rotated past without a write: no file, read as empty; the
	// last rotation created nothing (E-13.11).
	if len(files) != 3 || len(files[0]) != 1 || len(files[1]) != 0 || len(files[2]) != 1 {
		t.Fatalf("files = %v", files)
	}
	if files[2][0].Payload.Reason() != "x" || tr.Store() != store || tr.SessionID() != "s1" {
		t.Errorf("read back %+v", files[2][0])
	}
}
