package api_test

import (
	"encoding/json"
	"testing"

	"github.com/floehq/floe/transport/server"
)

// An approval_request names a tool_call the client has already received:
// the host holds the request back until the run's consumer has published
// the call (the engine asks as soon as the call is complete, which may be
// before). Several tasks, since the two race.
func TestApprovalRequestFollowsItsToolCall(t *testing.T) {
	e := newEnv(t, server.Config{})
	id := e.create("ask")
	st := e.open("/api/sessions/"+id+"/stream", "", false)
	st.next() // the task_state snapshot
	asked := 0
	for task := 0; task < 8; task++ {
		e.must(202, "POST", "/api/sessions/"+id+"/tasks", `{"input":"hi"}`)
		seen := map[string]bool{}
		for {
			ev := st.next()
			if ev.Name == "" && payloadType(ev) == "tool_call" {
				var m struct {
					Payload struct {
						ToolCallID string `json:"tool_call_id"`
					} `json:"payload"`
				}
				if err := json.Unmarshal([]byte(ev.Data), &m); err != nil {
					t.Fatal(err)
				}
				seen[m.Payload.ToolCallID] = true
			}
			if serverEvent("approval_request")(ev) {
				call := toolCallID(t, ev)
				if !seen[call] {
					t.Fatalf("task %d: approval_request for %s before its tool_call", task, call)
				}
				asked++
				e.must(204, "POST", "/api/sessions/"+id+"/approvals/"+call, `{"decision":"allow"}`)
			}
			if taskState("idle")(ev) {
				break
			}
		}
	}
	if asked == 0 {
		t.Fatal("no approval was asked")
	}
}
