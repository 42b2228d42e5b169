package anthropic

import (
	"strconv"
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider/internal/ptest"
)

// The levels every adapter accepts become budget_tokens here; the ones
// every adapter refuses fail the request before it is sent.
func TestThinkingLevelsShared(t *testing.T) {
	for _, tc := range ptest.ThinkingLevels {
		tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(start, msgDelta, stop)}}}
		m, _ := New(Options{Transport: tr, Model: "m"})
		_, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}, ThinkingLevel: tc.Level})
		if out.Status != omni.StatusCompleted {
			t.Errorf("level %q: outcome %+v", tc.Level, out)
			continue
		}
		th, sent := tr.Body(t, 0)["thinking"].(map[string]any)
		if want := tc.Budget != 0; sent != want || (sent && th["budget_tokens"] != float64(tc.Budget)) {
			t.Errorf("level %q: thinking %v, want budget %d", tc.Level, th, tc.Budget)
		}
	}
	for _, level := range ptest.BadThinkingLevels {
		tr := &ptest.Transport{}
		m, _ := New(Options{Transport: tr, Model: "m"})
		_, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}, ThinkingLevel: level})
		if out.Status != omni.StatusFailed || !out.Permanent || !strings.Contains(out.ErrorMessage, strconv.Quote(level)) || !strings.Contains(out.ErrorMessage, ptest.ThinkingWant) {
			t.Errorf("level %q: outcome %+v", level, out)
		}
		if len(tr.Requests) != 0 {
			t.Errorf("level %q: %d requests sent, want none", level, len(tr.Requests))
		}
	}
}
