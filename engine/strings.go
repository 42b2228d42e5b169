package engine

import (
	"regexp"
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

// Abort reasons (ENGINE.md §18).
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

// Unwrapping synthetic blocks: one pattern per tag and bracket form, since
// RE2 has no backreferences.
var unwrapPatterns = []*regexp.Regexp{
	regexp.MustCompile(`^\[turn_aborted\]\n?([\s\S]*?)\n?\[/turn_aborted\]\s*$`),
	regexp.MustCompile(`^\[turn_retried\]\n?([\s\S]*?)\n?\[/turn_retried\]\s*$`),
	regexp.MustCompile(`^<turn_aborted>\n?([\s\S]*?)\n?</turn_aborted>\s*$`),
	regexp.MustCompile(`^<turn_retried>\n?([\s\S]*?)\n?</turn_retried>\s*$`),
}

// unwrapBlock returns the inner text of a [turn_aborted]/[turn_retried]
// block (either bracket form) and whether text is such a block.
func unwrapBlock(text string) (string, bool) {
	for _, re := range unwrapPatterns {
		if m := re.FindStringSubmatch(text); m != nil {
			return m[1], true
		}
	}
	return "", false
}

var (
	summarySquare = regexp.MustCompile(`\[summary\]([\s\S]*?)\[/summary\]`)
	summaryAngle  = regexp.MustCompile(`<summary>([\s\S]*?)</summary>`)
	summaryTags   = regexp.MustCompile(`\[/?summary\]|</?summary>`)
)

// ExtractSummary implements EXTRACT of §18: the first non-empty summary
// block (square form first, then angle), else the text with every summary
// block and stray tag removed, trimmed. "" means failure.
func ExtractSummary(raw string) string {
	for _, re := range []*regexp.Regexp{summarySquare, summaryAngle} {
		for _, m := range re.FindAllStringSubmatch(raw, -1) {
			if s := jsTrim(summaryTags.ReplaceAllString(m[1], "")); s != "" {
				return s
			}
		}
	}
	rest := summarySquare.ReplaceAllString(raw, "")
	rest = summaryAngle.ReplaceAllString(rest, "")
	rest = summaryTags.ReplaceAllString(rest, "")
	return jsTrim(rest)
}
