package engine_test

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// A complete native embedding: an LLM and a tool written in Go, an
// approver, and a run consumed with for ... range.
func Example() {
	turn := 0
	llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		turn++
		if turn == 1 { // ask for the clock tool
			emit(omni.ToolCallMsg("call-1", "clock", `{}`))
		} else { // answer with what the tool said
			emit(omni.AssistantText("It is "+p.NewMessages[0].Payload.Output+".", omni.StatusCompleted))
		}
		emit(omni.TokenUsageMsg(omni.TokenCounts{Total: 10 * int64(turn)}, omni.TokenCounts{Total: 10}))
		return engine.Outcome{Status: omni.StatusCompleted}
	})
	tools := engine.EnvironmentFunc(func(ctx context.Context, req engine.ToolRequest, emit func(omni.Message)) error {
		emit(omni.ToolOutput(req.ToolCall.Payload.ToolCallID, "noon", omni.StatusCompleted))
		return nil
	})
	meta := omni.Meta{SessionID: "example", Provider: "demo", ModelID: "scripted", ContextWindow: 8192, SystemPrompt: "Be brief.", AgentState: "mem", Workspace: "mem"}.Message()
	session, err := engine.New(engine.Config{Meta: meta, LLM: llm, Environment: tools})
	if err != nil {
		fmt.Println(err)
		return
	}
	approve := func(ctx context.Context, call omni.Message) (engine.Decision, error) {
		return omni.DecisionAllow, nil
	}
	stream, err := session.Run(context.Background(), []omni.Message{omni.UserText("What time is it?")}, engine.RunOptions{Approve: approve})
	if err != nil {
		fmt.Println(err)
		return
	}
	// The tool's output may arrive before or after the request's
	// token_usage and request_end (arrival order); it always arrives
	// before the next request.
	for m := range stream {
		switch p := m.Payload; p.Type {
		case omni.Text:
			fmt.Println("assistant:", p.Text)
		case omni.ToolCall:
			fmt.Println("tool call:", p.Name)
		case omni.ApprovalDecision:
			fmt.Println("decision:", p.Decision())
		case omni.ToolCallOutput:
			fmt.Println("tool output:", p.Output)
		}
	}
	// Output:
	// tool call: clock
	// decision: allow
	// tool output: noon
	// assistant: It is noon.
}

// An adapter that decodes several messages at once (here, a whole
// streamed answer) hands them over with EmitBatch: the same stream as
// emit, one message at a time, with one hold of the stream's lock for
// the fragments among them.
func ExampleGenerateParams_EmitBatch() {
	llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		chunk := []omni.Message{
			omni.Partial(omni.PartialText, omni.EventStart, "", "", "", omni.StatusCompleted),
			omni.Partial(omni.PartialText, omni.EventDelta, "Hello, ", "", "", omni.StatusCompleted),
			omni.Partial(omni.PartialText, omni.EventDelta, "world.", "", "", omni.StatusCompleted),
			omni.Partial(omni.PartialText, omni.EventStop, "", "", "", omni.StatusCompleted),
			omni.AssistantText("Hello, world.", omni.StatusCompleted),
			omni.TokenUsageMsg(omni.TokenCounts{Total: 5}, omni.TokenCounts{Total: 5}),
		}
		if p.EmitBatch == nil { // called by other code than the engine
			for _, m := range chunk {
				emit(m)
			}
		} else {
			p.EmitBatch(chunk)
		}
		return engine.Outcome{Status: omni.StatusCompleted}
	})
	meta := omni.Meta{SessionID: "batch", Provider: "demo", ModelID: "scripted", ContextWindow: 8192, AgentState: "mem", Workspace: "mem"}.Message()
	session, err := engine.New(engine.Config{Meta: meta, LLM: llm})
	if err != nil {
		fmt.Println(err)
		return
	}
	stream, err := session.Run(context.Background(), []omni.Message{omni.UserText("Hi")}, engine.RunOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for m := range stream {
		switch p := m.Payload; p.Type {
		case omni.PartialText:
			fmt.Printf("%s %q\n", p.EventType, p.Text)
		case omni.Text:
			fmt.Println("text:", p.Text)
		}
	}
	// Output:
	// start ""
	// delta "Hello, "
	// delta "world."
	// stop ""
	// text: Hello, world.
}

