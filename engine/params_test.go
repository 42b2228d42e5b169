package engine_test

import (
	"context"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// Every request hands the model the session's system prompt and tool list
// (GenerateParams), so an adapter needs nothing passed to it separately.
func TestGenerateParamsCarrySystemPromptAndTools(t *testing.T) {
	tools := []omni.ToolDefinition{{Name: "clock", Description: "Tell the time", Parameters: omni.RawJSON(`{"type":"object"}`)}}
	var got []engine.GenerateParams
	llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		got = append(got, p)
		emit(omni.AssistantText("hi", omni.StatusCompleted))
		emit(omni.TokenUsageMsg(omni.TokenCounts{Total: 1}, omni.TokenCounts{Total: 1}))
		return engine.Outcome{Status: omni.StatusCompleted}
	})
	meta := omni.Message{Type: omni.TypeSessionMeta, Payload: omni.Payload{
		Rest: &omni.Rest{SessionID: "params", Provider: "demo", ModelID: "scripted", ModelContextWindow: []byte("8192"), SystemPrompt: "Be brief.", AgentState: "mem", Workspace: "mem"},
	}}
	s, err := engine.New(engine.Config{Meta: meta, LLM: llm, ToolList: tools})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		stream, err := s.Run(context.Background(), []omni.Message{omni.UserText("hello")}, engine.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for range stream {
		}
	}
	if len(got) != 2 {
		t.Fatalf("model called %d times, want 2", len(got))
	}
	for i, p := range got {
		if p.SystemPrompt != "Be brief." {
			t.Errorf("request %d: SystemPrompt = %q, want %q", i, p.SystemPrompt, "Be brief.")
		}
		if len(p.Tools) != 1 || p.Tools[0].Name != "clock" || string(p.Tools[0].Parameters) != `{"type":"object"}` {
			t.Errorf("request %d: Tools = %+v, want the session's tool list", i, p.Tools)
		}
	}
}
