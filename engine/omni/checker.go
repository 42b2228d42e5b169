package omni

// A Checker validates the messages of one stream, such as a producer's, as
// [Validate] does, and remembers the shape of the last message it found
// valid: the fields validation reads other than the bodies (timestamp,
// types, role, event type, stop reason, the keys a decoded payload had)
// and which of the text, thinking, arguments, output, tool_call_id and
// name are empty. A message of the same shape, without origin or rare
// fields (Payload.Rest), is valid without being checked again: validation
// reads nothing else of it. A stream of fragments is mostly such messages.
//
// The zero value is ready to use. A Checker is not safe for concurrent use.
type Checker struct {
	ok   bool // last holds the shape of a valid message
	last shape
}

type shape struct {
	_ [0]func() // not comparable: no equality code is generated

	ts, typ, ptype, role, event, stop string
	has                               keySet
	filled                            uint8 // the bodies, tool_call_id and name that are not empty
}

// Validate reports what [Validate] reports for m.
func (c *Checker) Validate(m *Message) error {
	plain := m.Origin == nil && m.Payload.Rest == nil
	if plain && c.ok && c.last.is(m) {
		return nil
	}
	c.ok = false
	if err := validate(m); err != nil {
		return err
	}
	if plain {
		c.last.set(m)
		c.ok = true
	}
	return nil
}

func filled(p *Payload) uint8 {
	var f uint8
	if p.Text != "" {
		f |= 1
	}
	if p.Thinking != "" {
		f |= 2
	}
	if p.Arguments != "" {
		f |= 4
	}
	if p.Output != "" {
		f |= 8
	}
	if p.ToolCallID != "" {
		f |= 16
	}
	if p.Name != "" {
		f |= 32
	}
	return f
}

func (s *shape) set(m *Message) {
	p := &m.Payload
	*s = shape{ts: m.Timestamp, typ: m.Type, ptype: p.Type, role: p.Role, event: p.EventType, stop: p.StopReason, has: p.has, filled: filled(p)}
}

func (s *shape) is(m *Message) bool {
	p := &m.Payload
	return p.has == s.has && same(m.Type, s.typ) && same(p.Type, s.ptype) && same(p.EventType, s.event) &&
		same(p.Role, s.role) && same(p.StopReason, s.stop) && same(m.Timestamp, s.ts) && filled(p) == s.filled
}
