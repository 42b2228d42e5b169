package provider

import "strings"

// InlineThinking splits thinking out of a reply's text. A reasoning model
// served without a reasoning parser (Qwen3 or a DeepSeek-R1 distill on
// llama.cpp's server with --reasoning-format none, vLLM without
// --reasoning-parser, on its Chat and its Responses API, LM Studio without
// its setting, older Ollama) sends its thinking in the text, between
// <think> and </think> at the start of the reply. Fed the reply's text in
// the pieces it comes in, InlineThinking returns each piece's thinking and
// text as soon as it knows which it is: text that opens with <think>
// (after white space) is thinking until </think>, then text; other text
// is text as it came. The white space around the thinking is dropped.
//
// With Opened, the chat template opened the thinking (the prompt ends in
// "<think>\n": DeepSeek-R1's, QwQ's, Qwen3's thinking models'), so the
// reply holds only </think>: it is thinking until </think> (a <think> it
// opens with is dropped), all of it when none comes. The zero value reads
// a reply that opens with <think>.
type InlineThinking struct {
	Opened bool
	state  uint8  // one of the tag* states
	held   []byte // text kept back until it is known what it is
}

const (
	tagStart    = iota // no content yet but white space
	tagOpened          // after <think>, no thinking yet
	tagThinking        // in the thinking
	tagClosed          // after </think>, no text yet
	tagText            // the rest is text
)

const openTag, closeTag = "<think>", "</think>"

// Feed takes the next piece of the reply's text and returns what of it,
// and of what was held, is thinking and what is text.
func (t *InlineThinking) Feed(s string) (think, text string) {
	if t.state == tagText {
		return "", s
	}
	if n := len(t.held); n > 0 && isSpace(t.held[n-1]) && (t.state == tagStart || t.state == tagThinking) && trimSpace(s, true) == "" {
		// White space after white space held (a model repeating new
		// lines): held on, not joined and scanned again, which took
		// time quadratic in its length.
		t.held = append(t.held, s...)
		return "", ""
	}
	s, t.held = string(t.held)+s, t.held[:0]
	switch t.state {
	case tagStart:
		rest := trimSpace(s, true)
		if strings.HasPrefix(rest, openTag) {
			rest = rest[len(openTag):]
		} else if len(rest) < len(openTag) && strings.HasPrefix(openTag, rest) {
			t.held = append(t.held, s...) // white space, or the start of <think>
			return "", ""
		} else if !t.Opened {
			t.state = tagText
			return "", s
		}
		s, t.state = rest, tagOpened
		fallthrough
	case tagOpened, tagThinking:
		if t.state == tagOpened {
			if s = trimSpace(s, true); s == "" {
				return "", ""
			}
			t.state = tagThinking
		}
		if i := strings.Index(s, closeTag); i >= 0 {
			think, s, t.state = trimSpace(s[:i], false), s[i+len(closeTag):], tagClosed
		} else {
			// Keep back white space at the end and a start of </think>:
			// white space before </think> is dropped.
			cut := len(s)
			if i := strings.LastIndexByte(s, '<'); i >= 0 && strings.HasPrefix(closeTag, s[i:]) {
				cut = i
			}
			end := len(trimSpace(s[:cut], false))
			t.held = append(t.held, s[end:]...)
			return s[:end], ""
		}
		fallthrough
	case tagClosed:
		if s = trimSpace(s, true); s != "" {
			t.state = tagText
		}
		return think, s
	}
	return "", s
}

// Flush returns what is held at the end of the reply: the start of a
// <think> that never came is text (thinking when Opened), thinking cut
// before its </think> stays thinking.
func (t *InlineThinking) Flush() (think, text string) {
	s := string(t.held)
	t.held = t.held[:0]
	switch t.state {
	case tagStart:
		t.state = tagText
		if t.Opened && trimSpace(s, true) != "" {
			return trimSpace(s, true), ""
		}
		return "", s
	case tagThinking:
		if trimSpace(s, true) == "" {
			return "", ""
		}
		return s, ""
	}
	return "", ""
}

// Apart is for a server that sent thinking apart from the text (a
// reasoning field): it parsed the reply, so its text is text, <think> or
// not. It returns what was held, the text so far; after a piece of text
// has come it changes nothing and returns "".
func (t *InlineThinking) Apart() string {
	if t.state != tagStart {
		return ""
	}
	s := string(t.held)
	t.held, t.state = t.held[:0], tagText
	return s
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// trimSpace drops the ASCII white space at the start of s (left) or at
// its end.
func trimSpace(s string, left bool) string {
	for s != "" {
		i := len(s) - 1
		if left {
			i = 0
		}
		if !isSpace(s[i]) {
			break
		}
		if left {
			s = s[1:]
		} else {
			s = s[:i]
		}
	}
	return s
}
