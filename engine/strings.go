package engine

import (
	"strconv"
	"strings"

	"github.com/floehq/floe/engine/omni"
)

// Exact strings of ENGINE.md §18.
const (
	DeniedByUser       = "Tool call denied by user."
	DeniedByPolicy     = "Tool call denied by policy."
	ToolErrorPrefix    = "[tool error] "
	NoOutput           = "[no output]"
	InterruptedByUser  = "[interrupted: tool aborted by user]"
	InterruptedByExit  = "[interrupted: process exited before the tool finished]"
	CompactionRepair   = "[tool error] the compaction request expects a summary, not tool calls"
	CompactionGuidance = "Your previous reply was not a usable summary. Reply again with text only, no tool calls, in exactly this format and nothing after it:\n\n[summary]put the summary text here...[/summary]"

	errSummaryToolCalls = "the response called tools instead of writing a summary"
	errSummaryEmpty     = "the response contained no usable summary"
)

// Abort reasons (ENGINE.md §18); see also the Reason…Prefix constants.
const (
	ReasonUser          = "aborted by user"
	ReasonBackoff       = "aborted during reconnect backoff"
	ReasonCompactAbort  = "aborted during compaction"
	ReasonCompactFailed = "compaction failed"
)

// MaxTurnsText is the max_turns notice of E-12.2.
func MaxTurnsText(n int) string { return "[reached max turns (" + strconv.Itoa(n) + "); stopping]" }

// block wraps lines in [tag]…[/tag] (§18 blocks).
func block(tag string, lines []string) string {
	var b strings.Builder
	b.WriteString("[" + tag + "]\n")
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteString("[/" + tag + "]")
	return b.String()
}

// ContextSummary is the [context_summary] block of a summary.
func ContextSummary(summary string) string {
	return "[context_summary]\n" + summary + "\n[/context_summary]"
}

// SteeringBlock is the [user_steering] block of one steering entry.
func SteeringBlock(body string) string { return "[user_steering]\n" + body + "\n[/user_steering]" }

// Transcript lines (§18).
func lineUserInput(text string) string { return "  [user_input]" + text + "[/user_input]" }

func lineSegment(m *omni.Message) string {
	if m.Payload.Type == omni.Thinking {
		return "  [thinking]" + m.Payload.Thinking + "[/thinking]"
	}
	return "  [text]" + m.Payload.Text + "[/text]"
}

func lineToolCall(m *omni.Message) string {
	return "  [tool_call name=\"" + m.Payload.Name + "\" id=\"" + m.Payload.ToolCallID + "\"]" + m.Payload.Arguments + "[/tool_call]"
}

func lineToolOutput(m *omni.Message) string {
	st := m.Payload.StopReason
	if st == "" {
		st = omni.StatusCompleted
	}
	return "  [tool_call_output id=\"" + m.Payload.ToolCallID + "\" status=\"" + st + "\"]" + m.Payload.Output + "[/tool_call_output]"
}

// Unwrapping synthetic blocks (§18): a text matching
// ^\[(turn_aborted|turn_retried)\]\n?([\s\S]*?)\n?\[/\1\]\s*$ or the same
// with <tag>…</tag> contributes its group 2. Hand-written rather than with
// regexp, which would add about 100 KB to the WebAssembly build; a test
// checks both agree.
var blockForms = [][2]string{
	{"[turn_aborted]", "[/turn_aborted]"},
	{"[turn_retried]", "[/turn_retried]"},
	{"<turn_aborted>", "</turn_aborted>"},
	{"<turn_retried>", "</turn_retried>"},
}

// unwrapBlock returns the inner text of a [turn_aborted]/[turn_retried]
// block (either bracket form) and whether text is such a block.
func unwrapBlock(text string) (string, bool) {
	for _, f := range blockForms {
		if inner, ok := unwrapForm(text, f[0], f[1]); ok {
			return inner, true
		}
	}
	return "", false
}

func unwrapForm(text, open, close string) (string, bool) {
	if !strings.HasPrefix(text, open) {
		return "", false
	}
	start := len(open)
	if start < len(text) && text[start] == '\n' {
		start++
	}
	for c := start; ; c++ {
		i := strings.Index(text[c:], close)
		if i < 0 {
			return "", false
		}
		c += i
		if reSpaceOnly(text[c+len(close):]) {
			inner := text[start:c]
			if c > start && text[c-1] == '\n' {
				inner = text[start : c-1]
			}
			return inner, true
		}
	}
}

// reSpaceOnly reports whether s holds only RE2's \s characters.
func reSpaceOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\f', '\r':
		default:
			return false
		}
	}
	return true
}

// summaryForms are the square and the legacy angle summary tags.
var summaryForms = [][2]string{{"[summary]", "[/summary]"}, {"<summary>", "</summary>"}}

// blocks returns the [start, end) spans and inner texts of the
// non-overlapping open…close blocks of s, leftmost first, shortest inner
// text (the regexp open([\s\S]*?)close).
func blocks(s, open, close string) (spans [][2]int, inner []string) {
	for pos := 0; ; {
		i := strings.Index(s[pos:], open)
		if i < 0 {
			return
		}
		i += pos
		j := strings.Index(s[i+len(open):], close)
		if j < 0 {
			return
		}
		j += i + len(open)
		spans = append(spans, [2]int{i, j + len(close)})
		inner = append(inner, s[i+len(open):j])
		pos = j + len(close)
	}
}

// stripSummaryTags removes every [summary], [/summary], <summary> and
// </summary> in one left-to-right pass.
func stripSummaryTags(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		skipped := false
		for _, f := range summaryForms {
			for _, tag := range f {
				if strings.HasPrefix(s[i:], tag) {
					i += len(tag)
					skipped = true
					break
				}
			}
			if skipped {
				break
			}
		}
		if !skipped {
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String()
}

// removeBlocks removes every open…close block of s.
func removeBlocks(s, open, close string) string {
	spans, _ := blocks(s, open, close)
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp[0]])
		last = sp[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// ExtractSummary implements EXTRACT of §18: the first non-empty summary
// block (square form first, then angle), else the text with every summary
// block and stray tag removed, trimmed. "" means failure.
func ExtractSummary(raw string) string {
	for _, f := range summaryForms {
		_, inner := blocks(raw, f[0], f[1])
		for _, in := range inner {
			if s := jsTrim(stripSummaryTags(in)); s != "" {
				return s
			}
		}
	}
	rest := removeBlocks(raw, summaryForms[0][0], summaryForms[0][1])
	rest = removeBlocks(rest, summaryForms[1][0], summaryForms[1][1])
	return jsTrim(stripSummaryTags(rest))
}

// The prefixes of the abort reasons that carry a detail (ENGINE.md §18): an
// abort message's Payload.Reason() is ReasonUser, ReasonBackoff,
// ReasonCompactAbort, ReasonCompactFailed, or one of these followed by
// what its comment says. MSG is the outcome's error message, "unknown"
// when it had none; N the retries.
const (
	ReasonLLMErrorPrefix        = "llm request error: "              // + MSG: auth, or a permanent failed
	ReasonReconnectFailedPrefix = "reconnect failed after "          // + N + " retries": the last try timed out
	ReasonMalformedPrefix       = "malformed response failed after " // + N + " retries": the last try was malformed
	ReasonRequestFailedPrefix   = "llm request failed after "        // + N + " retries: " + MSG: the last try failed
	ReasonEngineFailurePrefix   = "engine failure: "                 // + the panic's text: the engine failed (a bug; not in §18)
)
