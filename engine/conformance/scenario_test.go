package conformance

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/floehq/floe/engine/omni"
)

// minimal is the smallest valid scenario; tests patch it with replace.
const minimal = `{
  "format": "omni-conformance/1", "id": "T01", "name": "minimal",
  "session": {"meta": {"session_id": "s", "provider": "p", "model_id": "m",
    "model_context_window": 1, "system_prompt": "", "agent_state": "", "workspace": ""}},
  "llm": {"s": [{"steps": [{"emit": {"type":"event_msg","payload":{"type":"request_begin"}}}]}]},
  "tools": {"A": {"steps": [{"wait": {"abort": true}}], "end": {"throw": "boom"}}},
  "approvals": {"A": {"decision": "allow"}},
  "runs": [{"input": [], "expect_stream": []}],
  "expect": {"sleeps_ms": []}
}`

func TestParseMinimal(t *testing.T) {
	t.Parallel()
	s, err := parse([]byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	sp := s.spec
	if s.ID != "T01" || sp.session.meta.Payload.SessionID() != "s" || sp.session.meta.Type != omni.TypeSessionMeta {
		t.Errorf("session: %+v", sp.session.meta)
	}
	if got := sp.llm["s"][0].outcome.Status; got != omni.StatusCompleted {
		t.Errorf("default outcome %q", got)
	}
	if th := sp.tools["A"].throw; th == nil || *th != "boom" {
		t.Errorf("throw = %v", th)
	}
	if !sp.runs[0].checkStream || sp.runs[0].noApprover || sp.session.toolList != nil {
		t.Errorf("run defaults: %+v", sp.runs[0])
	}
	if sp.expect.sleepsMs == nil || sp.expect.approverCalls != nil || sp.expect.llmInputs != nil || sp.expect.trace != nil {
		t.Errorf("expect presence: %+v", sp.expect)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, old, new, err string }{
		{"format", `omni-conformance/1`, `omni-conformance/2`, "format"},
		{"unknown top key", `"id": "T01"`, `"id": "T01", "extra": 1`, `unknown field "extra"`},
		{"unknown expect key", `"sleeps_ms": []`, `"sleep_ms": []`, `unknown field "sleep_ms"`},
		{"missing id", `"id": "T01"`, `"id": ""`, "id and name"},
		{"meta without id", `"session_id": "s"`, `"session_id": ""`, "session.meta: session_id"},
		{"bad emit", `{"type":"event_msg","payload":{"type":"request_begin"}}`, `{"type":"event_msg"}`, "llm.s[0].steps[0].emit"},
		{"two step kinds", `{"wait": {"abort": true}}`, `{"wait": {"abort": true}, "emit": {"type":"event_msg","payload":{}}}`, "exactly one"},
		{"bad end", `{"throw": "boom"}`, `"finish"`, "end"},
		{"bad approver", `"input": []`, `"input": [], "approver": "auto"`, "approver"},
		{"no runs", `"runs": [{"input": [], "expect_stream": []}]`, `"runs": []`, "runs"},
		{"bad hook", `"input": []`, `"input": [], "hooks": [{"on": {"approval": "A"}, "do": []}]`, "no actions"},
		{"timestamped input", `"input": []`, `"input": [{"timestamp":"x","type":"event_msg","payload":{}}]`, "timestamp"},
		{"compaction mode", `"meta"`, `"config": {"compaction": {"max_context_length": 1}}, "meta"`, "compaction.mode"},
		{"subagent in llm", `{"emit": {"type":"event_msg","payload":{"type":"request_begin"}}}`, `{"subagent": {"meta": {}, "prompt": "x"}}`, "only tool scripts"},
		{"approval without decision", `{"decision": "allow"}`, `{}`, "decision"},
		{"llm_inputs context", `"sleeps_ms": []`, `"llm_inputs": {"s": [{"context": 0, "messages": []}]}`, "context"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := strings.Replace(minimal, tc.old, tc.new, 1)
			if src == minimal {
				t.Fatalf("patch %q not applied", tc.old)
			}
			_, err := parse([]byte(src))
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error = %v, want one containing %q", err, tc.err)
			}
		})
	}
}

func TestLoadDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"b.json":      minimal,
		"a.json":      strings.Replace(minimal, `"T01"`, `"T00"`, 1),
		"c.json":      "not json",
		"d.json":      minimal, // duplicate id
		"notes.md":    "ignored",
		"sub.json/x":  minimal,
		"e.json.orig": minimal,
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id  string
		bad bool
	}{{"T00", false}, {"T01", false}, {"c", true}, {"d", true}}
	if len(got) != len(want) {
		t.Fatalf("got %d scenarios, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].ID != w.id || (got[i].Err != nil) != w.bad {
			t.Errorf("[%d] = %s err %v, want %s bad %v", i, got[i].ID, got[i].Err, w.id, w.bad)
		}
	}
	res := Run(context.Background(), got[2], Options{})
	if res.Pass || !strings.HasPrefix(res.Diff, "load: c.json:") {
		t.Errorf("invalid file: %+v", res)
	}
	if _, err := LoadDir(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing directory accepted")
	}
}
