package conformance

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
)

// hangs scripts a tool that waits for a message that never comes, and an
// LLM that waits for that tool's output.
const hangs = `{
  "format": "omni-conformance/1", "id": "H", "name": "hangs",
  "session": {"meta": {"session_id": "s", "provider": "p", "model_id": "m",
    "model_context_window": 1, "system_prompt": "", "agent_state": "", "workspace": ""}},
  "llm": {"s": [{"steps": [
    {"emit": {"type":"model_msg","payload":{"type":"tool_call","role":"assistant","name":"t","arguments":"{}","tool_call_id":"T","stop_reason":"completed"}}},
    {"wait": {"seen": {"payload": {"type": "tool_call_output"}}}}
  ]}]},
  "tools": {"T": {"steps": [{"wait": {"seen": {"payload": {"type": "never"}}}}]}},
  "approvals": {"T": {"decision": "allow"}},
  "runs": [{"input": [{"type":"model_msg","payload":{"type":"text","role":"user","text":"go","stop_reason":"completed"}}]}]
}`

// TestTimeoutNamesTheWaits: in the synctest bubble the 30 s safety timeout passes in fake time
// once everything is blocked, and the bubble checks that every goroutine
// unwinds after the runner gives up.
func TestTimeoutNamesTheWaits(t *testing.T) {
	s, err := parse([]byte(hangs))
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		res := Run(context.Background(), s, Options{})
		for _, want := range []string{
			"timeout after 30s; still waiting: ",
			`llm s request 1 step 2: wait {"seen":{"payload":{"type":"tool_call_output"}}}`,
			`tool T step 1: wait {"seen":{"payload":{"type":"never"}}}`,
			"consumer: run 1: Next for message ",
		} {
			if res.Pass || !strings.Contains(res.Diff, want) {
				t.Errorf("diff %q lacks %q", res.Diff, want)
			}
		}
		t.Log(res.Diff)
		synctest.Wait()
	})
}
