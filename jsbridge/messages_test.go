//go:build js && wasm

package jsbridge

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/floehq/floe/engine/omni"
)

// recordsJSON is what the shim reads from the records Go wrote for it (a
// tool call, a request's new messages; readCall and readInput in
// floe.mjs), as a JSON array with the keys in the shim's order; s itself
// when it is a JSON array.
func recordsJSON(t *testing.T, s string) string {
	t.Helper()
	if strings.HasPrefix(s, "[") {
		return s
	}
	msgs, err := readBatch(s)
	if err != nil {
		t.Fatalf("records %q: %v", s, err)
	}
	a := make([]any, len(msgs))
	for i, m := range msgs {
		a[i] = m
	}
	var o obj
	return strings.TrimSuffix(strings.TrimPrefix(obj(append(o, kv{"a", a})).json(), `{"a":`), "}")
}

// ordered parses a JSON array keeping each object's key order.
func ordered(t *testing.T, s string) any {
	t.Helper()
	v, err := parseOrdered(s)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

// The approver, the tool and the model get from records what they got from
// JSON: every message, its keys in the same order, for every kind of
// message a request's input holds; a message the records do not carry
// goes as JSON inside them, and one that is not valid UTF-8 as JSON, as
// the array's last record or else by making the whole input one JSON array.
func TestCallAndInputRecords(t *testing.T) {
	call := omni.ToolCallMsg("call_1", "read_file", `{"path":"a \"b\" ü.txt"}`)
	stamped := call
	stamped.Timestamp = "2026-01-02T03:04:05.000Z"
	failed := omni.ToolOutput("call_2", "no such file: ü", omni.StatusFailed)
	failed.Timestamp = stamped.Timestamp
	var decoded omni.Message // a payload decoded from JSON: always a J record
	if err := decoded.UnmarshalJSON([]byte(`{"type":"model_msg","payload":{"type":"tool_call","role":"assistant","name":"x","arguments":"{}","tool_call_id":"c9","extra":1}}`)); err != nil {
		t.Fatal(err)
	}
	user := omni.UserText("hello 👋")
	plenty := []omni.Message{user, stamped, omni.ToolOutput("call_1", "done", omni.StatusCompleted), failed,
		omni.AssistantText("thinking aloud", omni.StatusCompleted), decoded,
		omni.ApprovalDecisionMsg("deny", "call_3"), omni.TokenUsageMsg(omni.TokenCounts{Total: 3}, omni.TokenCounts{Output: 1, Total: 2})}
	for _, m := range []omni.Message{call, stamped, decoded} {
		got := recordsJSON(t, string(appendCall(nil, &m)))
		want := "[" + string(m.AppendJSON(nil)) + "]"
		if !reflect.DeepEqual(ordered(t, got), ordered(t, want)) {
			t.Errorf("tool call\n got %s\nwant %s", got, want)
		}
	}
	if b := appendCall(nil, &call); b[0] != recToolCall {
		t.Errorf("a tool call of the standard keys is %q, want a C record", b)
	}
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 2000 {
		var in []omni.Message
		for range r.IntN(6) {
			in = append(in, plenty[r.IntN(len(plenty))])
		}
		rec := string(appendInput(nil, in))
		got, want := recordsJSON(t, rec), string(appendArray(nil, in))
		if !reflect.DeepEqual(ordered(t, got), ordered(t, want)) {
			t.Fatalf("#%d: input %q\n got %s\nwant %s", i, rec, got, want)
		}
		if strings.HasPrefix(rec, "[") {
			t.Fatalf("#%d: valid messages as a JSON array: %s", i, rec)
		}
	}
	if b := appendInput(nil, nil); len(b) != 0 {
		t.Errorf("no new messages: %q, want nothing (read as [])", b)
	}
	// Not valid UTF-8: an R record at the end, a JSON array anywhere else.
	bad := omni.Event(omni.Payload{Type: "x", Rest: &omni.Rest{Extra: []omni.RawField{{Key: "k", Value: []byte("\"\xe2\x82\"")}}}})
	if rec := string(appendInput(nil, []omni.Message{user, bad})); strings.HasPrefix(rec, "[") || !strings.Contains(rec, string(rune(recRest))) {
		t.Errorf("invalid UTF-8 last: %q, want records ending with an R record", rec)
	}
	if rec := string(appendInput(nil, []omni.Message{bad, user})); rec != string(appendArray(nil, []omni.Message{bad, user})) {
		t.Errorf("invalid UTF-8 first: %q, want the JSON array", rec)
	}
	if rec := string(appendCall(nil, &bad)); rec[0] != recRest {
		t.Errorf("raw JSON not valid UTF-8 as a call: %q, want an R record", rec)
	}
}

// The engine's own events of the common shape cross to JavaScript as E
// records, any other as JSON, and the shim reads each as JSON.parse reads
// its JSON (keys in order).
func TestEventRecords(t *testing.T) {
	ts := "2026-01-02T03:04:05.000Z"
	stamp := func(m omni.Message) omni.Message { m.Timestamp = ts; return m }
	end := func(status string) omni.Message {
		return omni.Event(omni.Payload{Type: omni.RequestEnd, Rest: &omni.Rest{Status: status}})
	}
	withError := end(omni.StatusFailed)
	withError.Payload.Rest.ErrorMessage = "boom"
	retried := end(omni.StatusFailed)
	retried.Payload.Rest.Attempt = 2
	in := 1500
	retried.Payload.Rest.RetryInMs = &in
	decoded, err := omni.Decode([]byte(`{"type":"event_msg","payload":{"type":"request_begin"}}`))
	if err != nil {
		t.Fatal(err)
	}
	sub := omni.RequestBeginMsg().WithOrigin("sub-1")
	odd := omni.ApprovalDecisionMsg("maybe", "c1")
	withRole := omni.RequestBeginMsg()
	withRole.Payload.Role = omni.RoleUser
	beginWithID := omni.RequestBeginMsg()
	beginWithID.Payload.ToolCallID = "c1"
	endWithDecision := end(omni.StatusCompleted)
	endWithDecision.Payload.Rest.Decision = "allow"
	tests := []struct {
		name string
		m    omni.Message
		tags string
	}{
		{"request_begin", omni.RequestBeginMsg(), "E"},
		{"request_begin, stamped", stamp(omni.RequestBeginMsg()), "tE"},
		{"request_end", end(omni.StatusCompleted), "E"},
		{"request_end, every status", end(omni.StatusAuth), "E"},
		{"request_end, another status", end("bogus"), "E"},
		{"request_end, a status of one letter", end("c"), "E"},
		{"request_end, no status", end(""), "J"},
		{"request_end with its error", withError, "J"},
		{"request_end with a retry", retried, "J"},
		{"approval_decision allow", stamp(omni.ApprovalDecisionMsg(omni.DecisionAllow, "call_é😀")), "tE"},
		{"approval_decision deny", omni.ApprovalDecisionMsg(omni.DecisionDeny, "c1"), "E"},
		{"approval_decision forbidden", omni.ApprovalDecisionMsg(omni.DecisionForbidden, ""), "E"},
		{"approval_decision of another word", odd, "J"},
		{"decoded", decoded, "J"},
		{"a subagent's", sub, "J"},
		{"with a role", withRole, "J"},
		{"request_begin with a tool_call_id", beginWithID, "J"},
		{"request_end with a decision", endWithDecision, "J"},
		{"abort", omni.AbortMsg("user"), "J"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w recordWriter
			b, _ := w.append(nil, &tt.m)
			if tags := recordTags(string(b)); tags != tt.tags {
				t.Errorf("tags %q, want %q (%q)", tags, tt.tags, b)
			}
			got := recordsJSON(t, string(b))
			want := "[" + string(tt.m.AppendJSON(nil)) + "]"
			if !reflect.DeepEqual(ordered(t, got), ordered(t, want)) {
				t.Errorf("\n got %s\nwant %s", got, want)
			}
		})
	}
}
