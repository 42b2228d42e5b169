package ptest

import (
	"context"
	"reflect"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// Stream runs one request of the model that newModel builds on a
// Transport replaying body (split into reads of split+1 bytes) and checks
// the contract every stream must keep, whatever its bytes: valid
// messages in streaming discipline, no fragment left open, an outcome
// that is a stop reason, token_usage last on completion, unique tool call
// ids; and the same complete messages and outcome as the body read whole
// gives: where the reads cut it does not change what it says.
func Stream(t *testing.T, newModel func(*Transport) engine.LLM, body []byte, split uint8) {
	n := int(split%32) + 1
	var chunks []string
	for s := string(body); s != ""; {
		k := min(n, len(s))
		chunks = append(chunks, s[:k])
		s = s[k:]
	}
	c, out := run(t, newModel, chunks)
	if whole, wout := run(t, newModel, []string{string(body)}); !reflect.DeepEqual(c.Complete(), whole.Complete()) || out != wout {
		t.Errorf("in reads of %d bytes:\n%q\n%+v\nread whole:\n%q\n%+v", n, c.Complete(), out, whole.Complete(), wout)
	}
	switch out.Status {
	case omni.StatusCompleted:
		if last := c.Last(); !last.IsEvent(omni.TokenUsage) {
			t.Errorf("completed without token_usage last")
		}
	case omni.StatusFailed, omni.StatusTimeout, omni.StatusMalformed, omni.StatusAuth:
		if out.ErrorMessage == "" {
			t.Errorf("outcome %s without a message", out.Status)
		}
	default:
		t.Errorf("outcome %+v", out)
	}
	seen := map[string]bool{}
	for _, m := range c.Calls() {
		if id := m.Payload.ToolCallID; id == "" || seen[id] {
			t.Errorf("tool call id %q empty or repeated", id)
		} else {
			seen[id] = true
		}
	}
}

func run(t *testing.T, newModel func(*Transport) engine.LLM, chunks []string) (*Collector, engine.Outcome) {
	tr := &Transport{Replies: []Reply{{Chunks: chunks}}}
	c := &Collector{T: t}
	out := newModel(tr).StreamGenerate(context.Background(), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("fuzz")}}, c.Emit)
	c.End()
	return c, out
}
