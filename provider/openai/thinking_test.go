package openai

import (
	"strconv"
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider/internal/ptest"
)

// The thinking level is read as every adapter reads it: a known level
// becomes reasoning_effort ("max" as "xhigh", a budget as its named level,
// none as nothing); any other fails the request, permanently, before it is
// sent, naming the level and the accepted ones. Before, any string went
// to the provider as reasoning_effort.
func TestThinkingLevels(t *testing.T) {
	for _, tc := range ptest.ThinkingLevels {
		tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: ptest.SSE(chunk(`{"content":"ok"}`), finish, "[DONE]")}}}
		_, out := run(t, newModel(t, tr, Options{}), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}, ThinkingLevel: tc.Level})
		if out.Status != omni.StatusCompleted {
			t.Errorf("level %q: outcome %+v", tc.Level, out)
			continue
		}
		effort, sent := tr.Body(t, 0)["reasoning_effort"]
		if want := tc.Effort != ""; sent != want || (sent && effort != tc.Effort) {
			t.Errorf("level %q: reasoning_effort %v (sent %v), want %q", tc.Level, effort, sent, tc.Effort)
		}
	}
	for _, level := range ptest.BadThinkingLevels {
		tr := &ptest.Transport{}
		_, out := run(t, newModel(t, tr, Options{}), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}, ThinkingLevel: level})
		if out.Status != omni.StatusFailed || !out.Permanent || !strings.Contains(out.ErrorMessage, strconv.Quote(level)) || !strings.Contains(out.ErrorMessage, ptest.ThinkingWant) {
			t.Errorf("level %q: outcome %+v", level, out)
		}
		if len(tr.Requests) != 0 {
			t.Errorf("level %q: %d requests sent, want none", level, len(tr.Requests))
		}
	}
}
