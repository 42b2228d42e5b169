package responses

import (
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider/internal/ptest"
)

// A response.incomplete completes with its reason in Outcome.Cut;
// response.completed leaves it empty.
func TestCut(t *testing.T) {
	for end, want := range map[string]string{
		`{"type":"response.incomplete","response":{"id":"resp_1","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":5,"output_tokens":3,"total_tokens":8}}}`: `incomplete: "max_output_tokens"`,
		`{"type":"response.incomplete","response":{"id":"resp_1","status":"incomplete"}}`:                                                                                                                   "incomplete",
		completed: "",
	} {
		tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(
			`{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}`,
			`{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"Half a sen"}`,
			end)}}}
		m, err := New(Options{Transport: tr, Model: "gpt-test"})
		if err != nil {
			t.Fatal(err)
		}
		_, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("Go.")}})
		if out.Status != omni.StatusCompleted || out.Cut != want {
			t.Errorf("%s: %+v, want completed, Cut %q", end, out, want)
		}
	}
}
