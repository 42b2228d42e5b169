package api_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/transport/host"
	"github.com/floehq/floe/transport/server"
)

// A tool call id is the model's to choose: one with a "/" (sent escaped,
// %2F, as connect() sends it) is answered like any other. Before, the
// route was matched on the unescaped path, the id made two segments, the
// answer was "no route" and the run waited for a decision for ever.
func TestApprovalOfAToolCallIDWithASlash(t *testing.T) {
	const callID = "fs/read:0 ?#%"
	wire := func(omni.Message) (host.Wiring, error) {
		w := server.Scripted(0)
		w.LLM = engine.LLMFunc(func(_ context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
			if len(p.NewMessages) > 0 && p.NewMessages[0].Payload.Type == omni.ToolCallOutput {
				emit(omni.AssistantText("read", omni.StatusCompleted))
			} else {
				emit(omni.ToolCallMsg(callID, "read_file", `{"path":"README.md"}`))
			}
			emit(omni.TokenUsageMsg(omni.TokenCounts{Total: 1}, omni.TokenCounts{Total: 1}))
			return engine.Outcome{Status: omni.StatusCompleted}
		})
		return w, nil
	}
	e := newEnv(t, server.Config{Wire: wire})
	id := e.create("ask")
	st := e.open("/api/sessions/"+id+"/stream", "", false)
	st.next()
	e.must(202, "POST", "/api/sessions/"+id+"/tasks", `{"input":"Read it."}`)
	evs := st.until(serverEvent("approval_request"))
	if got := toolCallID(t, evs[len(evs)-1]); got != callID {
		t.Fatalf("approval_request for %q, want %q", got, callID)
	}
	// A path whose session segment holds an escaped "/" names no session:
	// it is not a route of the session before that "/". Escaped letters
	// are the letters.
	for _, p := range []string{
		"/api/sessions/" + id + "%2Fapprovals/approvals/" + url.PathEscape(callID),
		"/api/sessions/" + id + "%2Fx/approvals/" + url.PathEscape(callID),
		"/api/sessions/" + id + "%2Fmessages",
	} {
		m := "POST"
		if strings.HasSuffix(p, "messages") {
			m = "GET"
		}
		if code, body := e.do(m, p, `{"decision":"deny"}`); code != 404 {
			t.Fatalf("%s %s: %d %s, want 404", m, p, code, body)
		}
	}
	e.must(204, "POST", "/api/sessions/"+id+"/appro%76als/"+url.PathEscape(callID), `{"decision":"allow"}`)
	evs = st.until(taskState("idle"))
	var decided bool
	for _, ev := range evs {
		decided = decided || strings.Contains(ev.Data, `"approval_decision"`) && strings.Contains(ev.Data, `"decision":"allow"`)
	}
	if !decided {
		t.Fatal("the call was not allowed")
	}
}
