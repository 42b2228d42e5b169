package openai

import (
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider/internal/ptest"
)

// A reply the provider cut short (finish_reason "length",
// "content_filter", "sensitive", Zhipu's safety review, or "model_length",
// Mistral's context window reached) completes with
// the reason in Outcome.Cut; "stop" and "tool_calls" leave it empty.
func TestCut(t *testing.T) {
	for reason, want := range map[string]string{"length": `finish_reason "length"`, "content_filter": `finish_reason "content_filter"`, "sensitive": `finish_reason "sensitive"`, "model_length": `finish_reason "model_length"`, "stop": "", "tool_calls": ""} {
		tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: ptest.SSE(chunk(`{"role":"assistant","content":"Half a sen"}`),
			`{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"`+reason+`"}]}`, usage(5, 3, 0), "[DONE]")}}}
		_, out := run(t, newModel(t, tr, Options{}), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("Go.")}})
		if out.Status != omni.StatusCompleted || out.Cut != want {
			t.Errorf("finish_reason %q: %+v, want completed, Cut %q", reason, out, want)
		}
	}
}
