package openai

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider/internal/ptest"
)

// The white space a reply opens with, held while it may precede <think>,
// goes out before a tool call that follows it (vLLM's hermes parser sends
// "\n\n" before a call), and a reply's thinking in tags is a thinking
// message before its text, in order.
func TestInlineThinkingOrder(t *testing.T) {
	call := chunk(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}`)
	for _, tc := range []struct {
		chunks []string
		want   string
	}{
		{[]string{chunk(`{"content":"\n\n"}`), call, finish, "[DONE]"}, "text:\n\n|tool_call:|token_usage:"},
		{[]string{chunk(`{"content":"<think>a"}`), chunk(`{"content":"\n</th"}`), chunk(`{"content":"ink>b"}`), call, finish, "[DONE]"}, "thinking:a|text:b|tool_call:|token_usage:"},
		{[]string{chunk(`{"content":"<thi"}`), finish}, "text:<thi|token_usage:"}, // no [DONE]
	} {
		tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: ptest.SSE(tc.chunks...)}}}
		c, out := run(t, newModel(t, tr, Options{}), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}})
		if out.Status != omni.StatusCompleted {
			t.Fatalf("outcome %+v", out)
		}
		var got []string
		for _, m := range c.Complete() {
			var v struct {
				Payload struct{ Type, Text, Thinking string }
			}
			json.Unmarshal([]byte(m), &v)
			got = append(got, v.Payload.Type+":"+v.Payload.Text+v.Payload.Thinking)
		}
		if g := strings.Join(got, "|"); g != tc.want {
			t.Errorf("%q: complete messages %q, want %q", tc.chunks, g, tc.want)
		}
	}
}

// StartsInThinking (a chat template that opens the thinking, the reply
// holding only </think>): the content is thinking until </think>, each
// piece streamed as it comes; a server that sends the thinking in a
// reasoning field has its content as text.
func TestStartsInThinking(t *testing.T) {
	for _, tc := range []struct {
		chunks []string
		want   string
	}{
		{[]string{chunk(`{"content":"Okay, the"}`), chunk(`{"content":" user.\n</th"}`), chunk(`{"content":"ink>\n\nHello."}`), finish, "[DONE]"},
			"partial_thinking:Okay, the|partial_thinking: user.|thinking:Okay, the user.|partial_text:Hello.|text:Hello.|token_usage:"},
		{[]string{chunk(`{"content":"\n"}`), chunk(`{"reasoning_content":"Okay."}`), chunk(`{"content":"Hello </think>"}`), finish, "[DONE]"},
			"partial_thinking:Okay.|thinking:Okay.|partial_text:\n|partial_text:Hello </think>|text:\nHello </think>|token_usage:"},
		{[]string{chunk(`{"content":"no close"}`), finish, "[DONE]"}, "partial_thinking:no close|thinking:no close|token_usage:"},
	} {
		tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: ptest.SSE(tc.chunks...)}}}
		c, out := run(t, newModel(t, tr, Options{StartsInThinking: true}), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}})
		if out.Status != omni.StatusCompleted {
			t.Fatalf("outcome %+v", out)
		}
		var got []string
		for _, m := range c.Msgs {
			if b := m.Payload.Body(); b != "" || !m.IsPartial() {
				got = append(got, m.Payload.Type+":"+b)
			}
		}
		if g := strings.Join(got, "|"); g != tc.want {
			t.Errorf("%q: messages %q,\nwant %q", tc.chunks, g, tc.want)
		}
	}
}
