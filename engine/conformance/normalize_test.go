package conformance

import (
	"fmt"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// at stamps m with the n-th millisecond: distinct n, distinct messages.
func at(n int, m omni.Message) omni.Message {
	m.Timestamp = fmt.Sprintf("2025-01-01T00:00:00.%03dZ", n)
	return m
}

func out(n int, id, text string) omni.Message {
	return at(n, omni.ToolOutput(id, text, omni.StatusCompleted))
}

func user(n int, text string) omni.Message { return at(n, omni.UserText(text)) }

// held builds a heldSession in which the messages of given were supplied
// by the scenario and every other message was built by the engine.
func held(calls []*llmCall, given ...omni.Message) *heldSession {
	set := map[string]bool{}
	for _, m := range given {
		set[m.Timestamp] = true
	}
	return &heldSession{
		calls:       calls,
		given:       func(m *omni.Message) bool { return set[m.Timestamp] },
		toolOutputs: map[string][]omni.Message{},
		fired:       map[string]int{},
	}
}

// sameList compares normalized lists, timestamps included.
func sameList(t *testing.T, what string, got, want []omni.Message) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d messages %v, want %d %v", what, len(got), texts(got), len(want), texts(want))
	}
	for i := range got {
		if !sameMessage(&got[i], &want[i]) {
			t.Fatalf("%s [%d]: got %s, want %s", what, i, show(valueOf(got[i])), show(valueOf(want[i])))
		}
	}
}

func texts(msgs []omni.Message) []string {
	var s []string
	for _, m := range msgs {
		s = append(s, m.Payload.Text+m.Payload.Output)
	}
	return s
}

func TestRuleRetriedBlockLost(t *testing.T) {
	t.Parallel()
	prompt := user(1, "Is the host up?")
	block := user(5, "[turn_retried]\n  [tool_call name=\"ping\" id=\"k1\"]{}[/tool_call]\n[/turn_retried]")
	supplied := user(6, block.Payload.Text) // the same text, typed by the user
	angle := user(7, "<turn_retried>\n  [text]x[/text]\n</turn_retried>")
	h := held(nil, prompt, supplied, angle)
	got := h.expand([]omni.Message{prompt, block, supplied, angle}, 0)
	sameList(t, "expand", got, []omni.Message{prompt, supplied, angle})
	if h.fired["ruleRetriedBlockLost"] != 1 {
		t.Errorf("fired %v", h.fired)
	}
}

func TestRuleAbortedInputRestored(t *testing.T) {
	t.Parallel()
	p1, prompt, img := out(1, "P1", "todo"), user(2, "Fix it"), at(3, omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.ImageURL, Role: omni.RoleUser, StopReason: omni.StatusCompleted, Rest: &omni.Rest{ImageURL: "data:x"}}})
	block := user(10, "[turn_aborted]\n  [user_input]Fix it[/user_input]\n[/turn_aborted]")
	next := user(11, "Go on")
	aborted := &llmCall{input: []omni.Message{p1, prompt, img}, outcome: engine.Outcome{Status: omni.StatusAborted}, ended: true}

	// The case-B carry-over becomes the aborted request's input: its text
	// back in place, the image E-9.5 drops restored.
	h := held([]*llmCall{aborted}, p1, prompt, img, next)
	sameList(t, "carry", h.normalizedCarry([]omni.Message{p1, block}), []omni.Message{p1, prompt, img})
	sameList(t, "next input", h.expand([]omni.Message{p1, block, next}, 1), []omni.Message{p1, prompt, img, next})

	// Nested: a request carrying that carry-over was aborted in turn.
	block2 := user(20, "[turn_aborted]\n  [user_input]Go on[/user_input]\n[/turn_aborted]")
	second := &llmCall{input: []omni.Message{p1, block, next}, outcome: engine.Outcome{Status: omni.StatusFailed}, ended: true}
	h = held([]*llmCall{aborted, second}, p1, prompt, img, next)
	sameList(t, "nested", h.normalizedCarry([]omni.Message{p1, block2}), []omni.Message{p1, prompt, img, next})
	if h.fired["ruleAbortedInputRestored"] != 2 {
		t.Errorf("fired %v", h.fired)
	}

	// Not that carry-over: nothing is rewritten.
	other := out(4, "P2", "x")
	for name, tc := range map[string]struct {
		calls []*llmCall
		msgs  []omni.Message
	}{
		"outputs differ":        {[]*llmCall{aborted}, []omni.Message{other, block}},
		"previous completed":    {[]*llmCall{{input: aborted.input, outcome: engine.Outcome{Status: omni.StatusCompleted}, ended: true}}, []omni.Message{p1, block}},
		"no previous request":   {nil, []omni.Message{p1, block}},
		"block the user typed":  {[]*llmCall{aborted}, []omni.Message{p1, at(10, block)}},
		"outputs not before it": {[]*llmCall{aborted}, []omni.Message{block, p1}},
	} {
		given := []omni.Message{p1, other}
		if name == "block the user typed" {
			given = append(given, block)
		}
		h := held(tc.calls, given...)
		sameList(t, name, h.expand(tc.msgs, len(tc.calls)), tc.msgs)
		if len(h.fired) != 0 {
			t.Errorf("%s: fired %v", name, h.fired)
		}
	}
}

