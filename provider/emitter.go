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
}

type segment struct {
	key      int
	typ      string // partial payload type
	callID   string
	name     string
	body     strings.Builder
	fidelity omni.RawJSON
}

// NewEmitter returns an Emitter on emit; ids makes tool call ids unique.
func NewEmitter(emit func(omni.Message), ids *IDs) *Emitter {
	return &Emitter{emit: emit, ids: ids}
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
	for i := 0; i < len(e.open); i++ {
		s := e.open[i]
		if s.key == key || s.typ == typ && typ != omni.PartialToolCall {
			e.closeAt(i, omni.StatusCompleted)
			i--
		}
	}
	s := &segment{key: key, typ: typ, callID: callID, name: name}
	e.open = append(e.open, s)
	e.emit(omni.Partial(typ, omni.EventStart, "", callID, name, ""))
	return s
}

func (e *Emitter) delta(key int, typ, body string) {
	s := e.find(key)
	if s == nil || s.typ != typ {
		s = e.start(key, typ, "", "")
	}
	if body == "" {
		return
	}
	s.body.WriteString(body)
	e.emit(omni.Partial(typ, omni.EventDelta, body, s.callID, s.name, ""))
}

// Text streams a piece of assistant text for segment key, opening the
// segment on first use. Empty pieces open nothing.
func (e *Emitter) Text(key int, piece string) {
	if piece != "" || e.find(key) != nil {
		e.delta(key, omni.PartialText, piece)
	}
}

// Thinking streams a piece of reasoning text for segment key.
func (e *Emitter) Thinking(key int, piece string) {
	if piece != "" || e.find(key) != nil {
		e.delta(key, omni.PartialThinking, piece)
	}
}

// OpenThinking opens a thinking segment for key even before any text (a
// block that may carry only a signature).
func (e *Emitter) OpenThinking(key int) {
	if s := e.find(key); s == nil || s.typ != omni.PartialThinking {
		e.start(key, omni.PartialThinking, "", "")
	}
}

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

// HasTool reports whether a tool call segment is open for key.
func (e *Emitter) HasTool(key int) bool {
	s := e.find(key)
	return s != nil && s.typ == omni.PartialToolCall
}

// ToolName sets the name of the open tool call segment key if it has none.
func (e *Emitter) ToolName(key int, name string) {
	if s := e.find(key); s != nil && s.name == "" {
		s.name = name
	}
}

// ToolArgs streams a piece of the arguments of the tool call segment key.
// A piece for a key that has no open call opens one with a synthesized id.
func (e *Emitter) ToolArgs(key int, piece string) {
	if !e.HasTool(key) {
		e.ToolStart(key, "", "")
	}
	if piece != "" {
		e.delta(key, omni.PartialToolCall, piece)
	}
}

// ToolArgsLen returns the length of the arguments streamed so far for key.
func (e *Emitter) ToolArgsLen(key int) int {
	if s := e.find(key); s != nil {
		return s.body.Len()
	}
	return 0
}

// Open reports whether any segment is open.
func (e *Emitter) Open() bool { return len(e.open) > 0 }

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
	e.emit(omni.Partial(s.typ, omni.EventStop, "", s.callID, s.name, stopReason))
	var m omni.Message
	body := s.body.String()
	switch s.typ {
	case omni.PartialText:
		m = omni.AssistantText(body, stopReason)
	case omni.PartialThinking:
		m = omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.Thinking, Role: omni.RoleAssistant, Thinking: body, StopReason: stopReason}}
	default:
		m = omni.ToolCallMsg(s.callID, s.name, body)
		m.Payload.StopReason = stopReason
	}
	m.Payload.Fidelity = s.fidelity
	e.emit(m)
	e.Out = append(e.Out, m)
}

// Complete emits a complete message that was not streamed (a redacted
// thinking block) and records it.
func (e *Emitter) Complete(m omni.Message) {
	e.emit(m)
	e.Out = append(e.Out, m)
}

// IDs hands out session-unique tool call ids.
type IDs struct {
	seen    map[string]struct{}
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
		s.seen = make(map[string]struct{})
	}
	if _, dup := s.seen[id]; id == "" || dup {
		for {
			s.n++
			id = "call_floe_" + strconv.Itoa(s.n)
			if _, dup := s.seen[id]; !dup {
				break
			}
		}
	}
	s.seen[id] = struct{}{}
	s.claimed = append(s.claimed, id)
	return id
}

// Note marks the ids of the tool calls in msgs as used.
func (s *IDs) Note(msgs []omni.Message) {
	if s.seen == nil {
		s.seen = make(map[string]struct{})
	}
	for i := range msgs {
		if msgs[i].IsModel(omni.ToolCall) && msgs[i].Payload.ToolCallID != "" {
			s.seen[msgs[i].Payload.ToolCallID] = struct{}{}
		}
	}
}
