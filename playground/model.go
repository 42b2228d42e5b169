package playground

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// Model is a scripted [engine.LLM]: one stateful model context that answers
// from what it is sent, with no network. See the package doc for its script.
// A Model serves one request at a time, as the engine guarantees.
type Model struct {
	Workspace *Workspace       // file names the model may mention in count_lines
	Pace      Pace             // nil: no waiting between deltas
	Now       func() time.Time // message timestamps; nil = time.Now
	WordDelay time.Duration    // between two text or thinking deltas
	Demo      *Demo            // a demo script tried before the model's own script; nil: none

	mu       sync.Mutex
	calls    int               // tool calls issued, for ids
	names    map[string]string // tool_call_id → tool name
	context  int64             // characters in the context so far
	session  omni.TokenCounts
	requests int
	failed   map[string]bool   // "fail:" prompts whose first attempt failed
	prompts  []string          // the prompts seen, for a compaction's summary
	then     map[string]string // tool_call_id → the demo rule's answer once its outputs are back
}

// NewModel returns the playground's model for ws.
func NewModel(ws *Workspace, pace Pace) *Model {
	return &Model{Workspace: ws, Pace: pace, WordDelay: 30 * time.Millisecond}
}

// step is one message the model streams.
type step struct {
	kind string // omni.Thinking, omni.Text or omni.ToolCall
	body string // thinking / text / arguments
	name string // tool name
	id   string // tool_call_id
}

// StreamGenerate streams the reply to p.NewMessages and returns its outcome.
func (m *Model) StreamGenerate(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
	m.mu.Lock()
	defer m.mu.Unlock()
	// A request cut off by a reload is not in the history LoadHistory
	// gets, but its calls' outputs (interrupted) come back as input: new
	// ids must not repeat theirs, or the transcript pairs a new call with
	// the cut-off one's card.
	for _, in := range p.NewMessages {
		if t := in.Payload.Type; t == omni.ToolCallOutput || t == omni.ToolCall {
			m.seeID(in.Payload.ToolCallID)
		}
	}
	m.requests++
	in := readInput(p.NewMessages, m.names)
	if m.failFirst(in.latest) {
		return engine.Outcome{Status: omni.StatusFailed, ErrorMessage: "scripted failure: the demo model fails the first attempt of a \"fail:\" prompt"}
	}
	steps := m.plan(in)
	pr := &producer{pace: m.Pace, now: m.Now, emit: emit, delay: m.WordDelay}
	var out int64
	for _, s := range steps {
		if ctx.Err() != nil || !m.stream(ctx, pr, s) {
			return engine.Outcome{Status: omni.StatusAborted}
		}
		out += int64(len(s.body))
	}
	request := m.account(in.chars, out)
	pr.send(omni.TokenUsageMsg(m.session, request))
	return engine.Outcome{Status: omni.StatusCompleted}
}

func (m *Model) stream(ctx context.Context, pr *producer, s step) bool {
	switch s.kind {
	case omni.Thinking:
		return pr.fragment(ctx, omni.PartialThinking, "", "", words(s.body), nil, func(body, stop string) omni.Message {
			return omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.Thinking, Role: omni.RoleAssistant, Thinking: body, StopReason: stop}}
		})
	case omni.Text:
		return pr.fragment(ctx, omni.PartialText, "", "", words(s.body), nil, func(body, stop string) omni.Message {
			return omni.AssistantText(body, stop)
		})
	default:
		return pr.fragment(ctx, omni.PartialToolCall, s.id, s.name, argChunks(s.body), nil, func(body, stop string) omni.Message {
			c := omni.ToolCallMsg(s.id, s.name, body)
			c.Payload.StopReason = stop
			return c
		})
	}
}

// account adds one request's tokens (estimated at four characters a token)
// to the session and returns the request's counts.
func (m *Model) account(in, out int64) omni.TokenCounts {
	cached := m.context / 4
	m.context += in + out
	req := omni.TokenCounts{CacheRead: cached, Output: (out + 3) / 4, Total: (m.context + 3) / 4}
	m.session = m.session.Add(req)
	return req
}

// argChunks splits tool arguments (or a long word) into a few pieces for
// streaming, of about 12 bytes, each of whole characters (a delta is text:
// half a character would cross to the page as U+FFFD).
func argChunks(args string) []string {
	var out []string
	for len(args) > 12 {
		n := 12
		for n > 1 && !utf8.RuneStart(args[n]) {
			n--
		}
		out = append(out, args[:n])
		args = args[n:]
	}
	return append(out, args)
}