func TestRuleCompactionTextSentOnce(t *testing.T) {
	t.Parallel()
	ask := "Summarize inside [summary]...[/summary]."
	prompt, repair := user(5, ask), at(6, omni.ToolOutput("c1", engine.CompactionRepair, omni.StatusFailed))
	guidance := user(7, engine.CompactionGuidance)
	typed := user(8, ask) // the same text supplied by the scenario
	calls := []*llmCall{
		{input: []omni.Message{prompt}, outcome: engine.Outcome{Status: omni.StatusCompleted}, ended: true},
		{input: []omni.Message{repair, guidance, prompt}, outcome: engine.Outcome{Status: omni.StatusTimeout}, ended: true},
		{input: []omni.Message{repair, guidance, prompt, typed}, outcome: engine.Outcome{Status: omni.StatusCompleted}, ended: true},
	}
	h := held(calls, typed)
	h.compactionPrompt = &ask
	sameList(t, "first", h.expand(calls[0].input, 0), []omni.Message{prompt})
	sameList(t, "second", h.expand(calls[1].input, 1), []omni.Message{repair, guidance})
	sameList(t, "third", h.expand(calls[2].input, 2), []omni.Message{repair, typed})

	// Without compaction configured only the §18 guidance is recognized.
	h = held(calls, typed)
	sameList(t, "no compaction", h.expand(calls[2].input, 2), []omni.Message{repair, prompt, typed})
}

func TestRuleSupersededOutputsReplayed(t *testing.T) {
	t.Parallel()
	first, second, other := out(3, "d1", "first"), out(4, "d1", "second"), out(5, "d2", "ok")
	h := held(nil, first, second, other)
	h.toolOutputs["d1"] = []omni.Message{first, second}
	h.toolOutputs["d2"] = []omni.Message{other}
	sameList(t, "expand", h.expand([]omni.Message{second, other}, 0), []omni.Message{first, second, other})

	// An engine-built output (a denial) is never expanded.
	denial := at(9, omni.ToolOutput("d1", engine.DeniedByUser, omni.StatusAborted))
	h.toolOutputs["d1"] = append(h.toolOutputs["d1"], denial)
	sameList(t, "denial", h.expand([]omni.Message{denial}, 0), []omni.Message{denial})
}

func TestRuleResumePlaceholder(t *testing.T) {
	t.Parallel()
	caseA := at(4, omni.ToolOutput("Y", engine.InterruptedByUser, omni.StatusAborted))
	supplied := at(5, omni.ToolOutput("Z", engine.InterruptedByUser, omni.StatusAborted))
	h := held(nil, supplied)
	want := at(4, omni.ToolOutput("Y", engine.InterruptedByExit, omni.StatusAborted))
	sameList(t, "expand", h.expand([]omni.Message{caseA, supplied}, 0), []omni.Message{want, supplied})
}

func TestRuleOutputsInTraceOrder(t *testing.T) {
	t.Parallel()
	text, a, b, steer := user(1, "go"), out(7, "A", "a"), out(5, "B", "b"), user(9, "[user_steering]\nx\n[/user_steering]")
	ph := at(2, omni.ToolOutput("C", engine.InterruptedByExit, omni.StatusAborted))
	got := ruleOutputsInTraceOrder([]omni.Message{text, a, ph, b, steer})
	sameList(t, "order", got, []omni.Message{text, b, ph, a, steer})
}

