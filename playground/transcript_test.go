package playground

import (
	"strings"
	"testing"

	"github.com/floehq/floe/engine/omni"
)

func partial(typ, ev, body, id string) omni.Message {
	return omni.Partial(typ, ev, body, id, "", "")
}

// seedTimeline is the two-tool timeline of ENGINE.md §7.
func seedTimeline() []omni.Message {
	th := omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.Thinking, Role: omni.RoleAssistant, Thinking: "hmm", StopReason: "completed"}}
	return []omni.Message{
		omni.RequestBeginMsg(),
		partial(omni.PartialThinking, "start", "", ""), partial(omni.PartialThinking, "delta", "hm", ""), partial(omni.PartialThinking, "delta", "m", ""), partial(omni.PartialThinking, "stop", "", ""), th,
		partial(omni.PartialText, "start", "", ""), partial(omni.PartialText, "delta", "Hi", ""), partial(omni.PartialText, "stop", "", ""), omni.AssistantText("Hi", "completed"),
		omni.Partial(omni.PartialToolCall, "start", "", "A", "list_files", ""), omni.Partial(omni.PartialToolCall, "delta", `{"dir":`, "A", "list_files", ""), omni.Partial(omni.PartialToolCall, "delta", `""}`, "A", "list_files", ""), omni.Partial(omni.PartialToolCall, "stop", "", "A", "list_files", "completed"),
		omni.ToolCallMsg("A", "list_files", `{"dir":""}`),
		omni.ApprovalDecisionMsg("allow", "A"),
		omni.Partial(omni.PartialToolCall, "start", "", "B", "count_lines", ""), omni.Partial(omni.PartialToolCall, "stop", "", "B", "count_lines", "completed"),
		omni.ToolCallMsg("B", "count_lines", `{}`),
		omni.ApprovalDecisionMsg("allow", "B"),
		partial(omni.PartialToolCallOutput, "start", "", "B"), partial(omni.PartialToolCallOutput, "delta", "b1\n", "B"),
		partial(omni.PartialToolCallOutput, "start", "", "A"), partial(omni.PartialToolCallOutput, "delta", "a1\n", "A"),
		partial(omni.PartialToolCallOutput, "delta", "b2\n", "B"), partial(omni.PartialToolCallOutput, "stop", "", "B"),
		omni.ToolOutput("B", "b1\nb2\n", "completed"),
		omni.TokenUsageMsg(omni.TokenCounts{Output: 5, Total: 50}, omni.TokenCounts{Output: 5, Total: 50}),
		omni.Event(omni.Payload{Type: omni.RequestEnd, Rest: &omni.Rest{Status: "completed"}}),
		partial(omni.PartialToolCallOutput, "delta", "a2\n", "A"), partial(omni.PartialToolCallOutput, "stop", "", "A"),
		omni.ToolOutput("A", "a1\na2\n", "completed"),
	}
}

func TestTranscriptSeedTimeline(t *testing.T) {
	var tr Transcript
	tr.AddPrompt("go")
	for _, m := range seedTimeline() {
		tr.Apply(m)
	}
	want := []struct {
		kind Kind
		body string
	}{{KindPrompt, "go"}, {KindRequest, ""}, {KindThinking, "hmm"}, {KindText, "Hi"}, {KindTool, ""}, {KindTool, ""}}
	if len(tr.Items) != len(want) {
		t.Fatalf("%d items, want %d: %+v", len(tr.Items), len(want), tr.Items)
	}
	for i, w := range want {
		it := tr.Items[i]
		if it.ID != i || it.Kind != w.kind || it.Body != w.body || it.Streaming {
			t.Errorf("item %d = %+v, want %s %q", i, it, w.kind, w.body)
		}
	}
	r := tr.Items[1].Request
	if r.N != 1 || r.Status != "completed" || r.Usage == nil || r.Usage.Total != 50 || tr.Session.Total != 50 {
		t.Errorf("request = %+v, session = %+v", r, tr.Session)
	}
	a, b := tr.Items[4].Tool, tr.Items[5].Tool
	if a.CallID != "A" || a.Name != "list_files" || a.Args != `{"dir":""}` || a.Decision != "allow" || a.Output != "a1\na2\n" || a.OutputStop != "completed" || a.OutputStreaming {
		t.Errorf("card A = %+v", a)
	}
	if b.CallID != "B" || b.Name != "count_lines" || b.Output != "b1\nb2\n" || b.OutputStop != "completed" {
		t.Errorf("card B = %+v", b)
	}
	if tr.Count != len(seedTimeline()) {
		t.Errorf("Count = %d", tr.Count)
	}
}

