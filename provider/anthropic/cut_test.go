package anthropic

import (
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider/internal/ptest"
)

// A reply the API cut short (stop_reason "max_tokens", "refusal",
// "model_context_window_exceeded", "pause_turn") completes with the
// reason in Outcome.Cut; "end_turn", "tool_use" and "stop_sequence" leave
// it empty. A turn its server tools paused completed as if whole: the run
// ended on it without a word.
func TestCut(t *testing.T) {
	for reason, want := range map[string]string{"max_tokens": `stop_reason "max_tokens"`, "refusal": `stop_reason "refusal"`,
		"model_context_window_exceeded": `stop_reason "model_context_window_exceeded"`,
		"pause_turn":                    `stop_reason "pause_turn"`, "end_turn": "", "tool_use": "", "stop_sequence": ""} {
		tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(start,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Half a sen"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"message_delta","delta":{"stop_reason":"`+reason+`"},"usage":{"output_tokens":3}}`, stop)}}}
		m, _ := New(Options{Transport: tr, Model: "claude-test"})
		_, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("Go.")}})
		if out.Status != omni.StatusCompleted || out.Cut != want || len(tr.Requests) != 1 {
			t.Errorf("stop_reason %q: %+v after %d requests, want completed, Cut %q, one request", reason, out, len(tr.Requests), want)
		}
	}
}

// A refusal's stop_details (on message_delta beside the stop reason) say
// why: the explanation follows the reason in Outcome.Cut, which the
// engine's llm diagnostic quotes; it was left out, and the notice said
// only "refusal". A long one is cut.
func TestCutRefusalExplained(t *testing.T) {
	for why, want := range map[string]string{
		"This request was declined because it could enable cyber harm.": `stop_reason "refusal": This request was declined because it could enable cyber harm.`,
		strings.Repeat("é", 400) + "\nmore":                             `stop_reason "refusal": ` + strings.Repeat("é", 150) + "…",
	} {
		tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(start,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello.."}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"message_delta","delta":{"stop_reason":"refusal","stop_sequence":null,"stop_details":{"type":"refusal","category":"cyber","explanation":`+js(why)+`}},"usage":{"output_tokens":3}}`, stop)}}}
		m, _ := New(Options{Transport: tr, Model: "claude-test"})
		_, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("Go.")}})
		if out.Status != omni.StatusCompleted || out.Cut != want {
			t.Errorf("%+v, want completed, Cut %q", out, want)
		}
	}
}
