package playground

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider"
)

// Every reasoning effort the settings offer is a level every adapter
// reads, as the same named level; anything else is refused, naming it and
// the choices.
func TestCheckThinkingLevel(t *testing.T) {
	for _, l := range ThinkingLevels {
		if err := CheckThinkingLevel(l); err != nil {
			t.Errorf("CheckThinkingLevel(%q): %v", l, err)
		}
		th, err := provider.ParseThinking("test", l)
		if err != nil || th.Effort != l {
			t.Errorf("the adapters read %q as %+v, %v", l, th, err)
		}
	}
	for _, l := range []string{"ultra", "High", " low", "xhigh", "none", "4096"} {
		err := CheckThinkingLevel(l)
		if err == nil {
			t.Errorf("CheckThinkingLevel(%q) accepted it", l)
			continue
		}
		want := "Settings: the reasoning effort \u201c" + l + "\u201d is not one the page offers; choose default, minimal, low, medium, high or max."
		if err.Error() != want {
			t.Errorf("CheckThinkingLevel(%q) = %q, want %q", l, err, want)
		}
	}
	if _, _, err := Open(Options{ThinkingLevel: "ultra"}); err == nil || !strings.Contains(err.Error(), "ultra") {
		t.Errorf("Open with an unknown level: %v", err)
	}
}

// A session's thinking level goes with every run's requests, its
// subagent's child's included (the child runs without run options of its
// own); a compaction names none.
func TestThinkingLevelEveryRequest(t *testing.T) {
	var mu sync.Mutex
	var got []string
	var parentTurns int
	llm := func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		mu.Lock()
		defer mu.Unlock()
		who := "parent"
		switch {
		case p.SystemPrompt == SubagentPrompt:
			who = "child"
		case len(p.NewMessages) > 0 && p.NewMessages[len(p.NewMessages)-1].Payload.Text == CompactionPrompt:
			who = "compaction"
		}
		got = append(got, who+":"+p.ThinkingLevel)
		n := omni.TokenCounts{Output: 2, Total: 12}
		defer emit(omni.TokenUsageMsg(n, n)) // last (E-7.2)
		if who == "parent" {
			parentTurns++
			if parentTurns == 1 {
				emit(omni.ToolCallMsg("call_1", ToolSubagent, `{"task":"count the notes"}`))
				return engine.Outcome{Status: omni.StatusCompleted}
			}
		}
		emit(omni.AssistantText("done", omni.StatusCompleted))
		return engine.Outcome{Status: omni.StatusCompleted}
	}
	sess, _, err := Open(Options{
		LLM: engine.LLMFunc(llm), NewLLM: func(omni.TokenCounts) engine.LLM { return engine.LLMFunc(llm) },
		Provider: "openai-responses", Model: "gpt-test", ThinkingLevel: "high",
	})
	if err != nil {
		t.Fatal(err)
	}
	r := NewRunner(sess)
	r.SetThinkingLevel("high")
	collect(t, r, "hand it on", func(omni.Message) string { return omni.DecisionAllow })
	compactNow(t, r)
	if want := []string{"parent:high", "child:high", "parent:high", "compaction:"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("requests and their levels %v, want %v", got, want)
	}
}
