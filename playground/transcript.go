package playground

import (
	"strconv"
	"strings"
	"time"
	"unsafe"

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
	KindNotice   Kind = "notice"   // any other event: abort, tool_list_ready …
	KindCompact  Kind = "compact"  // one compaction: compaction_begin … compaction_end
	KindSubagent Kind = "subagent" // a subagent whose messages arrived with no tool card to host them
	KindFile     Kind = "file"     // a file the model made (an assistant's inline_data): an image drawn, any file offered for a download
)

// Item is one element of the transcript. The fields used depend on Kind.
type Item struct {
	ID   int // position in the transcript, from 0
	Kind Kind

	Body       string   // prompt, user, thinking, text, notice
	Images     []string // prompt, user: the image_url messages that came with it (and image inline_data, as data: URLs); file: an image's data: URL
	File       *File    // file
	Streaming  bool     // a fragment is open
	StopReason string   // of the complete message; "" until it arrived

	Tool    *ToolCard
	Request *Request
	Sub     *Transcript // a subagent's transcript, nested in this card (KindTool, KindSubagent)
	T       *Transcript // the transcript the item belongs to
}

// File is a file the model made (an assistant's inline_data message).
type File struct {
	MimeType string
	Data     string // base64
	Name     string // the name a download takes (FileName)
}

// FileName names the n-th file a model made for a download: "image-1.png",
// "file-2.pdf"; the extension is the media type's subtype when it is a
// plain word of at most 8 letters and digits ("bin" when not), a few as
// their usual extension (as the JavaScript transcript() names them).
func FileName(mime string, n int) string {
	mime = strings.ToLower(strings.TrimSpace(strings.Split(mime, ";")[0]))
	typ, sub, _ := strings.Cut(mime, "/")
	sub = strings.TrimPrefix(sub, "x-")
	if i := strings.IndexByte(sub, '+'); i >= 0 {
		sub = sub[:i]
	}
	switch sub {
	case "jpeg":
		sub = "jpg"
	case "plain":
		sub = "txt"
	case "markdown":
		sub = "md"
	case "octet-stream":
		sub = "bin"
	case "javascript":
		sub = "js"
	}
	ok := sub != "" && len(sub) <= 8
	for i := 0; i < len(sub); i++ {
		if c := sub[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			ok = false
		}
	}
	if !ok {
		sub = "bin"
	}
	what := "file-"
	if typ == "image" {
		what = "image-"
	}
	return what + strconv.Itoa(n) + "." + sub
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
	Started, Ended  time.Time // when it was allowed / when its output completed (zero: not yet, or no clock)
	Cancelled       string    // the reason of an abort that came while the call waited for its decision
	called          bool      // its complete tool_call came: a later call of the id is another call
}

// Request is one LLM request.
type Request struct {
	N            int    // 1-based, per transcript
	Status       string // "" while in flight
	ErrorMessage string
	Attempt      int
	RetryInMs    *int
	Ended        time.Time         // when request_end arrived (zero without a clock): the retry counts from it
	Usage        *omni.TokenCounts // this request's token_usage
	Answered     bool              // the model gave text, thinking or a tool call
}

// Transcript aggregates an ordered stream of OmniMessages into items, the
// way PROTOCOL.md P-8 describes a renderer: fragments are keyed by (type,
// tool_call_id); a start for a key still open closes the previous one; a
// delta or stop without a start opens one leniently; tool fragments go to the
// card of their tool_call_id, never by arrival. Not safe for concurrent use.
//
// Messages with an origin belong to a subagent (ENGINE.md §15): they go to
// the nested transcript of the child named by origin[0] — in the tool card
// [Transcript.Link] named for it, else in a subagent item of its own — so a
// child's tool_call_id never meets the parent's.
type Transcript struct {
	Items   []*Item
	Session omni.TokenCounts // the last token_usage's session counts
	Count   int              // messages applied
	Now     func() time.Time // stamps tool and retry times; nil: none
	Host    *Item            // the item this transcript is nested in; nil at the root
	ID      string           // the child's id (origin element); "" at the root

	open      map[fragKey]*Item // open fragments
	closed    map[string]*Item  // text/thinking item whose complete message is due, by partial type
	tools     map[string]*Item  // tool cards by tool_call_id
	requests  int
	files     int                          // the files the model made, which their names count
	current   *Item                        // the request in flight
	bufs      map[fragKey]*strings.Builder // the open fragments' texts as they grow (grow)
	compact   *Item                        // the compaction in flight
	compacted *Item                        // a stored compaction just ended: its new context's first records fold into it
	children  map[string]*Transcript
	links     map[string]string // child id → tool_call_id of the card that runs it
}

func (t *Transcript) now() time.Time {
	if t.Now == nil {
		return time.Time{}
	}
	return t.Now()
}