func TestRulePlaceholderPlacement(t *testing.T) {
	t.Parallel()
	x := out(3, "X", "downloading...")
	ph := at(4, omni.ToolOutput("Y", engine.InterruptedByExit, omni.StatusAborted))
	again := user(5, "Please continue")
	sameList(t, "history", ruleHistoryPlaceholdersFirst([]omni.Message{x, ph, again}), []omni.Message{ph, x, again})
	sameList(t, "carry", ruleCarryPlaceholdersLast([]omni.Message{x, ph, again}), []omni.Message{x, again, ph})
}

func TestNormalizedHistory(t *testing.T) {
	t.Parallel()
	prompt, x := user(1, "Download"), out(6, "X", "downloading...")
	call := at(2, omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.ToolCall, Role: omni.RoleAssistant, Name: "dl", Arguments: "{}", ToolCallID: "X", StopReason: omni.StatusCompleted}})
	partial := at(3, omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.PartialText, Role: omni.RoleAssistant, EventType: "delta", Text: "a", StopReason: omni.StatusCompleted}})
	usage := at(4, omni.Event(omni.Payload{Type: omni.TokenUsage}))
	caseA := at(8, omni.ToolOutput("Y", engine.InterruptedByUser, omni.StatusAborted))
	answer := at(9, omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.Text, Role: omni.RoleAssistant, Text: "Later.", StopReason: omni.StatusCompleted}})
	done := engine.Outcome{Status: omni.StatusCompleted}
	calls := []*llmCall{
		{context: 1, input: []omni.Message{prompt}, emitted: []omni.Message{partial, call, usage}, outcome: done, ended: true},
		{context: 1, input: []omni.Message{x}, emitted: []omni.Message{answer}, outcome: engine.Outcome{Status: omni.StatusAborted}, ended: true},
		{context: 1, input: []omni.Message{x, caseA}, emitted: []omni.Message{answer, usage}, outcome: done, ended: true},
		{context: 2, input: []omni.Message{prompt}, emitted: []omni.Message{answer}, outcome: done, ended: true},
	}
	h := held(calls, prompt, x, call, partial, usage, answer)
	ph := at(8, omni.ToolOutput("Y", engine.InterruptedByExit, omni.StatusAborted))
	sameList(t, "context 1", h.normalizedHistory(1), []omni.Message{prompt, call, ph, x, answer})
	sameList(t, "context 2", h.normalizedHistory(2), []omni.Message{prompt, answer})
	sameList(t, "context 3", h.normalizedHistory(3), []omni.Message{})
}

func TestCompareResume(t *testing.T) {
	t.Parallel()
	a, b := user(1, "a"), user(2, "b")
	sum := user(3, "[context_summary]\ns\n[/context_summary]")
	base := resumeView{history: []omni.Message{a}, carry: []omni.Message{b}, summary: &sum, turns: 2,
		tokens: omni.TokenCounts{Output: 5, Total: 90}, requestTotal: 90, closed: true, metaWritten: true}
	restamped := at(99, a)
	same := base
	same.history = []omni.Message{restamped} // timestamps are ignored
	if d := compareResume(base, same); d != "" {
		t.Errorf("equal views differ: %s", d)
	}
	other := user(4, "other")
	for want, mutate := range map[string]func(v *resumeView){
		"history length":     func(v *resumeView) { v.history = nil },
		"carry_over [0]":     func(v *resumeView) { v.carry = []omni.Message{a} },
		"pending_summary":    func(v *resumeView) { v.summary = nil },
		"pending_summary (":  func(v *resumeView) { v.summary = &other },
		"session_turns":      func(v *resumeView) { v.turns = 3 },
		"session_tokens":     func(v *resumeView) { v.tokens.CacheRead = 1 },
		"last_request_total": func(v *resumeView) { v.requestTotal = 0 },
		"context_closed":     func(v *resumeView) { v.closed = false },
		"meta_written":       func(v *resumeView) { v.metaWritten = false },
	} {
		got := base
		mutate(&got)
		if d := compareResume(base, got); len(d) < len(want) || d[:len(want)] != want {
			t.Errorf("%s: difference %q", want, d)
		}
	}
}