func TestTranscriptLenient(t *testing.T) {
	tests := []struct {
		name  string
		msgs  []omni.Message
		items []string // bodies of text/thinking items, in order
		open  bool     // last item still streaming
	}{
		{"delta without start", []omni.Message{partial(omni.PartialText, "delta", "a", ""), partial(omni.PartialText, "delta", "b", "")}, []string{"ab"}, true},
		{"start closes open", []omni.Message{partial(omni.PartialText, "start", "", ""), partial(omni.PartialText, "delta", "a", ""), partial(omni.PartialText, "start", "", ""), partial(omni.PartialText, "delta", "b", "")}, []string{"a", "b"}, true},
		{"stop without start", []omni.Message{partial(omni.PartialText, "stop", "", ""), omni.AssistantText("x", "completed")}, []string{"x"}, false},
		{"complete without fragments", []omni.Message{omni.AssistantText("x", "completed"), omni.AssistantText("y", "completed")}, []string{"x", "y"}, false},
		{"complete closes open fragment", []omni.Message{partial(omni.PartialText, "start", "", ""), partial(omni.PartialText, "delta", "x", ""), omni.AssistantText("xy", "aborted")}, []string{"xy"}, false},
		{"text and thinking interleave", []omni.Message{partial(omni.PartialThinking, "delta", "t", ""), partial(omni.PartialText, "delta", "x", ""), partial(omni.PartialThinking, "delta", "u", "")}, []string{"tu", "x"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var tr Transcript
			for _, m := range tc.msgs {
				tr.Apply(m)
			}
			var got []string
			for _, it := range tr.Items {
				got = append(got, it.Body)
			}
			if len(got) != len(tc.items) {
				t.Fatalf("items %q, want %q", got, tc.items)
			}
			for i := range got {
				if got[i] != tc.items[i] {
					t.Errorf("items %q, want %q", got, tc.items)
				}
			}
			if tc.open != tr.Items[len(tr.Items)-1].Streaming && tc.name != "text and thinking interleave" {
				t.Errorf("last item streaming = %v, want %v", !tc.open, tc.open)
			}
		})
	}
}

func TestTranscriptEvents(t *testing.T) {
	var tr Transcript
	tr.Apply(omni.ToolListReadyMsg([]omni.ToolDefinition{{Name: "a"}, {Name: "b"}}))
	tr.Apply(omni.ApprovalDecisionMsg("deny", "X"))
	tr.Apply(omni.ToolOutput("X", "Tool call denied by user.", "aborted"))
	tr.Apply(omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.Text, Role: omni.RoleUser, Text: "[user_steering]\nfaster\n[/user_steering]", StopReason: "completed"}})
	tr.Apply(omni.AbortMsg("aborted by user"))
	if len(tr.Items) != 4 {
		t.Fatalf("items: %d", len(tr.Items))
	}
	if tr.Items[0].Body != "Tools ready: a, b" || tr.Items[3].Body != "Run aborted: aborted by user" {
		t.Errorf("notices %q %q", tr.Items[0].Body, tr.Items[3].Body)
	}
	if c := tr.Items[1].Tool; c.Decision != "deny" || c.OutputStop != "aborted" {
		t.Errorf("card = %+v", c)
	}
	if s, ok := SteeringText(tr.Items[2].Body); tr.Items[2].Kind != KindUser || s != "faster" || !ok {
		t.Errorf("steering item = %+v", tr.Items[2])
	}
	if s, ok := SteeringText("[user_steering]\n\n[/user_steering]"); s != "" || !ok {
		t.Errorf("SteeringText of a steering of images only = %q, %v", s, ok)
	}
	for _, plain := range []string{"plain", "[user_steering]", "[user_steering] and [/user_steering] quoted"} {
		if s, ok := SteeringText(plain); ok || s != "" {
			t.Errorf("SteeringText(%q) = %q, %v", plain, s, ok)
		}
	}
}

