package provider

import (
	"runtime"
	"strings"
	"testing"
)

// split feeds s to a fresh InlineThinking (Opened as opened) in pieces
// of n bytes (whole for n = 0) and returns all its thinking and text.
func split(s string, n int, opened bool) (think, text string) {
	t := InlineThinking{Opened: opened}
	var th, tx strings.Builder
	for s != "" {
		k := len(s)
		if n > 0 && n < k {
			k = n
		}
		a, b := t.Feed(s[:k])
		th.WriteString(a)
		tx.WriteString(b)
		s = s[k:]
	}
	a, b := t.Flush()
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
			think, text := split(tc.in, n, false)
			if think != tc.think || text != tc.text {
				t.Errorf("%q in pieces of %d: thinking %q, text %q; want %q, %q", tc.in, n, think, text, tc.think, tc.text)
			}
		}
	}
}

// With Opened (the chat template opened the thinking), the reply is
// thinking until its </think>, a <think> it opens with dropped, whatever
// the pieces it comes in; all of it is thinking when no </think> comes.
func TestInlineThinkingOpened(t *testing.T) {
	for _, tc := range []struct{ in, think, text string }{
		{"Okay, the user asks.\n</think>\n\nHello.", "Okay, the user asks.", "Hello."},
		{"\n<think>\nx\n</think>\n\ny", "x", "y"},
		{"</think>\n\nNo thinking.", "", "No thinking."},
		{"a < b, and <thinking> is a tag</think>c</think>", "a < b, and <thinking> is a tag", "c</think>"},
		{"cut off", "cut off", ""},
		{"<th", "<th", ""},
		{"<thought>x</think>y", "<thought>x", "y"},
		{"  \n", "", "  \n"},
		{"", "", ""},
	} {
		for _, n := range []int{0, 1, 2, 3, 7} {
			think, text := split(tc.in, n, true)
			if think != tc.think || text != tc.text {
				t.Errorf("%q opened, in pieces of %d: thinking %q, text %q; want %q, %q", tc.in, n, think, text, tc.think, tc.text)
			}
		}
	}
}

// Thinking streams as it comes: each piece of it is out before the next
// piece is fed (but for white space and a start of </think> at its end).
func TestInlineThinkingStreams(t *testing.T) {
	for _, opened := range []bool{false, true} {
		tg := InlineThinking{Opened: opened}
		var got []string
		for _, p := range []string{"<think>", "Let me ", "see. ", "</th", "ink>Hi"} {
			think, text := tg.Feed(p)
			got = append(got, think+"|"+text)
		}
		if g, want := strings.Join(got, ","), "|,Let me|, see.|,|,|Hi"; g != want {
			t.Errorf("opened %v: pieces out %q, want %q", opened, g, want)
		}
	}
}

// Apart (the server sent thinking in a field of its own) makes the rest
// text, what was held first; once text came it changes nothing.
func TestInlineThinkingApart(t *testing.T) {
	tg := InlineThinking{Opened: true}
	if think, text := tg.Feed("\n<th"); think+text != "" {
		t.Fatalf("held: %q, %q", think, text)
	}
	if s := tg.Apart(); s != "\n<th" {
		t.Errorf("Apart returned %q, want what was held", s)
	}
	if think, text := tg.Feed("ink>x</think>y"); think != "" || text != "ink>x</think>y" {
		t.Errorf("after Apart: thinking %q, text %q; want all text", think, text)
	}
	tg = InlineThinking{}
	tg.Feed("<think>a")
	if s := tg.Apart(); s != "" {
		t.Errorf("Apart in the thinking returned %q", s)
	}
	if think, text := tg.Feed(" b</think>c"); think != " b" || text != "c" {
		t.Errorf("Apart in the thinking changed it: %q, %q", think, text)
	}
}

// FuzzInlineThinking: the pieces the text comes in change nothing (n's
// high bit sets Opened), the text is an end of it, and text that does not
// open with <think> is text as it came unless Opened, where text without
// </think> is thinking (but for white space alone).
func FuzzInlineThinking(f *testing.F) {
	for _, s := range []string{"<think>\nx\n</think>\n\ny", " <think></think>", "<thi", "a</think>b", "<think> < </ </think \n"} {
		f.Add(s, uint8(3))
		f.Add(s, uint8(0x83))
	}
	f.Fuzz(func(t *testing.T, s string, n uint8) {
		opened := n&0x80 != 0
		n &= 0x7f
		think, text := split(s, 0, opened)
		if a, b := split(s, int(n), opened); a != think || b != text {
			t.Fatalf("%q (opened %v) in pieces of %d: %q, %q; whole: %q, %q", s, opened, n, a, b, think, text)
		}
		if !strings.HasSuffix(s, text) {
			t.Fatalf("%q (opened %v): text %q is not its end", s, opened, text)
		}
		blank := strings.TrimLeft(s, " \t\r\n") == ""
		if !opened && !strings.HasPrefix(strings.TrimLeft(s, " \t\r\n"), openTag) && (think != "" || text != s) {
			t.Fatalf("%q: thinking %q, text %q", s, think, text)
		}
		if opened && !blank && !strings.Contains(s, closeTag) && text != "" {
			t.Fatalf("%q opened, no </think>: text %q", s, text)
		}
	})
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
		var tg InlineThinking
		var think, text strings.Builder
		add := func(a, b string) { think.WriteString(a); text.WriteString(b) }
		add(tg.Feed(tc.start))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range pieces {
			add(tg.Feed("\n"))
		}
		runtime.ReadMemStats(&after)
		if tc.start != "" {
			add(tg.Feed("</think>"))
		}
		add(tg.Feed("x"))
		add(tg.Flush())
		if think.String() != tc.think || text.String() != tc.text {
			t.Errorf("%q then %d new lines: thinking %q, text of %d bytes; want %q, %d", tc.start, pieces, think.String(), text.Len(), tc.think, len(tc.text))
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 4<<20 {
			t.Errorf("%q then %d new lines one at a time: %d MB allocated, want it linear (under 4 MB)", tc.start, pieces, n>>20)
		}
	}
}