// Link says that the child session childID is run by the tool call callID
// of this transcript: its messages will be shown nested in that card.
func (t *Transcript) Link(childID, callID string) {
	if t.links == nil {
		t.links = map[string]string{}
	}
	t.links[childID] = callID
}

// linkStored links the child childID of a stored Trace's subagent pointer
// to the call that ran it. The pointer is written when the child starts,
// while its call waits for its output, and names no call: it goes to the
// first subagent call of the current run (since the last prompt) that has
// no output and no child shown yet (a pointer whose child is not stored
// shows none, and leaves the call to the next pointer); with none, the
// child gets an item of its own.
func (t *Transcript) linkStored(childID string) {
	if childID == "" || t.children[childID] != nil {
		return
	}
	if _, ok := t.links[childID]; ok {
		return
	}
	var host *Item
	for i := len(t.Items) - 1; i >= 0; i-- {
		it := t.Items[i]
		if it.Kind == KindPrompt {
			break
		}
		if c := it.Tool; c != nil && c.Name == ToolSubagent && c.OutputStop == "" && it.Sub == nil {
			host = it
		}
	}
	if host != nil {
		t.Link(childID, host.Tool.CallID)
	}
}

// Child returns the nested transcript of childID, creating it (and its
// host) when needed.
func (t *Transcript) Child(childID string) *Transcript {
	if c := t.children[childID]; c != nil {
		return c
	}
	var host *Item
	if id, ok := t.links[childID]; ok {
		host = t.Tool(id, "")
	} else {
		host = t.add(&Item{Kind: KindSubagent, Body: childID})
	}
	c := &Transcript{Now: t.Now, Host: host, ID: childID}
	host.Sub = c
	if t.children == nil {
		t.children = map[string]*Transcript{}
	}
	t.children[childID] = c
	return c
}

// Find returns the transcript of origin (nil or empty: t itself).
func (t *Transcript) Find(origin []string) *Transcript {
	for _, id := range origin {
		t = t.Child(id)
	}
	return t
}

// Path is the origin of t from the root.
func (t *Transcript) Path() []string {
	var out []string
	for c := t; c != nil && c.Host != nil; c = c.Host.T {
		out = append([]string{c.ID}, out...)
	}
	return out
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

// call returns the card for a call's partial_tool_call start or complete
// tool_call: a new one when the id's card already has its complete call (a
// model that reuses ids across requests, as some servers do, or a call
// numbered again after a reload), so the new call is not drawn into the
// old card.
func (t *Transcript) call(callID, name string) *Item {
	if it := t.tools[callID]; it != nil && it.Tool.called {
		delete(t.tools, callID)
	}
	return t.Tool(callID, name)
}

func (t *Transcript) add(it *Item) *Item {
	it.ID = len(t.Items)
	it.T = t
	t.Items = append(t.Items, it)
	return it
}

// Apply adds one message of the stream and returns the item it changed, or
// nil when the message changes nothing shown (for example a subagent's
// session_meta).
func (t *Transcript) Apply(m omni.Message) *Item {
	t.Count++
	if len(m.Origin) > 0 {
		c := t.Child(m.Origin[0])
		m.Origin = m.Origin[1:]
		c.Count--
		return c.Apply(m)
	}
	p := &m.Payload
	if m.Type == omni.TypeModelMsg && p.Role == omni.RoleAssistant && t.current != nil {
		t.current.Request.Answered = true
	}
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
		it.Tool.Args = t.grow(key, it.Tool.Args, p.Arguments)
	case omni.PartialToolCallOutput:
		it.Tool.Output = t.grow(key, it.Tool.Output, p.Output)
		if len(p.Images()) > 0 {
			it.Tool.Images = p.Images()
		}
	default:
		it.Body = t.grow(key, it.Body, p.Body())
	}
	if p.EventType == omni.EventStop {
		t.closeFragment(key, it, p.StopReason)
	}
	return it
}

// grow returns cur, the text of the open fragment key so far, with add
// appended. The text grows in a buffer of the fragment's: cur += add
// copied the whole text at each delta, quadratic in a long reply (one of
// 40,000 words took 15 s to show). A text set meanwhile by something else
// (a complete message) starts a new buffer.
func (t *Transcript) grow(key fragKey, cur, add string) string {
	b := t.bufs[key]
	if b == nil || b.Len() != len(cur) || (len(cur) > 0 && unsafe.StringData(b.String()) != unsafe.StringData(cur)) {
		b = &strings.Builder{}
		b.Grow(len(cur) + len(add))
		b.WriteString(cur)
		if t.bufs == nil {
			t.bufs = map[fragKey]*strings.Builder{}
		}
		t.bufs[key] = b
	}
	b.WriteString(add)
	return b.String()
}