// A call whose id an earlier call already used (a model that reuses ids
// across requests, or a call numbered again after a reload) gets a card of
// its own; the earlier card keeps its call and output.
func TestTranscriptReusedCallID(t *testing.T) {
	for _, stored := range []bool{false, true} {
		tr := &Transcript{}
		apply := tr.Apply
		if stored {
			apply = tr.ApplyRecord
		}
		msgs := []omni.Message{
			omni.RequestBeginMsg(),
			omni.ToolCallMsg("call_1", "write_file", `{"path":"g.txt"}`),
			omni.ToolOutput("call_1", "[interrupted]", omni.StatusFailed),
			omni.RequestBeginMsg(),
		}
		if !stored {
			msgs = append(msgs, omni.Partial(omni.PartialToolCall, "start", "", "call_1", "echo", ""), omni.Partial(omni.PartialToolCall, "stop", "", "call_1", "echo", "completed"))
		}
		msgs = append(msgs, omni.ToolCallMsg("call_1", "echo", `{"text":"hi"}`), omni.ApprovalDecisionMsg("allow", "call_1"), omni.ToolOutput("call_1", "hi", "completed"))
		for _, m := range msgs {
			apply(m)
		}
		var cards []*ToolCard
		for _, it := range tr.Items {
			if it.Kind == KindTool {
				cards = append(cards, it.Tool)
			}
		}
		if len(cards) != 2 {
			t.Fatalf("stored=%v: %d tool cards, want 2", stored, len(cards))
		}
		if cards[0].Name != "write_file" || cards[0].Output != "[interrupted]" || cards[0].Decision != "" {
			t.Errorf("stored=%v: the first card changed: %+v", stored, *cards[0])
		}
		if cards[1].Name != "echo" || cards[1].Args != `{"text":"hi"}` || cards[1].Output != "hi" || cards[1].Decision != "allow" {
			t.Errorf("stored=%v: the second card: %+v", stored, *cards[1])
		}
	}
}

// A Stop during an approval: the call gets no output, and the stored
// session reopened shows it cancelled, as the live page did, not
// interrupted; a call cut off without an abort is interrupted.
func TestTranscriptAbortCancelsWaitingCalls(t *testing.T) {
	for _, stored := range []bool{false, true} {
		tr := &Transcript{}
		apply := tr.Apply
		if stored {
			apply = tr.ApplyRecord
		}
		for _, m := range []omni.Message{
			omni.RequestBeginMsg(),
			omni.ToolCallMsg("A", "write_file", `{}`), omni.ApprovalDecisionMsg("allow", "A"), omni.ToolOutput("A", "ok", "completed"),
			omni.ToolCallMsg("B", "delete_file", `{}`),
			omni.AbortMsg("aborted by user"),
			omni.RequestBeginMsg(),
			omni.ToolCallMsg("C", "read_file", `{}`),
		} {
			apply(m)
		}
		tr.Interrupt()
		got := map[string][2]string{}
		for _, it := range tr.Items {
			if c := it.Tool; c != nil {
				got[c.CallID] = [2]string{c.Cancelled, c.OutputStop}
			}
		}
		want := map[string][2]string{"A": {"", "completed"}, "B": {"aborted by user", ""}, "C": {"", "interrupted"}}
		if len(got) != 3 || got["A"] != want["A"] || got["B"] != want["B"] || got["C"] != want["C"] {
			t.Errorf("stored=%v: cards %v, want %v", stored, got, want)
		}
	}
}

// A long streamed reply grows in a buffer: a delta costs no copy of the
// text so far (cur += delta made a reply of 40,000 words take 15 s to show).
func TestTranscriptDeltasDoNotCopyTheText(t *testing.T) {
	for _, typ := range []string{omni.PartialText, omni.PartialToolCallOutput} {
		tr := &Transcript{}
		tr.Apply(partial(typ, "start", "", "A"))
		delta := partial(typ, "delta", "lorem ipsum ", "A")
		allocs := testing.AllocsPerRun(20000, func() { tr.Apply(delta) })
		if allocs > 0.1 {
			t.Errorf("%s: %.2f allocations a delta, want the text to grow in place", typ, allocs)
		}
		it := tr.Items[len(tr.Items)-1]
		got := it.Body
		if it.Tool != nil {
			got = it.Tool.Output
		}
		if want := strings.Repeat("lorem ipsum ", 20001); got != want {
			t.Errorf("%s: the text is %d bytes, want %d", typ, len(got), len(want))
		}
		tr.Apply(partial(typ, "stop", "", "A"))
	}
}

