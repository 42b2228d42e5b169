package engine_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/enginetest"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

// readmeRun is the README's Go example (its "## Go" section), word for
// word between the markers: TestREADMEGoExample keeps the two the same.
func readmeRun(ctx context.Context, meta omni.Message, llm engine.LLM, tools engine.Environment, writer *trace.Writer, approve engine.Approver) error {
	// README begin
	session, err := engine.New(engine.Config{Meta: meta, LLM: llm, Environment: tools, Trace: writer})
	if err != nil {
		return err // names the field at fault
	}
	defer session.Close()
	stream, err := session.Run(ctx, []omni.Message{omni.UserText("What time is it?")},
		engine.RunOptions{Approve: approve})
	if err != nil {
		return err // engine.ErrBusy while a run is in flight
	}
	for m := range stream { // breaking out of the loop aborts the run
		fmt.Println(m.Payload.Type)
	}
	// README end
	return nil
}

// The README's Go example, run on a scripted model that asks for a tool
// and then answers, a tool, an approver that denies it (an allowed tool's
// output would come before or after its request's end: arrival order) and
// a Trace in memory.
func ExampleSession_Run() {
	llm := enginetest.NewLLM(
		enginetest.Reply{Emit: []omni.Message{omni.ToolCallMsg("call-1", "clock", `{}`), enginetest.Usage(10)}},
		enginetest.Reply{Emit: []omni.Message{omni.AssistantText("It is noon.", omni.StatusCompleted), enginetest.Usage(20)}},
	)
	tools := enginetest.Tools{"clock": func(ctx context.Context, call omni.Message, emit func(omni.Message)) error {
		emit(omni.ToolOutput(call.Payload.ToolCallID, "noon", omni.StatusCompleted))
		return nil
	}}
	approve := func(ctx context.Context, call omni.Message) (engine.Decision, error) {
		return engine.DecisionDeny, nil
	}
	writer := trace.NewWriter(&trace.MemStore{}, "readme", 1)
	if err := readmeRun(context.Background(), enginetest.Meta("readme"), llm, tools, writer, approve); err != nil {
		fmt.Println(err)
	}
	// Output:
	// request_begin
	// tool_call
	// approval_decision
	// tool_call_output
	// token_usage
	// request_end
	// request_begin
	// text
	// token_usage
	// request_end
}

func TestREADMEGoExample(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "\n## Go\n")
	if start < 0 {
		t.Fatal(`README: no "## Go" section`)
	}
	m := regexp.MustCompile("(?s)```go\n(.*?)```").FindStringSubmatch(doc[start:])
	if m == nil {
		t.Fatal("README, ## Go: no ```go block")
	}
	src, err := os.ReadFile("readme_example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(string(src), "\t// README begin\n")
	body, _, _ = strings.Cut(body, "\t// README end\n")
	var want strings.Builder
	for line := range strings.Lines(body) {
		want.WriteString(strings.TrimPrefix(line, "\t"))
	}
	if m[1] != want.String() {
		t.Errorf("README's Go example:\n%s\nwant it as readmeRun has it:\n%s", m[1], want.String())
	}
}
