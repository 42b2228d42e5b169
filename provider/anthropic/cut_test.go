package anthropic

import (
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider/internal/ptest"
)

// A reply the API cut short (stop_reason "max_tokens", "refusal",
// "model_context_window_exceeded") completes with the reason in
// Outcome.Cut; "end_turn" and "tool_use" leave it empty.
func TestCut(t *testing.T) {
	for reason, want := range map[string]string{"max_tokens": `stop_reason "max_tokens"`, "refusal": `stop_reason "refusal"`,
		"model_context_window_exceeded": `stop_reason "model_context_window_exceeded"`, "end_turn": "", "tool_use": ""} {
		tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(start,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Half a sen"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"message_delta","delta":{"stop_reason":"`+reason+`"},"usage":{"output_tokens":3}}`, stop)}}}
		m, _ := New(Options{Transport: tr, Model: "claude-test"})
		_, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("Go.")}})
		if out.Status != omni.StatusCompleted || out.Cut != want {
			t.Errorf("stop_reason %q: %+v, want completed, Cut %q", reason, out, want)
		}
	}
}
