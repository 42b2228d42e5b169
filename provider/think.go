package openai

import "strings"

// Inline thinking: a reasoning model served without a reasoning parser
// (Qwen3 or a DeepSeek-R1 distill on llama.cpp's server with
// --reasoning-format none, vLLM without --reasoning-parser, LM Studio
// without its setting, older Ollama) sends its thinking in content,
// between <think> and </think> at the start of the reply. tags splits it
// out, across chunks: the content of a reply that opens with <think>
// (after white space) is thinking until </think>, then text; any other
// content is text. The white space around the thinking is dropped.
type tags struct {
	state uint8  // one of the tag* states
	held  []byte // content kept back until it is known what it is
}

const (
	tagStart    = iota // no content yet but white space
	tagOpened          // after <think>, no thinking yet
	tagThinking        // in the thinking
	tagClosed          // after </think>, no text yet
	tagText            // the rest is text
)

const openTag, closeTag = "<think>", "</think>"

// feed takes the next piece of content and returns what of it, and of
// what was held, is thinking and what is text.
func (t *tags) feed(s string) (think, text string) {
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
		if !strings.HasPrefix(rest, openTag) {
			if len(rest) < len(openTag) && strings.HasPrefix(openTag, rest) {
				t.held = append(t.held, s...) // white space, or the start of <think>
				return "", ""
			}
			t.state = tagText
			return "", s
		}
		s, t.state = rest[len(openTag):], tagOpened
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

// flush returns what is held at the end of the reply: the start of a
// <think> that never came is text, thinking cut before its </think>
// stays thinking.
func (t *tags) flush() (think, text string) {
	s := string(t.held)
	t.held = t.held[:0]
	switch t.state {
	case tagStart:
		t.state = tagText
		return "", s
	case tagThinking:
		if trimSpace(s, true) == "" {
			return "", ""
		}
		return s, ""
	}
	return "", ""
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
