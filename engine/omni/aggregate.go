package omni

import "slices"

// Aggregator turns a stream of messages into the messages a renderer shows,
// following PROTOCOL.md P-8. Fragments are aggregated per key (origin,
// payload type, tool_call_id); the origin is part of the key so that a
// subagent's forwarded fragments never mix with the session's own.
//
// [Aggregator.Add] takes the stream in order and returns the messages that
// became complete with it:
//
//   - a message that is not a fragment is returned as is; if it is the
//     complete message of an open or stopped fragment of its key, that
//     fragment is dropped (the complete message supersedes it);
//   - a fragment returns nothing, except when it implicitly closes a
//     fragment whose complete message never came: then the message built
//     from the closed fragment is returned.
//
// Leniency (reference behaviour): a start for a key that is still open, or
// stopped but not yet completed, closes the previous fragment first; a
// delta or stop without a start opens one. Bodies of all fragment events
// are concatenated (start and stop normally carry none); images are not
// incremental: the last non-empty images win; name, role and stop_reason
// are the last non-empty ones seen.
//
// A message built from fragments is a complete model_msg of the streamed
// type (partial_text → text) with the fragments' origin, role, tool_call_id,
// name (tool calls), images, stop_reason, the concatenated body, and the
// timestamp of its latest fragment.
//
// The zero value is ready to use. An Aggregator is not safe for concurrent
// use.
type Aggregator struct {
	frags []*fragment // open and stopped fragments, in the order they were opened
}

// Add consumes the next message of the stream and returns the messages that
// became complete, in stream order (usually none for a fragment, exactly m
// otherwise).
func (a *Aggregator) Add(m Message) []Message {
	p := &m.Payload
	if !m.IsPartial() {
		if m.Type == TypeModelMsg {
			if i := a.find(partialOf(p.Type), p.ToolCallID, m.Origin); i >= 0 {
				a.frags = slices.Delete(a.frags, i, i+1)
			}
		}
		return []Message{m}
	}
	var out []Message
	i := a.find(p.Type, p.ToolCallID, m.Origin)
	if i >= 0 && (p.EventType == EventStart || a.frags[i].stopped) {
		out = append(out, a.close(i))
		i = -1
	}
	if i < 0 {
		a.frags = append(a.frags, newFragment(&m))
		i = len(a.frags) - 1
	}
	f := a.frags[i]
	f.note(&m, bodyKind(modelTypeOf(p.Type)))
	if p.EventType == EventStop {
		f.stopped = true
	}
	return out
}

// Open returns one synthetic partial start per fragment still tracked (open,
// or stopped and awaiting its complete message), in the order they were
// opened, carrying the content accumulated so far and the timestamp of the
// fragment's first message. Adding them to a fresh Aggregator recreates the
// open fragments: this is the live.fragments snapshot of TRANSPORT.md §6.
func (a *Aggregator) Open() []Message {
	var out []Message
	for _, f := range a.frags {
		m := f.message(f.typ, f.firstTS)
		m.Payload.EventType = EventStart
		out = append(out, m)
	}
	return out
}

// Flush closes every tracked fragment and returns the messages built from
// them, in the order they were opened; use it when the stream ends without
// their complete messages (a dropped connection, an aborted run). The
// Aggregator is then empty.
func (a *Aggregator) Flush() []Message {
	var out []Message
	for _, f := range a.frags {
		out = append(out, f.message(completeOf(f.typ), f.lastTS))
	}
	a.frags = nil
	return out
}

// close removes fragment i and returns the complete message built from it.
func (a *Aggregator) close(i int) Message {
	f := a.frags[i]
	a.frags = slices.Delete(a.frags, i, i+1)
	return f.message(completeOf(f.typ), f.lastTS)
}

func (a *Aggregator) find(typ, callID string, origin []string) int {
	for i, f := range a.frags {
		if f.is(typ, callID, origin) {
			return i
		}
	}
	return -1
}
