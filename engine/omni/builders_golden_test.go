package omni

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

var updateBuilders = flag.Bool("update-builders", false, "rewrite testdata/builders.jsonl")

// builderCases are the messages the builders make, one per line of
// testdata/builders.jsonl. The JavaScript builders (static/msg.mjs) are
// tested against the same file, so both sides make the same shapes.
func builderCases() []Message {
	sender := UserText("from the parent")
	sender.Payload.Edit().Sender = SenderParentAgent
	thinking := Message{Type: TypeModelMsg, Payload: Payload{Type: Thinking, Role: RoleAssistant, Thinking: "hmm", StopReason: StatusCompleted}}
	images := ToolOutput("call_1", "a chart", StatusCompleted)
	images.Payload.Edit().Images = []string{"data:image/png;base64,AAAA"}
	return []Message{
		UserText("hello"),
		sender,
		AssistantText("hi", StatusCompleted),
		thinking,
		ToolCallMsg("call_1", "read_file", `{"path":"a.txt"}`),
		ToolOutput("call_1", "contents", StatusCompleted),
		ToolOutput("call_1", "[invalid arguments]", StatusFailed),
		images,
		Partial(PartialText, EventStart, "", "", "", ""),
		Partial(PartialText, EventDelta, "hi", "", "", ""),
		Partial(PartialThinking, EventDelta, "hmm", "", "", ""),
		Partial(PartialToolCall, EventDelta, `{"pa`, "call_1", "read_file", ""),
		Partial(PartialToolCallOutput, EventDelta, "cont", "call_1", "", ""),
		Partial(PartialText, EventStop, "", "", "", StatusAborted),
		TokenUsageMsg(TokenCounts{Output: 3, Total: 10}, TokenCounts{CacheRead: 1, Output: 3, Total: 10}),
	}
}

func TestBuildersGolden(t *testing.T) {
	var b bytes.Buffer
	for _, m := range builderCases() {
		b.Write(m.AppendJSON(nil))
		b.WriteByte('\n')
	}
	const file = "testdata/builders.jsonl"
	if *updateBuilders {
		if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Fatalf("builders changed; run go test ./engine/omni -run TestBuildersGolden -update-builders\ngot:\n%s\nwant:\n%s", b.Bytes(), want)
	}
}