// A request that completed with no text, thinking or tool call says so
// (a provider's empty answer showed nothing at all); a tool's output is
// not the model's answer.
func TestTranscriptRequestAnswered(t *testing.T) {
	end := omni.Event(omni.Payload{Type: omni.RequestEnd, Rest: &omni.Rest{Status: "completed"}})
	var tr Transcript
	for _, m := range []omni.Message{omni.RequestBeginMsg(), omni.ToolOutput("late", "x", "completed"), end} {
		tr.Apply(m)
	}
	var live Transcript
	for _, m := range seedTimeline()[:14] {
		live.Apply(m)
	}
	live.Apply(end)
	if r := tr.Items[0].Request; r.Answered {
		t.Errorf("an empty answer counted as answered: %+v", r)
	}
	if r := live.Items[0].Request; !r.Answered {
		t.Errorf("an answer not counted: %+v", r)
	}
}

// A stored session resumed twice: the request the first reload cut off
// has no request_end, and a later request_begin follows it. It stays
// interrupted (it showed "streaming…" once another cut-off request was
// the last one).
func TestTranscriptEarlierCutOffRequestInterrupted(t *testing.T) {
	tr := &Transcript{}
	for _, m := range []omni.Message{
		omni.RequestBeginMsg(),
		omni.ToolCallMsg("A", "write_file", `{}`),
		omni.RequestBeginMsg(),
		omni.AssistantText("Hi", "completed"),
		omni.Event(omni.Payload{Type: omni.RequestEnd, Rest: &omni.Rest{Status: "completed"}}),
		omni.RequestBeginMsg(),
	} {
		tr.ApplyRecord(m)
	}
	tr.Interrupt()
	var got []string
	for _, it := range tr.Items {
		if it.Kind == KindRequest {
			got = append(got, it.Request.Status)
		}
	}
	if strings.Join(got, ",") != "interrupted,completed,interrupted" {
		t.Errorf("requests %q, want interrupted, completed, interrupted", got)
	}
}

// A file the model made (an assistant's inline_data) is an item of its own
// between the texts around it, named for a download, an image with its
// data: URL to draw; a user's image inline_data goes with the prompt
// before it, as an image_url. Both were a notice "inline_data message".
func TestTranscriptFiles(t *testing.T) {
	inline := func(role, mime, data string) omni.Message {
		return omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.InlineData, Role: role, StopReason: "completed", Rest: &omni.Rest{MimeType: mime, Data: data}}}
	}
	var tr Transcript
	tr.AddPrompt("Draw a cat.")
	for _, m := range []omni.Message{
		inline(omni.RoleUser, "image/png", "iVBORw=="),
		omni.RequestBeginMsg(),
		omni.AssistantText("Here:", "completed"),
		inline(omni.RoleAssistant, "image/png", "iVBORw=="),
		inline(omni.RoleAssistant, "application/pdf", "JVBERi0="),
		inline(omni.RoleAssistant, "application/x-weird thing", "AAAA"),
		omni.AssistantText("Done.", "completed"),
	} {
		tr.Apply(m)
	}
	var got []string
	for _, it := range tr.Items {
		s := string(it.Kind) + " " + it.Body + " " + strings.Join(it.Images, ",")
		if it.File != nil {
			s += " " + it.File.Name + " " + it.File.MimeType + " " + it.File.Data
		}
		got = append(got, s)
	}
	want := []string{
		"prompt Draw a cat. data:image/png;base64,iVBORw==",
		"request  ",
		"text Here: ",
		"file  data:image/png;base64,iVBORw== image-1.png image/png iVBORw==",
		"file   file-2.pdf application/pdf JVBERi0=",
		"file   file-3.bin application/x-weird thing AAAA",
		"text Done. ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("items\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !tr.Items[1].Request.Answered {
		t.Error("the request answered nothing")
	}
	for mime, name := range map[string]string{"image/jpeg": "image-7.jpg", "IMAGE/SVG+XML; charset=utf-8": "image-7.svg", "text/plain": "file-7.txt", "audio/x-wav": "file-7.wav", "": "file-7.bin", "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "file-7.bin"} {
		if got := FileName(mime, 7); got != name {
			t.Errorf("FileName(%q) = %q, want %q", mime, got, name)
		}
	}
}
