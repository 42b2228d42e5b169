package omni_test

import (
	"errors"
	"fmt"

	"github.com/floehq/floe/engine/omni"
)

// Decoding keeps unknown keys and fidelity untouched; encoding writes the
// keys in reference order with JSON.stringify escaping.
func ExampleDecode() {
	in := `{"type":"model_msg","payload":{"role":"assistant","type":"text","text":"a \u003c b","fidelity":{ "sig" : "x" },"vendor_key":[1, 2]}}`
	m, err := omni.Decode([]byte(in))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Payload.Text)
	fmt.Println(m.Payload.Extra()[0].Key, string(m.Payload.Extra()[0].Value))
	out, _ := m.MarshalJSON()
	fmt.Println(string(out))
	// Output:
	// a < b
	// vendor_key [1, 2]
	// {"type":"model_msg","payload":{"type":"text","role":"assistant","text":"a < b","fidelity":{ "sig" : "x" },"vendor_key":[1, 2]}}
}

func ExampleDecodeArray() {
	_, err := omni.DecodeArray([]byte(`[{"type":"event_msg","payload":{"type":"request_begin"}},{"type":"model_msg","payload":{"type":"text","text":7}}]`))
	fmt.Println(err)
	// Output:
	// omni: [1].payload.text: want string, got number
}

func ExampleValidate() {
	m := omni.Partial(omni.PartialText, "middle", "hi", "", "", omni.StatusCompleted)
	err := omni.Validate(m)
	fmt.Println(err)
	var ve *omni.ValidationError
	if errors.As(err, &ve) {
		fmt.Println(ve.Field, ve.Value)
	}
	// Output:
	// omni: payload.event_type: "middle" is not one of start|delta|stop
	// payload.event_type "middle"
}

// An Aggregator turns the stream into what a transcript shows: fragments
// are absorbed, complete messages come out once.
func ExampleAggregator() {
	stream := []omni.Message{
		omni.RequestBeginMsg(),
		omni.Partial(omni.PartialText, omni.EventStart, "", "", "", omni.StatusCompleted),
		omni.Partial(omni.PartialText, omni.EventDelta, "Hello, ", "", "", omni.StatusCompleted),
		omni.Partial(omni.PartialText, omni.EventDelta, "world", "", "", omni.StatusCompleted),
		omni.Partial(omni.PartialText, omni.EventStop, "", "", "", omni.StatusCompleted),
		omni.AssistantText("Hello, world", omni.StatusCompleted),
		omni.Partial(omni.PartialToolCallOutput, omni.EventDelta, "50%", "call-1", "", omni.StatusCompleted),
	}
	var a omni.Aggregator
	for _, m := range stream {
		for _, done := range a.Add(m) {
			fmt.Printf("complete: %s %q\n", done.Payload.Type, done.Payload.Body())
		}
	}
	for _, f := range a.Open() {
		fmt.Printf("open: %s %s %q\n", f.Payload.Type, f.Payload.ToolCallID, f.Payload.Body())
	}
	for _, done := range a.Flush() { // the stream was cut
		fmt.Printf("flushed: %s %q\n", done.Payload.Type, done.Payload.Body())
	}
	// Output:
	// complete: request_begin ""
	// complete: text "Hello, world"
	// open: partial_tool_call_output call-1 "50%"
	// flushed: tool_call_output "50%"
}

// A Discipline sits on one producer's emit path and reports the first
// message that breaks the streaming rules.
func ExampleDiscipline() {
	var d omni.Discipline
	for _, m := range []omni.Message{
		omni.Partial(omni.PartialText, omni.EventStart, "", "", "", omni.StatusCompleted),
		omni.Partial(omni.PartialText, omni.EventDelta, "Hi", "", "", omni.StatusCompleted),
		omni.Partial(omni.PartialText, omni.EventStop, "", "", "", omni.StatusCompleted),
		omni.AssistantText("Hi!", omni.StatusCompleted),
	} {
		if err := d.Check(m); err != nil {
			fmt.Println(err)
		}
	}
	// Output:
	// omni: streaming discipline: complete text body (3 bytes) differs from the deltas of partial_text (2 bytes) at byte 2
}

// The fields most messages leave empty are in Payload.Rest, read through
// nil-safe getters; Edit gives a copied message a Rest of its own.
func ExamplePayload_Edit() {
	end := omni.Event(omni.Payload{Type: omni.RequestEnd, Rest: &omni.Rest{Status: omni.StatusFailed, ErrorMessage: "connection reset"}})
	retry := end
	e := retry.Payload.Edit()
	e.Attempt = 2
	fmt.Println(end.Payload.Status(), end.Payload.Attempt(), retry.Payload.Attempt())
	hi := omni.UserText("hi")
	fmt.Println(hi.Payload.Sender() == "", hi.Payload.Rest == nil)
	out, _ := retry.MarshalJSON()
	fmt.Println(string(out))
	// Output:
	// failed 0 2
	// true true
	// {"type":"event_msg","payload":{"type":"request_end","status":"failed","error_message":"connection reset","attempt":2}}
}

// Meta builds a session_meta, the first record of a session's Trace and
// what engine.Config.Meta takes; a subagent's child session says so in
// Source. A missing required key is left for Validate to name.
func ExampleMeta_Message() {
	m := omni.Meta{
		SessionID:     "demo",
		Provider:      "openai",
		ModelID:       "gpt-4.1-mini",
		ContextWindow: 1047576,
		SystemPrompt:  "Be brief.",
		AgentState:    "memory",
		Workspace:     "/work",
	}.Message()
	out, _ := m.MarshalJSON()
	fmt.Println(string(out))
	fmt.Println("valid:", omni.Validate(m))

	child := omni.Meta{SessionID: "demo-child", Provider: "openai", ModelID: "gpt-4.1-mini", ContextWindow: 1047576, Source: omni.SourceSubagent}.Message()
	fmt.Println("source:", child.Payload.Source())
	fmt.Println(omni.Validate(omni.Meta{SessionID: "demo"}.Message()))
	// Output:
	// {"type":"session_meta","payload":{"session_id":"demo","provider":"openai","model_id":"gpt-4.1-mini","model_context_window":1047576,"system_prompt":"Be brief.","agent_state":"memory","workspace":"/work"}}
	// valid: <nil>
	// source: subagent
	// omni: payload.provider: missing
}