func (t *Transcript) openFragment(key fragKey, p *omni.Payload) *Item {
	var it *Item
	switch p.Type {
	case omni.PartialToolCall:
		it = t.call(p.ToolCallID, p.Name)
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
	delete(t.bufs, key)
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
		it := t.call(p.ToolCallID, p.Name)
		delete(t.open, fragKey{omni.PartialToolCall, p.ToolCallID})
		c := it.Tool
		c.Name, c.Args, c.ArgsStreaming, c.CallStop = p.Name, p.Arguments, false, p.StopReason
		c.called = true
		return it
	case omni.ImageURL:
		// A user's image goes with the prompt or user text just before it
		// (a prompt of text and images is a message each).
		if n := len(t.Items); n > 0 && (t.Items[n-1].Kind == KindPrompt || t.Items[n-1].Kind == KindUser) {
			it := t.Items[n-1]
			it.Images = append(it.Images, p.ImageURL())
			return it
		}
		return t.add(&Item{Kind: KindUser, Images: []string{p.ImageURL()}})
	case omni.InlineData:
		url := "data:" + p.MimeType() + ";base64," + p.Data()
		image := len(p.MimeType()) > 6 && strings.EqualFold(p.MimeType()[:6], "image/")
		if p.Role == omni.RoleAssistant {
			// A file the model made (an image an image model generated):
			// an image is drawn as a user's is, any file offered for a
			// download.
			t.files++
			it := &Item{Kind: KindFile, StopReason: p.StopReason, File: &File{MimeType: p.MimeType(), Data: p.Data(), Name: FileName(p.MimeType(), t.files)}}
			if image {
				it.Images = []string{url}
			}
			return t.add(it)
		}
		if image { // a user's image, as an image_url
			if n := len(t.Items); n > 0 && (t.Items[n-1].Kind == KindPrompt || t.Items[n-1].Kind == KindUser) {
				it := t.Items[n-1]
				it.Images = append(it.Images, url)
				return it
			}
			return t.add(&Item{Kind: KindUser, Images: []string{url}})
		}
	case omni.ToolCallOutput:
		it := t.Tool(p.ToolCallID, "")
		delete(t.open, fragKey{omni.PartialToolCallOutput, p.ToolCallID})
		c := it.Tool
		c.Output, c.OutputStreaming, c.OutputStop = p.Output, false, p.StopReason
		c.Ended = t.now()
		if len(p.Images()) > 0 {
			c.Images = p.Images()
		}
		return it
	}
	return t.add(&Item{Kind: KindNotice, Body: p.Type + " message"})
}

func (t *Transcript) event(p *omni.Payload) *Item {
	switch p.Type {
	case omni.RequestBegin:
		if t.current != nil {
			// A request with no end before the next one: a stored Trace's
			// request cut off by a reload, the session resumed since.
			t.current.Request.Status = "interrupted"
		}
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
		r.Status, r.ErrorMessage, r.Attempt, r.RetryInMs = p.Status(), p.ErrorMessage(), p.Attempt(), p.RetryInMs()
		r.Ended = t.now()
		t.current = nil
		return it
	case omni.TokenUsage:
		if p.Session() != nil {
			t.Session = *p.Session()
		}
		if t.current != nil && p.Request() != nil {
			u := *p.Request()
			t.current.Request.Usage = &u
		}
		return t.current
	case omni.ApprovalDecision:
		it := t.Tool(p.ToolCallID, "")
		it.Tool.Decision = p.Decision()
		if p.Decision() == omni.DecisionAllow {
			it.Tool.Started = t.now()
		}
		return it
	case omni.Abort:
		reason := p.Reason()
		if p.ReasonNull() {
			reason = "no reason given"
		}
		// A call still waiting for its decision was cancelled: it has no
		// output, and a reopened session must not call it interrupted.
		for _, it := range t.Items {
			if c := it.Tool; c != nil && c.called && c.Decision == "" && c.OutputStop == "" {
				c.Cancelled = reason
			}
		}
		return t.add(&Item{Kind: KindNotice, Body: "Run aborted: " + reason})
	case omni.ToolListReady:
		names := make([]string, len(p.Tools()))
		for i, d := range p.Tools() {
			names[i] = d.Name
		}
		return t.add(&Item{Kind: KindNotice, Body: "Tools ready: " + strings.Join(names, ", ")})
	case omni.Subagent:
		// A stored Trace's pointer to a child session (E-15.3; never
		// streamed): the child's records follow it (trace.History).
		t.linkStored(p.SessionID())
		return nil
	case omni.CompactionBegin:
		t.compact = t.add(&Item{Kind: KindCompact, Body: p.Reason() + ", " + p.Mode(), Streaming: true})
		return t.compact
	case omni.CompactionEnd:
		it := t.compact
		if it == nil {
			it = t.add(&Item{Kind: KindCompact, Body: p.Reason() + ", " + p.Mode()})
		}
		t.compact = nil
		it.Streaming, it.StopReason = false, p.Status()
		if p.ErrorMessage() != "" {
			it.Body += " · " + p.ErrorMessage()
		}
		return it
	}
	return t.add(&Item{Kind: KindNotice, Body: p.Type})
}

