package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/floehq/floe/transport/server"
)

// A refused body is described in the client's terms: the key, the JSON
// type it wants and the one it got; never a Go type or a package prefix.
func TestBadBodyMessages(t *testing.T) {
	e := newEnv(t, server.Config{})
	id := e.create("ask")
	s := "/api/sessions/" + id
	for _, tc := range []struct{ method, path, body, code, msg string }{
		{"POST", s + "/tasks", `{"input":5}`, "bad_request", "input: want an array of OmniMessages or a string, got number"},
		{"POST", s + "/tasks", `{"input":{}}`, "bad_request", "input: want an array of OmniMessages or a string, got object"},
		{"POST", s + "/tasks", `{}`, "bad_request", "input: want an array of OmniMessages or a string, got nothing"},
		{"POST", s + "/tasks", `{"input":null}`, "bad_request", "input: want an array of OmniMessages or a string, got nothing"},
		{"POST", s + "/tasks", `{"input":" "}`, "bad_request", "input: want an array of OmniMessages or a non-empty string, got an empty string"},
		{"POST", s + "/tasks", `{"input":[{"type":"model_msg","payload":{"type":"text","role":"user","text":5}}]}`, "bad_request", "input[0].payload.text: want string, got number"},
		{"POST", s + "/tasks", `{"input":[5]}`, "bad_request", "input[0]: message is not a JSON object (got number)"},
		{"POST", s + "/tasks", `{"input":[{"type":"model_msg","payload":{"type":"text"}}]}`, "bad_request", "input[0].payload.role: missing"},
		{"POST", s + "/tasks", `[]`, "bad_json", "request body: want a JSON object, got array"},
		{"POST", s + "/tasks", `"hi"`, "bad_json", "request body: want a JSON object, got string"},
		{"POST", s + "/tasks", `7`, "bad_json", "request body: want a JSON object, got number"},
		{"POST", s + "/tasks", `{"input":"hi","bogus":1}`, "bad_json", `request body: unknown field "bogus" (want input, thinkingLevel or queueIfBusy)`},
		{"POST", s + "/tasks", `{"input":"hi","input":"again"}`, "bad_json", "input: given twice"},
		{"POST", s + "/tasks", `{"input":"hi","thinkingLevel":5}`, "bad_json", "thinkingLevel: want a string, got number"},
		{"POST", s + "/tasks", `{"input":"hi","thinkingLevel":"ultra"}`, "bad_request", `thinkingLevel: unknown thinking level "ultra" (want none, off, minimal, low, medium, high, max or a budget of at least 1024 tokens)`},
		{"POST", s + "/tasks", `{"input":"hi","queueIfBusy":"yes"}`, "bad_json", "queueIfBusy: want a boolean, got string"},
		{"POST", s + "/tasks", `{"input":"hi"}]`, "bad_json", "request body: data after the JSON object"},
		{"POST", s + "/tasks", `{"input":"hi"`, "bad_json", "request body: invalid JSON at byte 13: unexpected end of JSON input"},
		{"POST", s + "/tasks", `{input:"hi"}`, "bad_json", "request body: invalid JSON at byte 2: invalid character 'i' looking for beginning of object key string"},
		{"POST", s + "/steer", `{"text":"x","images":"u"}`, "bad_json", "images: want an array of strings, got string"},
		{"POST", s + "/steer", `{"text":"x","images":["data:,x",1]}`, "bad_json", "images[1]: want a string, got number"},
		{"POST", s + "/steer", `{"text":"x","images":[null]}`, "bad_json", "images[0]: want a string, got null"},
		{"POST", s + "/abort", `{"now":true}`, "bad_json", `request body: unknown field "now" (this request takes no fields)`},
		{"POST", s + "/abort", `[]`, "bad_json", "request body: want a JSON object, got array"},
		{"PATCH", s, `{"approvalMode":3}`, "bad_json", "approvalMode: want a string, got number"},
		{"PATCH", s, `{"mode":"ask"}`, "bad_json", `request body: unknown field "mode" (want approvalMode)`},
		{"POST", "/api/sessions", `{"id":3}`, "bad_json", "id: want a string, got number"},
		{"POST", s + "/approvals/call_1", `{"decision":false}`, "bad_json", "decision: want a string, got boolean"},
	} {
		status, body := e.do(tc.method, tc.path, tc.body)
		var eb struct {
			Error struct{ Code, Message string }
		}
		json.Unmarshal(body, &eb)
		if status != 400 || eb.Error.Code != tc.code || eb.Error.Message != tc.msg {
			t.Errorf("%s …%s %s:\n got %d %s %q\nwant 400 %s %q", tc.method, tc.path[len(tc.path)-6:], tc.body, status, eb.Error.Code, eb.Error.Message, tc.code, tc.msg)
		}
	}
}

// Every route that takes a body refuses each wrong shape with a message
// free of Go and package internals.
func TestBadBodyMessagesHideInternals(t *testing.T) {
	e := newEnv(t, server.Config{})
	id := e.create("ask")
	s := "/api/sessions/" + id
	routes := [][2]string{
		{"POST", "/api/sessions"}, {"PATCH", s}, {"POST", s + "/tasks"}, {"POST", s + "/steer"},
		{"POST", s + "/abort"}, {"POST", s + "/retry-now"}, {"POST", s + "/compact"}, {"POST", s + "/approvals/call_1"},
	}
	bodies := []string{`[]`, `"x"`, `5`, `true`, `null`, `{"x":1}`, `{`, `{"id":1,"approvalMode":[],"input":{},"thinkingLevel":{},"queueIfBusy":1,"text":[],"images":{},"decision":2}`}
	for _, r := range routes {
		for _, b := range bodies {
			status, body := e.do(r[0], r[1], b)
			var eb struct {
				Error struct{ Code, Message string }
			}
			json.Unmarshal(body, &eb)
			msg := eb.Error.Message
			if status != 400 || msg == "" {
				t.Errorf("%s %s %s: %d %s, want 400", r[0], r[1], b, status, body)
			}
			for _, leak := range []string{"Go ", "struct", "unmarshal", "json:", "omni:", "RawMessage", "[]string", "of type"} {
				if strings.Contains(msg, leak) {
					t.Errorf("%s %s %s: message %q shows %q", r[0], r[1], b, msg, leak)
				}
			}
		}
	}
}
