package openai

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider/internal/ptest"
)

// split feeds s to a fresh tags in pieces of n bytes (whole for n = 0)
// and returns all its thinking and text.
func split(s string, n int) (think, text string) {
	var t tags
	var th, tx strings.Builder
	for s != "" {
		k := len(s)
		if n > 0 && n < k {
			k = n
		}
		a, b := t.feed(s[:k])
		th.WriteString(a)
		tx.WriteString(b)
		s = s[k:]
	}
	a, b := t.flush()
	th.WriteString(a)
	tx.WriteString(b)
	return th.String(), tx.String()
}

// Content that opens with <think> is thinking until </think>, the white
// space around it dropped, whatever the pieces it comes in; other
// content is text as it came.
func TestInlineThinking(t *testing.T) {
	for _, tc := range []struct{ in, think, text string }{
		{"<think>\nLet me see.\n</think>\n\nHello.", "Let me see.", "Hello."},
		{"\n<think>a < b</think>c", "a < b", "c"},
		{"<think>\n\n</think>\n\nNo thinking.", "", "No thinking."},
		{"<think>cut off", "cut off", ""},
		{"<think>cut off </thi", "cut off </thi", ""},
		{"<think>x</think>", "x", ""},
		{"Hello <think>x</think>", "", "Hello <think>x</think>"},
		{"<thinking>x</thinking>", "", "<thinking>x</thinking>"},
		{"<th", "", "<th"},
		{"  \n", "", "  \n"},
		{"Plain text.", "", "Plain text."},
		{"Thought.\n</think>\n\nHello", "", "Thought.\n</think>\n\nHello"}, // the template opened it: left as text
		{"<think>a</think>b</think>", "a", "b</think>"},
	} {
		for _, n := range []int{0, 1, 2, 3, 7} {
			think, text := split(tc.in, n)
			if think != tc.think || text != tc.text {
				t.Errorf("%q in pieces of %d: thinking %q, text %q; want %q, %q", tc.in, n, think, text, tc.think, tc.text)
			}
		}
	}
}

// FuzzInlineThinking: the pieces content comes in change nothing, and
// content that does not open with <think> is text as it came.
func FuzzInlineThinking(f *testing.F) {
	for _, s := range []string{"<think>\nx\n</think>\n\ny", " <think></think>", "<thi", "a</think>b", "<think> < </ </think \n"} {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, s string, n uint8) {
		think, text := split(s, 0)
		if a, b := split(s, int(n)); a != think || b != text {
			t.Fatalf("%q in pieces of %d: %q, %q; whole: %q, %q", s, n, a, b, think, text)
		}
		if !strings.HasPrefix(strings.TrimLeft(s, " \t\r\n"), openTag) && (think != "" || text != s) {
			t.Fatalf("%q: thinking %q, text %q", s, think, text)
		}
	})
}

// The white space a reply opens with, held while it may precede <think>,
// goes out before a tool call that follows it (vLLM's hermes parser sends
// "\n\n" before a call), and a reply's thinking in tags is a thinking
// message before its text, in order.
func TestInlineThinkingOrder(t *testing.T) {
	call := chunk(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}`)
	for _, tc := range []struct {
		chunks []string
		want   string
	}{
		{[]string{chunk(`{"content":"\n\n"}`), call, finish, "[DONE]"}, "text:\n\n|tool_call:|token_usage:"},
		{[]string{chunk(`{"content":"<think>a"}`), chunk(`{"content":"\n</th"}`), chunk(`{"content":"ink>b"}`), call, finish, "[DONE]"}, "thinking:a|text:b|tool_call:|token_usage:"},
		{[]string{chunk(`{"content":"<thi"}`), finish}, "text:<thi|token_usage:"}, // no [DONE]
	} {
		tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: ptest.SSE(tc.chunks...)}}}
		c, out := run(t, newModel(t, tr, Options{}), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}})
		if out.Status != omni.StatusCompleted {
			t.Fatalf("outcome %+v", out)
		}
		var got []string
		for _, m := range c.Complete() {
			var v struct {
				Payload struct{ Type, Text, Thinking string }
			}
			json.Unmarshal([]byte(m), &v)
			got = append(got, v.Payload.Type+":"+v.Payload.Text+v.Payload.Thinking)
		}
		if g := strings.Join(got, "|"); g != tc.want {
			t.Errorf("%q: complete messages %q, want %q", tc.chunks, g, tc.want)
		}
	}
}

// White space streamed a piece at a time (a model repeating new lines, at
// the start of a reply or in its thinking) is held in time and memory
// linear in its length: each piece was joined to all that was held, 200 MB
// copied for 20,000 new lines, minutes for a few hundred thousand.
func TestInlineThinkingLongWhiteSpace(t *testing.T) {
	const pieces = 20000
	for _, tc := range []struct{ start, think, text string }{
		{"", "", strings.Repeat("\n", pieces) + "x"},
		{"<think>a", "a", "x"},
	} {
		var tg tags
		var think, text strings.Builder
		add := func(a, b string) { think.WriteString(a); text.WriteString(b) }
		add(tg.feed(tc.start))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range pieces {
			add(tg.feed("\n"))
		}
		runtime.ReadMemStats(&after)
		if tc.start != "" {
			add(tg.feed("</think>"))
		}
		add(tg.feed("x"))
		add(tg.flush())
		if think.String() != tc.think || text.String() != tc.text {
			t.Errorf("%q then %d new lines: thinking %q, text of %d bytes; want %q, %d", tc.start, pieces, think.String(), text.Len(), tc.think, len(tc.text))
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 4<<20 {
			t.Errorf("%q then %d new lines one at a time: %d MB allocated, want it linear (under 4 MB)", tc.start, pieces, n>>20)
		}
	}
}
