package playground

import (
	"strings"

	"github.com/floehq/floe/engine/omni"
)

// Kind says what an [Item] of the transcript shows.
type Kind string

// Item kinds.
const (
	KindPrompt   Kind = "prompt"   // the user's prompt, as the host sent it (never streamed, E-3.4)
	KindUser     Kind = "user"     // user text from the stream: delivered steering
	KindThinking Kind = "thinking" // assistant thinking
	KindText     Kind = "text"     // assistant text
	KindTool     Kind = "tool"     // one tool call and its output, paired by tool_call_id
	KindRequest  Kind = "request"  // one LLM request: request_begin … request_end, its token_usage
	KindNotice   Kind = "notice"   // any other event: abort, tool_list_ready, compaction …
)

// Item is one element of the transcript. The fields used depend on Kind.
type Item struct {
	ID   int // position in the transcript, from 0
	Kind Kind

	Body       string // prompt, user, thinking, text, notice
	Streaming  bool   // a fragment is open
	StopReason string // of the complete message; "" until it arrived

	Tool    *ToolCard
	Request *Request
}

// ToolCard aggregates one tool call: its streamed arguments, the approval
// decision and its streamed output (PROTOCOL.md P-8).
type ToolCard struct {
	CallID, Name    string
	Args            string
	ArgsStreaming   bool
	CallStop        string // stop_reason of the complete tool_call
	Decision        string // "allow", "deny", "forbidden"; "" = none yet
	Output          string
	OutputStreaming bool
	OutputStop      string // stop_reason of the complete tool_call_output; "" = none yet
	Images          []string
}

// Request is one LLM request.
type Request struct {
	N            int    // 1-based, per transcript
	Status       string // "" while in flight
	ErrorMessage string
	Attempt      int
	RetryInMs    *int
	Usage        *omni.TokenCounts // this request's token_usage
}

// Transcript aggregates an ordered stream of OmniMessages into items, the
// way PROTOCOL.md P-8 describes a renderer: fragments are keyed by (type,
// tool_call_id); a start for a key still open closes the previous one; a
// delta or stop without a start opens one leniently; tool fragments go to the
// card of their tool_call_id, never by arrival. Not safe for concurrent use.
type Transcript struct {
	Items   []*Item
	Session omni.TokenCounts // the last token_usage's session counts
	Count   int              // messages applied

	open     map[fragKey]*Item // open fragments
	closed   map[string]*Item  // text/thinking item whose complete message is due, by partial type
	tools    map[string]*Item  // tool cards by tool_call_id
	requests int
	current  *Item // the request in flight
}

type fragKey struct{ typ, callID string }

// AddPrompt appends the host's prompt, which the stream never echoes.
func (t *Transcript) AddPrompt(text string) *Item {
	return t.add(&Item{Kind: KindPrompt, Body: text})
}

// Tool returns the card of callID, creating it at the end if needed.
func (t *Transcript) Tool(callID, name string) *Item {
	if it := t.tools[callID]; it != nil {
		if it.Tool.Name == "" {
			it.Tool.Name = name
		}
		return it
	}
	it := t.add(&Item{Kind: KindTool, Tool: &ToolCard{CallID: callID, Name: name}})
	if t.tools == nil {
		t.tools = map[string]*Item{}
	}
	t.tools[callID] = it
	return it
}

func (t *Transcript) add(it *Item) *Item {
	it.ID = len(t.Items)
	t.Items = append(t.Items, it)
	return it
}

// Apply adds one message of the stream and returns the item it changed, or
// nil when the message changes nothing shown (for example a subagent's
// session_meta).
func (t *Transcript) Apply(m omni.Message) *Item {
	t.Count++
	p := &m.Payload
	switch {
	case m.Type == omni.TypeModelMsg && m.IsPartial():
		return t.partial(p)
	case m.Type == omni.TypeModelMsg:
		return t.complete(p)
	case m.Type == omni.TypeEventMsg:
		return t.event(p)
	}
	return nil
}

func (t *Transcript) partial(p *omni.Payload) *Item {
	key := fragKey{p.Type, p.ToolCallID}
	it := t.open[key]
	if p.EventType == omni.EventStart || it == nil {
		if it != nil {
			t.closeFragment(key, it, "")
		}
		it = t.openFragment(key, p)
	}
	switch p.Type {
	case omni.PartialToolCall:
		it.Tool.Args += p.Arguments
	case omni.PartialToolCallOutput:
		it.Tool.Output += p.Output
		if len(p.Images) > 0 {
			it.Tool.Images = p.Images
		}
	default:
		it.Body += p.Body()
	}
	if p.EventType == omni.EventStop {
		t.closeFragment(key, it, p.StopReason)
	}
	return it
}

