//go:build !js

package openai_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/provider/nethttp"
	"github.com/floehq/floe/provider/openai"
)

// The common path of a native program: a session on a Chat Completions
// model (here a loopback server answering with two recorded streams: a
// tool call, then the answer), a tool written in Go, an approver, a Trace
// in files, and the session resumed from them as a restarted program
// would.
func Example() {
	answers := []string{
		`data: {"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":null}]}` + "\n\n" +
			`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":40,"completion_tokens":9,"total_tokens":49}}` + "\n\n" +
			"data: [DONE]\n\n",
		`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Sunny in Paris."},"finish_reason":null}]}` + "\n\n" +
			`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":60,"completion_tokens":4,"total_tokens":64}}` + "\n\n" +
			"data: [DONE]\n\n",
	}
	requests := 0
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, answers[requests%len(answers)])
		requests++
	}))
	defer server.Close()

	llm, err := openai.New(openai.Options{
		Transport: nethttp.New(nil),
		Model:     "gpt-4.1-mini",
		BaseURL:   server.URL + "/v1",
		APIKey:    "sk-example", // os.Getenv("OPENAI_API_KEY")
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	tools := []omni.ToolDefinition{{
		Name:        "weather",
		Description: "The weather in a city.",
		Parameters:  omni.RawJSON(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
	}}
	env := engine.EnvironmentFunc(func(ctx context.Context, req engine.ToolRequest, emit func(omni.Message)) error {
		call := req.ToolCall.Payload
		emit(omni.ToolOutput(call.ToolCallID, "sunny, 21°C in "+call.Arguments, omni.StatusCompleted))
		return nil // an error would be the call's failed output
	})
	approve := func(ctx context.Context, call omni.Message) (engine.Decision, error) {
		return engine.DecisionAllow, nil // a CLI would ask, and give up when ctx is done
	}

	dir, err := os.MkdirTemp("", "floe-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	store := trace.NewFileStore(dir, trace.FileStoreOptions{})
	id := trace.NewID(time.Now())  // session-YYYY-MM-DD-HH-mm-ss-<8 hex>, as the reference names sessions
	release, err := store.Lock(id) // another process holding it: an error wrapping trace.ErrBusy
	if err != nil {
		fmt.Println(err)
		return
	}
	defer release()

	meta := omni.Meta{SessionID: id, Provider: "openai", ModelID: "gpt-4.1-mini", ContextWindow: 1047576,
		SystemPrompt: "Be brief.", AgentState: dir, Workspace: "."}.Message()
	session, err := engine.New(engine.Config{
		Meta: meta, LLM: llm, NewLLM: llm.Factory(), ToolList: tools, Environment: env,
		Trace: trace.NewWriter(store, id, 1),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer session.Close()
	// Cancelling ctx (signal.NotifyContext for Ctrl-C) aborts the run:
	// the stream still ends, with an abort message.
	stream, err := session.Run(context.Background(), []omni.Message{omni.UserText("Weather in Paris?")}, engine.RunOptions{Approve: approve})
	if err != nil { // engine.ErrBusy while a run is in flight
		fmt.Println(err)
		return
	}
	var inputs []int64
	for m := range stream {
		switch p := &m.Payload; p.Type {
		case omni.ToolCall:
			fmt.Println("tool call:", p.Name, p.Arguments)
		case omni.ApprovalDecision:
			fmt.Println("decision:", p.Decision())
		case omni.ToolCallOutput:
			fmt.Println("tool output:", p.Output)
		case omni.Text:
			fmt.Println("assistant:", p.Text)
		case omni.TokenUsage:
			inputs = append(inputs, llm.Usage().Input) // token_usage has no input count
		case omni.RequestEnd:
			if p.Status() != omni.StatusCompleted { // a provider's failure: auth, timeout (retried), failed…
				fmt.Println("request:", p.Status(), p.ErrorMessage())
			}
		}
	}
	// The tool's output may come before or after its request's
	// token_usage and request_end (arrival order), always before the next
	// request.
	fmt.Println("input tokens per request:", inputs)

	// A restarted program: the Trace gives the session back, and a fresh
	// model context is handed its history before the next request.
	r, err := trace.Resume(context.Background(), store, id, time.Now)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("resumed file", r.Index, "with", len(r.Snapshot.History), "messages of history")
	// Then: engine.New(engine.Config{Meta: r.Meta, Trace: r.Writer, Resume: &r.Snapshot, LLM: …}).

	// Output:
	// tool call: weather {"city":"Paris"}
	// decision: allow
	// tool output: sunny, 21°C in {"city":"Paris"}
	// assistant: Sunny in Paris.
	// input tokens per request: [40 60]
	// resumed file 1 with 4 messages of history
}
