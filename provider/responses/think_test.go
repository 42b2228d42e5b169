package responses

import (
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider/internal/ptest"
)

// A server that leaves a reasoning model's thinking in its text (vLLM's
// Responses API without --reasoning-parser) sends <think>…</think> in
// output_text: split out as thinking, as in a Chat reply, streamed as it
// comes; with StartsInThinking the text is thinking until </think>; a
// reply with a reasoning item has its text as text.
func TestInlineThinking(t *testing.T) {
	msg := func(deltas ...string) []string {
		ev := []string{`{"type":"response.output_item.added","output_index":1,"item":{"type":"message"}}`}
		for _, d := range deltas {
			ev = append(ev, `{"type":"response.output_text.delta","output_index":1,"content_index":0,"delta":`+js(d)+`}`)
		}
		whole := strings.Join(deltas, "")
		return append(ev, `{"type":"response.output_text.done","output_index":1,"content_index":0,"text":`+js(whole)+`}`,
			`{"type":"response.output_item.done","output_index":1,"item":{"type":"message","content":[{"type":"output_text","text":`+js(whole)+`}]}}`)
	}
	reasoning := []string{`{"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning"}}`,
		`{"type":"response.reasoning_text.delta","output_index":0,"content_index":0,"delta":"Plan."}`,
		`{"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning"}}`}
	for _, tc := range []struct {
		opened       bool
		ev           []string
		think, text  string
		thinkPartial string // the thinking's deltas, joined by |
	}{
		{false, msg("<think>\nLet me", " see.\n</th", "ink>\n\nHi."), "Let me see.", "Hi.", "Let me| see."},
		{false, msg("Hi <think>x</think>"), "", "Hi <think>x</think>", ""},
		{true, msg("Okay,", " the user.</think>", "Hi."), "Okay, the user.", "Hi.", "Okay,| the user."},
		{true, msg("no close"), "no close", "", "no close"},
		{true, append(reasoning, msg("Hi </think>")...), "Plan.", "Hi </think>", "Plan."},
		{false, append(reasoning, msg("<think>x</think>y")...), "Plan.", "<think>x</think>y", "Plan."},
	} {
		tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(append(tc.ev, completed)...)}}}
		m, _ := New(Options{Transport: tr, Model: "m", StartsInThinking: tc.opened})
		c, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}})
		if out.Status != omni.StatusCompleted {
			t.Fatalf("outcome %+v", out)
		}
		var partial []string
		for _, m := range c.Msgs {
			if m.IsPartial() && m.Payload.Type == omni.PartialThinking && m.Payload.Body() != "" {
				partial = append(partial, m.Payload.Body())
			}
		}
		if th, tx, p := c.Text(omni.Thinking), c.Text(omni.Text), strings.Join(partial, "|"); th != tc.think || tx != tc.text || p != tc.thinkPartial {
			t.Errorf("%v opened %v: thinking %q (deltas %q), text %q; want %q (%q), %q", tc.ev, tc.opened, th, p, tx, tc.think, tc.thinkPartial, tc.text)
		}
	}
}