func (t *Transcript) openFragment(key fragKey, p *omni.Payload) *Item {
	var it *Item
	switch p.Type {
	case omni.PartialToolCall:
		it = t.Tool(p.ToolCallID, p.Name)
		it.Tool.Args, it.Tool.ArgsStreaming = "", true
	case omni.PartialToolCallOutput:
		it = t.Tool(p.ToolCallID, "")
		it.Tool.Output, it.Tool.OutputStreaming = "", true
	case omni.PartialThinking:
		it = t.add(&Item{Kind: KindThinking, Streaming: true})
	default:
		it = t.add(&Item{Kind: KindText, Streaming: true})
	}
	if t.open == nil {
		t.open = map[fragKey]*Item{}
	}
	t.open[key] = it
	return it
}

func (t *Transcript) closeFragment(key fragKey, it *Item, stop string) {
	delete(t.open, key)
	switch key.typ {
	case omni.PartialToolCall:
		it.Tool.ArgsStreaming = false
	case omni.PartialToolCallOutput:
		it.Tool.OutputStreaming = false
	default:
		it.Streaming = false
		if t.closed == nil {
			t.closed = map[string]*Item{}
		}
		t.closed[key.typ] = it
	}
}

// bubble returns the item a complete text or thinking message belongs to:
// the fragment it closes (P-6), or a new item when it came without one.
func (t *Transcript) bubble(partialType string, kind Kind) *Item {
	key := fragKey{partialType, ""}
	if it := t.open[key]; it != nil {
		t.closeFragment(key, it, "")
	}
	if it := t.closed[partialType]; it != nil {
		delete(t.closed, partialType)
		return it
	}
	return t.add(&Item{Kind: kind})
}

func (t *Transcript) complete(p *omni.Payload) *Item {
	switch p.Type {
	case omni.Text:
		if p.Role == omni.RoleUser {
			return t.add(&Item{Kind: KindUser, Body: p.Text, StopReason: p.StopReason})
		}
		it := t.bubble(omni.PartialText, KindText)
		it.Body, it.StopReason = p.Text, p.StopReason
		return it
	case omni.Thinking:
		it := t.bubble(omni.PartialThinking, KindThinking)
		it.Body, it.StopReason = p.Thinking, p.StopReason
		return it
	case omni.ToolCall:
		it := t.Tool(p.ToolCallID, p.Name)
		delete(t.open, fragKey{omni.PartialToolCall, p.ToolCallID})
		c := it.Tool
		c.Name, c.Args, c.ArgsStreaming, c.CallStop = p.Name, p.Arguments, false, p.StopReason
		return it
	case omni.ToolCallOutput:
		it := t.Tool(p.ToolCallID, "")
		delete(t.open, fragKey{omni.PartialToolCallOutput, p.ToolCallID})
		c := it.Tool
		c.Output, c.OutputStreaming, c.OutputStop = p.Output, false, p.StopReason
		if len(p.Images) > 0 {
			c.Images = p.Images
		}
		return it
	}
	return t.add(&Item{Kind: KindNotice, Body: p.Type + " message"})
}

func (t *Transcript) event(p *omni.Payload) *Item {
	switch p.Type {
	case omni.RequestBegin:
		t.requests++
		t.current = t.add(&Item{Kind: KindRequest, Request: &Request{N: t.requests}})
		return t.current
	case omni.RequestEnd:
		it := t.current
		if it == nil {
			t.requests++
			it = t.add(&Item{Kind: KindRequest, Request: &Request{N: t.requests}})
		}
		r := it.Request
		r.Status, r.ErrorMessage, r.Attempt, r.RetryInMs = p.Status, p.ErrorMessage, p.Attempt, p.RetryInMs
		t.current = nil
		return it
	case omni.TokenUsage:
		if p.Session != nil {
			t.Session = *p.Session
		}
		if t.current != nil && p.Request != nil {
			u := *p.Request
			t.current.Request.Usage = &u
		}
		return t.current
	case omni.ApprovalDecision:
		it := t.Tool(p.ToolCallID, "")
		it.Tool.Decision = p.Decision
		return it
	case omni.Abort:
		reason := p.Reason
		if p.ReasonNull {
			reason = "no reason given"
		}
		return t.add(&Item{Kind: KindNotice, Body: "Run aborted: " + reason})
	case omni.ToolListReady:
		names := make([]string, len(p.Tools))
		for i, d := range p.Tools {
			names[i] = d.Name
		}
		return t.add(&Item{Kind: KindNotice, Body: "Tools ready: " + strings.Join(names, ", ")})
	case omni.CompactionBegin:
		return t.add(&Item{Kind: KindNotice, Body: "Compaction started (" + p.Reason + ", " + p.Mode + ")"})
	case omni.CompactionEnd:
		return t.add(&Item{Kind: KindNotice, Body: "Compaction " + p.Status})
	}
	return t.add(&Item{Kind: KindNotice, Body: p.Type})
}

// SteeringText returns the body of a delivered steering message without its
// [user_steering] markers, or "" when text is not a steering block.
func SteeringText(text string) string {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, steerOpen) || !strings.HasSuffix(t, steerClose) {
		return ""
	}
	return strings.TrimSpace(t[len(steerOpen) : len(t)-len(steerClose)])
}