// A tool that has several messages at once hands them over with
// ToolRequest.EmitBatch, as a model adapter does with
// GenerateParams.EmitBatch; a consumer that writes each message
// somewhere else (a buffer, a socket) takes them with Run.NextEach, where
// the engine holds them, without copying each out.
func ExampleRun_NextEach() {
	turn := 0
	llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		turn++
		if turn == 1 {
			emit(omni.ToolCallMsg("call-1", "count", `{}`))
		} else {
			emit(omni.AssistantText("Counted.", omni.StatusCompleted))
		}
		return engine.Outcome{Status: omni.StatusCompleted}
	})
	tools := engine.EnvironmentFunc(func(ctx context.Context, req engine.ToolRequest, emit func(omni.Message)) error {
		id := req.ToolCall.Payload.ToolCallID
		out := []omni.Message{omni.Partial(omni.PartialToolCallOutput, omni.EventStart, "", id, "", omni.StatusCompleted)}
		for _, n := range []string{"one ", "two ", "three"} {
			out = append(out, omni.Partial(omni.PartialToolCallOutput, omni.EventDelta, n, id, "", omni.StatusCompleted))
		}
		out = append(out, omni.Partial(omni.PartialToolCallOutput, omni.EventStop, "", id, "", omni.StatusCompleted))
		if req.EmitBatch == nil { // called by other code than the engine
			for _, m := range out {
				emit(m)
			}
		} else {
			req.EmitBatch(out)
		}
		return nil // the engine builds the output from the deltas
	})
	meta := omni.Meta{SessionID: "each", Provider: "demo", ModelID: "scripted", ContextWindow: 8192, AgentState: "mem", Workspace: "mem"}.Message()
	session, err := engine.New(engine.Config{Meta: meta, LLM: llm, Environment: tools})
	if err != nil {
		fmt.Println(err)
		return
	}
	allow := func(context.Context, omni.Message) (engine.Decision, error) { return omni.DecisionAllow, nil }
	run, err := session.Start(context.Background(), []omni.Message{omni.UserText("Count")}, engine.RunOptions{Approve: allow})
	if err != nil {
		fmt.Println(err)
		return
	}
	var lines []byte // what the consumer keeps: a copy of what it needs
	for run.NextEach(64, func(m *omni.Message) {
		if p := &m.Payload; p.Type == omni.ToolCallOutput || p.Type == omni.Text {
			lines = append(lines, p.Type+": "+p.Output+p.Text+"\n"...)
		}
	}) {
	}
	fmt.Print(string(lines))
	// Output:
	// tool_call_output: one two three
	// text: Counted.
}

// A reply the provider cut short (its output-token limit, its content
// filter) completes as far as it went: PROTOCOL.md has no stop reason
// for it. The model says why in Outcome.Cut (the adapters of package
// provider do), and the engine reports it as a DiagLLM diagnostic
// wrapping ErrReplyCut, which a host can show as a notice.
func ExampleOutcome_cut() {
	llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		emit(omni.AssistantText("The three steps are: first, open the", omni.StatusCompleted))
		emit(omni.TokenUsageMsg(omni.TokenCounts{Total: 4096}, omni.TokenCounts{Total: 4096}))
		return engine.Outcome{Status: omni.StatusCompleted, Cut: `finish_reason "length"`}
	})
	var mu sync.Mutex // OnDiagnostic is called from the engine's goroutines
	var notices []string
	onDiagnostic := func(d engine.Diagnostic) {
		if d.Kind == engine.DiagLLM && errors.Is(d.Err, engine.ErrReplyCut) {
			mu.Lock()
			notices = append(notices, d.Err.Error())
			mu.Unlock()
		}
	}
	meta := omni.Meta{SessionID: "cut", Provider: "demo", ModelID: "scripted", ContextWindow: 8192, AgentState: "mem", Workspace: "mem"}.Message()
	session, err := engine.New(engine.Config{Meta: meta, LLM: llm, OnDiagnostic: onDiagnostic})
	if err != nil {
		fmt.Println(err)
		return
	}
	stream, err := session.Run(context.Background(), []omni.Message{omni.UserText("How do I start?")}, engine.RunOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for m := range stream {
		switch p := m.Payload; p.Type {
		case omni.Text:
			fmt.Println("assistant:", p.Text)
		case omni.RequestEnd:
			fmt.Println("request_end:", p.Status())
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, n := range notices {
		fmt.Println("notice:", n)
	}
	// Output:
	// assistant: The three steps are: first, open the
	// request_end: completed
	// notice: llm: the provider cut the reply short (finish_reason "length"): a reply at its output-token limit (raise the adapter's MaxTokens); it completed as far as it went
}
