package provider

import (
	"strconv"
	"strings"

	"github.com/floehq/floe/engine/omni"
)

// Emitter turns an adapter's view of a stream (text, thinking and tool call
// pieces, each keyed by the adapter's own segment key) into OmniMessages in
// streaming discipline (PROTOCOL.md P-6/P-7): each segment is start,
// deltas, stop, then its complete message. It records the complete
// messages for the conversation.
type Emitter struct {
	emit func(omni.Message)
	open []*segment
	// Out holds the complete messages emitted, in order.
	Out []omni.Message
	ids *IDs
	m   omni.Message // scratch

	mark string // the Conversation's Mark: see Stamp
}

type segment struct {
	key      int
	typ      string // partial payload type
	callID   string
	name     string
	body     []byte
	fidelity omni.RawJSON
	deferred bool // a tool call whose start waits for its name's end
}

// NewEmitter returns an Emitter on emit; ids makes tool call ids unique.
func NewEmitter(emit func(omni.Message), ids *IDs) *Emitter {
	return &Emitter{emit: emit, ids: ids}
}

// send emits one message of segment s: a fragment (event "start",
// "delta", "stop") or, with event "", the complete message.
//
//go:noinline
func (e *Emitter) send(s *segment, event, body, stop string) {
	m := &e.m
	*m = omni.Message{Type: omni.TypeModelMsg}
	p := &m.Payload
	p.Role, p.EventType, p.StopReason = omni.RoleAssistant, event, stop
	switch s.typ {
	case omni.PartialText:
		p.Type, p.Text = omni.Text, body
	case omni.PartialThinking:
		p.Type, p.Thinking = omni.Thinking, body
	default:
		p.Type, p.Arguments, p.ToolCallID, p.Name = omni.ToolCall, body, s.callID, s.name
	}
	if event != "" {
		p.Type = s.typ
	} else {
		if p.Type == omni.ToolCall && p.Name == "" {
			p.Name = UnnamedTool // a complete tool_call needs a name
		}
		if s.fidelity != nil {
			p.Rest = &omni.Rest{Fidelity: s.fidelity}
		}
		e.Out = append(e.Out, *m)
	}
	e.emit(*m)
}

func (e *Emitter) find(key int) *segment {
	for _, s := range e.open {
		if s.key == key {
			return s
		}
	}
	return nil
}

// start opens a segment, first closing an open one of the same key, or of
// the same text/thinking type (two such segments cannot be open at once).
func (e *Emitter) start(key int, typ, callID, name string) *segment {
	e.flushAll()
	for i := 0; i < len(e.open); i++ {
		if s := e.open[i]; s.key == key || s.typ == typ && typ != omni.PartialToolCall {
			e.closeAt(i, omni.StatusCompleted)
			i--
		}
	}
	s := &segment{key: key, typ: typ, callID: callID, name: name}
	e.open = append(e.open, s)
	e.send(s, omni.EventStart, "", "")
	return s
}

// piece streams body into segment key of type typ, opening it if needed.
// An empty body opens nothing unless force is set.
func (e *Emitter) piece(key int, typ, body string, force bool) {
	s := e.find(key)
	if s == nil || s.typ != typ {
		if body == "" && !force {
			return
		}
		s = e.start(key, typ, "", "")
	}
	if body != "" {
		e.flush(s)
		s.body = append(s.body, body...)
		e.send(s, omni.EventDelta, body, "")
	}
}

// Text streams a piece of assistant text for segment key, opening the
// segment on first use. Empty pieces open nothing.
func (e *Emitter) Text(key int, piece string) { e.piece(key, omni.PartialText, piece, false) }

// Thinking streams a piece of reasoning text for segment key.
func (e *Emitter) Thinking(key int, piece string) { e.piece(key, omni.PartialThinking, piece, false) }

// OpenThinking opens a thinking segment for key even before any text (a
// block that may carry only a signature).
func (e *Emitter) OpenThinking(key int) { e.piece(key, omni.PartialThinking, "", true) }

// SetFidelity attaches the opaque provider data the complete message of
// segment key will carry (a thinking signature, an encrypted reasoning
// item). It opens nothing.
func (e *Emitter) SetFidelity(key int, raw omni.RawJSON) {
	if s := e.find(key); s != nil {
		s.fidelity = raw
	}
}

// ToolStart opens a tool call segment. An empty or already used id is
// replaced by a session-unique one; ToolStart returns the id used.
func (e *Emitter) ToolStart(key int, id, name string) string {
	id = e.ids.Claim(id)
	e.start(key, omni.PartialToolCall, id, name)
	return id
}