// SteeringText returns the body of a delivered steering message without its
// [user_steering] markers, and whether text is a steering block at all (the
// body of a steering of images only is "").
func SteeringText(text string) (string, bool) {
	t := strings.TrimSpace(text)
	if len(t) < len(steerOpen)+len(steerClose) || !strings.HasPrefix(t, steerOpen) || !strings.HasSuffix(t, steerClose) {
		return "", false
	}
	return strings.TrimSpace(t[len(steerOpen) : len(t)-len(steerClose)]), true
}

// ApplyRecord adds one stored Trace record (engine/trace): like [Transcript.Apply],
// except that the user's prompts, which a live stream never echoes, come
// back from the Trace and are shown as prompts. Session metadata and a
// compaction's summary record are left out.
func (t *Transcript) ApplyRecord(m omni.Message) *Item {
	p := &m.Payload
	if m.Type == omni.TypeSessionMeta {
		return nil
	}
	if len(m.Origin) == 0 {
		// A compaction is one collapsed row, as it is live: its own request
		// (the prompt, the summary, the request's events) is stored between
		// its begin and its end but never streamed; the new context's
		// tool_list_ready and summary follow its end.
		if t.compact != nil && p.Type != omni.CompactionEnd {
			if p.Type == omni.TokenUsage {
				return t.Apply(m)
			}
			return nil
		}
		if c := t.compacted; c != nil {
			switch {
			case p.Type == omni.ToolListReady:
				return nil
			case p.Type == omni.Text && p.Role == omni.RoleUser && strings.HasPrefix(strings.TrimSpace(p.Text), "[context_summary]"):
				c.Body += "\n\nContext summary: " + summaryText(p.Text)
				t.compacted = nil
				return c
			}
			t.compacted = nil
		}
	}
	if m.Type == omni.TypeModelMsg && p.Type == omni.Text && p.Role == omni.RoleUser && len(m.Origin) == 0 {
		body := strings.TrimSpace(p.Text)
		_, steering := SteeringText(body)
		switch {
		case steering:
		case strings.HasPrefix(body, "[context_summary]"):
			return t.add(&Item{Kind: KindNotice, Body: "Context summary: " + summaryText(body)})
		case strings.HasPrefix(body, "[turn_aborted]"), strings.HasPrefix(body, "[turn_retried]"), p.Text == CompactionPrompt:
			return nil
		default:
			t.Count++
			return t.AddPrompt(p.Text)
		}
	}
	// An image after a prompt or a delivered steering message is theirs
	// (Apply adds it to them); any other is a prompt of images only.
	if m.Type == omni.TypeModelMsg && p.Type == omni.ImageURL && len(m.Origin) == 0 &&
		(len(t.Items) == 0 || t.Items[len(t.Items)-1].Kind != KindPrompt && t.Items[len(t.Items)-1].Kind != KindUser) {
		t.Count++
		it := t.AddPrompt("") // a prompt of images only
		it.Images = []string{p.ImageURL()}
		return it
	}
	it := t.Apply(m)
	if p.Type == omni.CompactionEnd && len(m.Origin) == 0 {
		t.compacted = it
	}
	return it
}

// summaryText is a [context_summary] block's text.
func summaryText(s string) string {
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(s), "[context_summary]"), "[/context_summary]"))
}

// AddNotice appends a notice of the page's own (not from the stream).
func (t *Transcript) AddNotice(text string) *Item {
	return t.add(&Item{Kind: KindNotice, Body: text})
}

// Interrupt closes what a stream cut off midway left open — a stored
// session whose page went away during a task: the request in flight, open
// fragments and tool calls that never got an output are marked
// "interrupted", in its subagents' transcripts as well.
func (t *Transcript) Interrupt() {
	if t.current != nil {
		t.current.Request.Status = "interrupted"
		t.current = nil
	}
	for key, it := range t.open {
		t.closeFragment(key, it, "")
		if it.Kind == KindText || it.Kind == KindThinking {
			it.StopReason = "interrupted"
		}
	}
	if t.compact != nil {
		t.compact.Streaming, t.compact.StopReason = false, "interrupted"
		t.compact = nil
	}
	for _, it := range t.Items {
		if c := it.Tool; c != nil && c.OutputStop == "" && c.Cancelled == "" {
			c.OutputStop, c.OutputStreaming, c.ArgsStreaming = "interrupted", false, false
		}
	}
	// A subagent's run was cut off with its parent's: what it left open
	// is interrupted too.
	for _, c := range t.children {
		c.Interrupt()
	}
}