func (m *Model) newCall(name string, args any) step {
	m.calls++
	id := fmt.Sprintf("call_%d_%d", m.requests, m.calls)
	if m.names == nil {
		m.names = map[string]string{}
	}
	m.names[id] = name
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // arguments as a model writes them: "=>" stays "=>"
	enc.Encode(args)
	return step{kind: omni.ToolCall, name: name, id: id, body: strings.TrimSuffix(b.String(), "\n")}
}

// plan decides the reply: a new prompt gets tool calls; tool outputs get a
// summary; steering alone gets an acknowledgement.
func (m *Model) plan(in input) []step {
	switch {
	case in.prompt == CompactionPrompt:
		return m.summaryReply()
	case in.prompt != "":
		m.prompts = append(m.prompts, in.prompt)
		// A command is the latest prompt's: after a reload cut a task
		// off, its unanswered prompt is carried over before the new one
		// (ENGINE.md §17), and "stream 3000\nhelp" is no command.
		latest := strings.TrimPrefix(in.latest, "fail: ")
		if r := m.Demo.find(latest); r != nil {
			return m.planRule(r, in)
		}
		if steps, ok := m.command(latest); ok {
			return steps
		}
		return m.planPrompt(in)
	case len(in.outputs) > 0:
		if then, ok := m.then[in.outputs[0].id]; ok {
			return planThen(then, in)
		}
		return planSummary(in)
	case len(in.steering) > 0:
		return []step{
			{kind: omni.Thinking, body: "The task was done, but the user added something while I was answering."},
			{kind: omni.Text, body: steeringReply(in)},
		}
	default:
		return []step{{kind: omni.Text, body: "I was sent nothing new, so there is nothing to do."}}
	}
}

// planRule answers a prompt by a demo script's rule r: its thinking, its
// answer and its calls, after which their outputs get r.Then (the
// model's own summary when it is empty).
func (m *Model) planRule(r *DemoRule, in input) []step {
	var steps []step
	think := r.Think
	if in.interrupted && think != "" {
		think = "The previous turn was interrupted; I start over. " + think
	}
	if think != "" {
		steps = append(steps, step{kind: omni.Thinking, body: think})
	}
	if r.Say != "" {
		steps = append(steps, step{kind: omni.Text, body: r.Say})
	}
	if len(in.steering) > 0 {
		steps = append(steps, step{kind: omni.Text, body: steeringReply(in)})
	}
	for _, c := range r.Calls {
		s := m.newCall(c.Tool, c.Args)
		if r.Then != "" {
			if m.then == nil {
				m.then = map[string]string{}
			}
			m.then[s.id] = r.Then
		}
		steps = append(steps, s)
	}
	return steps
}

// planThen answers the outputs of a demo rule's calls with its then.
func planThen(then string, in input) []step {
	if len(in.steering) > 0 {
		then += "\n\n" + steeringReply(in)
	}
	return []step{{kind: omni.Text, body: then}}
}

func (m *Model) planPrompt(in input) []step {
	var mentioned []string
	if m.Workspace != nil {
		mentioned = m.Workspace.mentioned(in.prompt)
	}
	think := fmt.Sprintf("The user asks: %q. I cannot see the workspace yet, so I will list its files and count their lines; both tools can run at the same time.", in.prompt)
	text := "Let me look at the workspace first: I'll list the files and count the lines."
	if len(mentioned) > 0 {
		think = fmt.Sprintf("The user asks: %q and names %s. I will list the workspace and count the lines of %s.", in.prompt, strings.Join(mentioned, ", "), plural(len(mentioned), "that file", "those files"))
		text = "Let me list the workspace and count the lines of " + strings.Join(mentioned, ", ") + "."
	}
	if in.interrupted {
		think = "The previous turn was interrupted; I start over. " + think
	}
	steps := []step{{kind: omni.Thinking, body: think}, {kind: omni.Text, body: text}}
	steps = append(steps, m.newCall(ToolListFiles, map[string]string{"dir": ""}))
	paths := mentioned
	if paths == nil {
		paths = []string{}
	}
	steps = append(steps, m.newCall(ToolCountLines, map[string][]string{"paths": paths}))
	if len(in.steering) > 0 {
		steps = append(steps[:2:2], append([]step{{kind: omni.Text, body: steeringReply(in)}}, steps[2:]...)...)
	}
	return steps
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