// ToolOpen opens a tool call segment as ToolStart does, but its start
// waits for the first piece of its arguments, another segment's start or
// its close: until then, ToolName may add to its name (a name streamed in
// pieces).
func (e *Emitter) ToolOpen(key int, id, name string) string {
	e.flushAll()
	for i := 0; i < len(e.open); i++ {
		if e.open[i].key == key {
			e.closeAt(i, omni.StatusCompleted)
			i--
		}
	}
	id = e.ids.Claim(id)
	e.open = append(e.open, &segment{key: key, typ: omni.PartialToolCall, callID: id, name: name, deferred: true})
	return id
}

// flushAll sends every start that waits: a segment opening after them
// ends their names.
func (e *Emitter) flushAll() {
	for _, s := range e.open {
		e.flush(s)
	}
}

// flush sends the start a ToolOpen deferred.
func (e *Emitter) flush(s *segment) {
	if s.deferred {
		s.deferred = false
		e.send(s, omni.EventStart, "", "")
	}
}

// ToolName names the open tool call segment key. A segment whose start
// was sent keeps the name it started with, or takes this one if it had
// none; one whose start waits (ToolOpen) takes the piece as its name's
// next: the same name again (servers that repeat it in every delta) or
// one that extends it (servers that send it whole so far) replaces it,
// anything else is added to it.
func (e *Emitter) ToolName(key int, name string) {
	s := e.find(key)
	switch {
	case s == nil || name == "" || s.typ != omni.PartialToolCall:
	case s.name == "" || s.deferred && strings.HasPrefix(name, s.name):
		s.name = name
	case s.deferred:
		s.name += name
	}
}

// ToolArgs streams a piece of the arguments of the tool call segment key.
// A piece for a key that has no open call opens one with a synthesized id.
func (e *Emitter) ToolArgs(key int, piece string) {
	if s := e.find(key); s == nil || s.typ != omni.PartialToolCall {
		e.ToolStart(key, "", "")
	}
	e.piece(key, omni.PartialToolCall, piece, false)
}

// ToolArgsLen returns the length of the arguments streamed so far for key.
func (e *Emitter) ToolArgsLen(key int) int {
	if s := e.find(key); s != nil {
		return len(s.body)
	}
	return 0
}

// Close closes segment key with stopReason: its stop, then its complete
// message. Closing a key that is not open does nothing.
func (e *Emitter) Close(key int, stopReason string) {
	for i, s := range e.open {
		if s.key == key {
			e.closeAt(i, stopReason)
			return
		}
	}
}

// CloseAll closes every open segment, in the order they opened.
func (e *Emitter) CloseAll(stopReason string) {
	for len(e.open) > 0 {
		e.closeAt(0, stopReason)
	}
}

func (e *Emitter) closeAt(i int, stopReason string) {
	s := e.open[i]
	e.open = append(e.open[:i], e.open[i+1:]...)
	e.flush(s)
	e.send(s, omni.EventStop, "", stopReason)
	e.send(s, "", string(s.body), stopReason)
}

// Complete emits a complete assistant message that was not streamed: text
// or thinking with the given fidelity (a refusal, a redacted thinking
// block), and records it.
func (e *Emitter) Complete(partialType string, fidelity omni.RawJSON) {
	e.send(&segment{typ: partialType, fidelity: fidelity}, "", "", omni.StatusCompleted)
}

// UnnamedTool is the name of a tool call whose stream never named it.
const UnnamedTool = "unnamed_tool"

// IDs hands out session-unique tool call ids.
type IDs struct {
	seen    map[string]bool
	n       int
	claimed []string // ids claimed since Begin
}

// Begin starts an attempt: Rollback forgets the ids claimed after it.
func (s *IDs) Begin() { s.claimed = s.claimed[:0] }

// Rollback forgets the ids claimed since Begin (the attempt failed and its
// tool calls never joined the conversation).
func (s *IDs) Rollback() {
	for _, id := range s.claimed {
		delete(s.seen, id)
	}
	s.claimed = s.claimed[:0]
}

// Claim returns id if it is non-empty and not used before in the session,
// otherwise a new id ("call_floe_N"); either way the result is marked used.
func (s *IDs) Claim(id string) string {
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	for id == "" || s.seen[id] {
		s.n++
		id = "call_floe_" + strconv.Itoa(s.n)
	}
	s.seen[id] = true
	s.claimed = append(s.claimed, id)
	return id
}

// note marks the id of m, a tool call of the conversation, as used.
func (s *IDs) note(m *omni.Message) {
	if m.IsModel(omni.ToolCall) && m.Payload.ToolCallID != "" {
		if s.seen == nil {
			s.seen = map[string]bool{}
		}
		s.seen[m.Payload.ToolCallID] = true
	}
}
