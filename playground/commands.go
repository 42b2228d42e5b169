package playground

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/floehq/floe/engine/omni"
)

// CompactionPrompt is the playground's summarize prompt (engine.Compaction.Prompt);
// the scripted model answers it with a [summary] block.
const CompactionPrompt = "Summarize the conversation so far for a fresh context: what the user asked and what was found."

// Commands the scripted model understands, by how a prompt starts. Anything
// else gets the default script (list_files and count_lines). They exist so
// that a person — or a test — can make the demo model use every tool.
//
//	write PATH: CONTENT     write_file
//	read PATH               read_file
//	edit PATH: OLD => NEW   edit_file
//	delete PATH             delete_file
//	js: CODE                run_js
//	subagent: TASK          subagent
//	echo: TEXT              TEXT as thinking and as the answer (Markdown)
//	stream N                an answer of N words of Markdown
//	fail: PROMPT            the first attempt fails (a retry follows), then PROMPT as usual
var commandHelp = []string{"write PATH: CONTENT", "read PATH", "edit PATH: OLD => NEW", "delete PATH", "js: CODE", "subagent: TASK", "echo: TEXT", "stream N", "fail: PROMPT"}

// command plans a reply to a command prompt; ok is false for a plain prompt.
func (m *Model) command(prompt string) (steps []step, ok bool) {
	head, rest, _ := strings.Cut(prompt, " ")
	low := strings.ToLower(head)
	arg := strings.TrimSpace(rest)
	pathAnd := func(s string) (string, string) {
		p, body, _ := strings.Cut(s, ":")
		return strings.TrimSpace(p), strings.TrimPrefix(body, " ")
	}
	think := func(s string) step { return step{kind: omni.Thinking, body: s} }
	say := func(s string) step { return step{kind: omni.Text, body: s} }
	switch {
	case low == "write" && strings.Contains(arg, ":"):
		p, body := pathAnd(arg)
		return []step{think("The user wants " + p + " written."), say("Writing `" + p + "`."),
			m.newCall(ToolWriteFile, map[string]string{"path": p, "content": body})}, true
	case low == "read" && arg != "":
		return []step{think("The user wants " + arg + " read."), say("Reading `" + arg + "`."),
			m.newCall(ToolReadFile, map[string]string{"path": arg})}, true
	case low == "edit" && strings.Contains(arg, ":"):
		p, body := pathAnd(arg)
		oldText, newText, _ := strings.Cut(body, " => ")
		return []step{think("An exact-match edit of " + p + "."), say("Editing `" + p + "`."),
			m.newCall(ToolEditFile, map[string]string{"path": p, "old_text": oldText, "new_text": newText})}, true
	case low == "delete" && arg != "":
		return []step{think("The user wants " + arg + " deleted."), say("Deleting `" + arg + "`."),
			m.newCall(ToolDeleteFile, map[string]string{"path": arg})}, true
	case low == "js:":
		return []step{think("I will run that in the JavaScript sandbox."), say("Running it in a sandboxed Worker."),
			m.newCall(ToolRunJS, map[string]string{"code": rest})}, true
	case low == "subagent:":
		return []step{think("This is a task for a subagent."), say("I'll hand that to a subagent."),
			m.newCall(ToolSubagent, map[string]string{"task": arg})}, true
	case low == "echo:":
		return []step{think(rest), say(rest)}, true
	case low == "stream":
		n, err := strconv.Atoi(arg)
		if err != nil || n <= 0 {
			return nil, false
		}
		return []step{say(MarkdownWords(min(n, 1_000_000)))}, true
	case low == "help" || low == "commands":
		return []step{say("I understand these commands:\n\n- `" + strings.Join(commandHelp, "`\n- `") + "`\n\nAnything else: I look around the workspace.")}, true
	}
	return nil, false
}

// MarkdownWords is a Markdown text of n words (n chunks when streamed):
// paragraphs with emphasis, inline code and links, lists and code blocks.
func MarkdownWords(n int) string {
	pieces := []string{"Streaming ", "**Markdown** ", "with ", "`inline code`, ", "a ", "[link](https://example.com/docs) ", "and ", "_emphasis_. "}
	var b strings.Builder
	for i := 0; i < n; i++ {
		switch {
		case i > 0 && i%120 == 0:
			b.WriteString("\n\n```go\nfunc step() int { return " + strconv.Itoa(i) + " }\n```\n\n")
		case i > 0 && i%60 == 0:
			b.WriteString("\n\n- item " + strconv.Itoa(i) + "\n- item two\n\n")
		case i > 0 && i%30 == 0:
			b.WriteString("\n\n")
		}
		b.WriteString(pieces[i%len(pieces)])
	}
	return b.String()
}

// failFirst reports whether this attempt of a "fail:" prompt must fail: the
// first attempt of each such prompt does.
func (m *Model) failFirst(prompt string) bool {
	if !strings.HasPrefix(strings.ToLower(prompt), "fail:") {
		return false
	}
	if m.failed == nil {
		m.failed = map[string]bool{}
	}
	if m.failed[prompt] {
		return false
	}
	m.failed[prompt] = true
	return true
}

// summaryReply answers the compaction prompt.
func (m *Model) summaryReply() []step {
	body := "[summary]\nThe user asked: " + strings.Join(m.prompts, "; ") + ". The scripted model answered each from the workspace tools.\n[/summary]"
	if len(m.prompts) == 0 {
		body = "[summary]\nNothing was asked yet.\n[/summary]"
	}
	return []step{{kind: omni.Text, body: body}}
}

// seeID makes the numbering of new tool calls continue past id, a call of
// the history or of a request's input.
func (m *Model) seeID(id string) {
	var r, c int
	if _, err := fmt.Sscanf(id, "call_%d_%d", &r, &c); err == nil {
		m.requests = max(m.requests, r)
		m.calls = max(m.calls, c)
	}
}

// LoadHistory implements engine.HistoryLoader: a resumed model continues
// the numbering of its tool calls and knows which tool each earlier call
// used, so new ids never collide with stored ones.
func (m *Model) LoadHistory(_ context.Context, history []omni.Message) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.names == nil {
		m.names = map[string]string{}
	}
	for _, h := range history {
		p := h.Payload
		switch {
		case p.Type == omni.ToolCall:
			m.names[p.ToolCallID] = p.Name
			m.calls++
			m.seeID(p.ToolCallID)
		case p.Type == omni.Text && p.Role == omni.RoleUser:
			if t := strings.TrimSpace(p.Text); t != "" && !strings.HasPrefix(t, "[") {
				m.prompts = append(m.prompts, t)
			}
		case p.Type == omni.Text:
			m.context += int64(len(p.Text))
		}
	}
	return nil
}
