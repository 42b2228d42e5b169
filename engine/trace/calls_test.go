package trace_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/floehq/floe/engine/trace"
)

const (
	callMeta  = `{"timestamp":"2026-11-30T04:09:45.000Z","type":"session_meta","payload":{"session_id":"calls","provider":"p","model_id":"m","model_context_window":1000,"system_prompt":"","agent_state":"a","workspace":"w"}}`
	callBegin = `{"timestamp":"2026-11-30T04:09:45.001Z","type":"event_msg","payload":{"type":"request_begin"}}`
	callUser  = `{"timestamp":"2026-11-30T04:09:45.002Z","type":"model_msg","payload":{"type":"text","role":"user","text":"go"}}`
)

func callLine(id string) string {
	idKey := `,"tool_call_id":"` + id + `"`
	if id == "-" {
		idKey = ""
	}
	return `{"timestamp":"2026-11-30T04:09:45.003Z","type":"model_msg","payload":{"type":"tool_call","role":"assistant","name":"t","arguments":"{}"` + idKey + `,"stop_reason":"completed"}}`
}

func outputLine(id string) string {
	idKey := `,"tool_call_id":"` + id + `"`
	if id == "-" {
		idKey = ""
	}
	return `{"timestamp":"2026-11-30T04:09:45.004Z","type":"model_msg","payload":{"type":"tool_call_output","role":"user","output":"x"` + idKey + `,"stop_reason":"completed"}}`
}

// A Trace whose tool call or output lacks its tool_call_id, or whose
// request repeats a tool_call_id, is refused by Import and by Resume, with
// ErrInvalid naming the line; the same id in two requests is fine.
func TestUnpairableCallsRefused(t *testing.T) {
	cases := []struct {
		name  string
		lines []string
		line  string // "" = accepted
	}{
		{"call without id", []string{callMeta, callUser, callBegin, callLine("-")}, "line 4"},
		{"empty id", []string{callMeta, callUser, callBegin, callLine("")}, "line 4"},
		{"output without id", []string{callMeta, callUser, callBegin, callLine("A"), outputLine("-")}, "line 5"},
		{"repeated in one request", []string{callMeta, callUser, callBegin, callLine("A"), callLine("B"), callLine("A")}, "line 6"},
		{"same id in two requests", []string{callMeta, callUser, callBegin, callLine("A"), outputLine("A"), callBegin, callLine("A")}, ""},
		{"two outputs for one call", []string{callMeta, callUser, callBegin, callLine("A"), outputLine("A"), outputLine("A")}, ""},
	}
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := strings.Join(tc.lines, "\n") + "\n"
			store := &trace.MemStore{}
			_, err := trace.Import(ctx, store, []trace.File{{Name: "2026-11-30/calls_001.jsonl", Data: []byte(data)}})
			check := func(op string, err error) {
				t.Helper()
				if tc.line == "" {
					if err != nil {
						t.Fatalf("%s: %v", op, err)
					}
					return
				}
				if !errors.Is(err, trace.ErrInvalid) || !strings.Contains(err.Error(), tc.line) || !strings.Contains(err.Error(), "tool_call") {
					t.Fatalf("%s: %v, want ErrInvalid naming %s", op, err, tc.line)
				}
			}
			check("import", err)
			if tc.line != "" {
				if !strings.Contains(err.Error(), "calls_001.jsonl") {
					t.Fatalf("import error does not name the file: %v", err)
				}
				if err := store.Create(ctx, "calls", [][]byte{[]byte(data)}); err != nil {
					t.Fatal(err)
				}
			}
			_, err = trace.Resume(ctx, store, "calls", func() time.Time { return time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC) })
			check("resume", err)
			if tc.line != "" && !strings.Contains(err.Error(), "file 1") {
				t.Fatalf("resume error does not name the file: %v", err)
			}
		})
	}
}
