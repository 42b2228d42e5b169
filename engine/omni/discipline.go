package omni

import (
	"errors"
	"github.com/floehq/floe/internal/errf"
	"slices"
)

// ErrDiscipline is wrapped by every error of [Discipline].
var ErrDiscipline = errors.New("omni: streaming discipline")

// Discipline checks the streaming discipline of ONE producer (the LLM
// callback, or one tool call) against PROTOCOL.md P-6 and P-7:
//
//   - a fragment is one start, zero or more deltas and one stop, for one
//     (payload type, tool_call_id) key; a delta or stop without a start, or
//     a start while the key is open, is an error;
//   - the message right after a stop must be the corresponding complete
//     message (partial_text → text, same tool_call_id); any other message
//     in between is an error;
//   - the complete message's body (text, thinking, arguments, output) must
//     equal the concatenation of the delta bodies; if a delta carried
//     images, the complete message must carry the same images; if the
//     fragments named a tool, the complete tool_call must have that name;
//   - a complete message while its key is open (no stop yet) is an error.
//
// Complete messages that were not streamed are fine (P-6). Fragments of
// different keys may be open at the same time. Messages with an origin
// belong to another producer (a subagent forwarded by a tool) and are
// ignored. Check does not validate fields: run [Validate] first.
//
// After an error the checker recovers the way [Aggregator] does (a start
// for an open key restarts it, a delta without start opens one, a foreign
// message drops the expectation of a complete message), so later messages
// are judged on their own. Every error wraps [ErrDiscipline].
//
// The zero value is ready to use. A Discipline is not safe for concurrent
// use; it is meant to sit on one producer's emit path.
type Discipline struct {
	open    []*fragment // open fragments, in start order
	stopped *fragment   // the fragment whose stop was the last message, awaiting its complete message

	// hot is the open fragment that the last message started or continued,
	// and hotBody the body field its deltas carry: a delta of the same key,
	// most of a stream, is noted without a search (see check). Every other
	// message clears it before it is looked at.
	hot     *fragment
	hotBody uint8
}

func disciplineErr(format string, args ...any) error {
	return errf.Errorf("%w: "+format, append([]any{ErrDiscipline}, args...)...)
}

// Check records m, the producer's next message, and reports a violation.
func (d *Discipline) Check(m Message) error { return d.CheckMessage(&m) }

// CheckMessage is [Discipline.Check] without copying the message.
func (d *Discipline) CheckMessage(m *Message) error { return d.check(m, false) }

// HotDelta takes m, a producer's next message, when c and d would both
// take it at a glance: a delta of d's hot fragment, of the shape of the
// last message c found valid, without origin or rare fields. It then notes
// m as [Discipline.Try] and [Discipline.CheckMessage] do and reports true;
// c, which would find m valid without a look, is left as it is. Otherwise
// it changes nothing and reports false, and m is for c.Validate and d's
// checks. Most of a stream is such deltas: one test of m instead of each
// checker's own.
func HotDelta(c *Checker, d *Discipline, m *Message) bool {
	return d.hot != nil && c.ok && m.Origin == nil && m.Payload.Rest == nil && c.last.is(m) && d.takeHot(m)
}

// takeHot notes m and reports true when m is a delta of the hot fragment,
// which must not be nil: what step does for it, without finding the
// fragment again (keys are unique among the open ones, and nothing is
// stopped while a fragment is hot). It is kept out of line: check and
// HotDelta share its code.
//
//go:noinline
func (d *Discipline) takeHot(m *Message) bool {
	f, p := d.hot, &m.Payload
	if same(p.EventType, EventDelta) && same(p.Type, f.typ) && p.ToolCallID == f.callID && same(m.Type, TypeModelMsg) {
		f.note(m, d.hotBody)
		return true
	}
	return false
}

// check is CheckMessage; strict leaves the checker unchanged on an error
// (Try) instead of recovering.
func (d *Discipline) check(m *Message, strict bool) error {
	if len(m.Origin) > 0 {
		return nil
	}
	if d.hot != nil {
		if d.takeHot(m) { // a delta of the fragment the last message started or continued
			return nil
		}
		d.hot = nil
	}
	var err error
	if f := d.stopped; f != nil {
		p := &m.Payload
		if same(m.Type, TypeModelMsg) && same(p.Type, completeOf(f.typ)) && p.ToolCallID == f.callID {
			err = f.match(p)
			if err == nil || !strict {
				d.stopped = nil
				f.release()
			}
			return err
		}
		err = disciplineErr("%s arrived after the stop of %s, before its complete %s", describe(m), f.label(), completeOf(f.typ))
		if strict {
			return err
		}
		d.stopped = nil
		f.release()
	}
	if e := d.step(m, strict); err == nil {
		err = e
	}
	return err
}

func (d *Discipline) step(m *Message, strict bool) error {
	p := &m.Payload
	var mt *modelType
	if same(m.Type, TypeModelMsg) {
		mt = modelTypeOf(p.Type)
	}
	if mt == nil || !mt.partial {
		if same(m.Type, TypeModelMsg) {
			if i := d.find(partialOf(p.Type), p.ToolCallID); i >= 0 {
				err := disciplineErr("complete %s while %s is open (no stop)", p.Type, d.open[i].label())
				if !strict {
					d.remove(i)
				}
				return err
			}
		}
		return nil
	}
	i := d.find(p.Type, p.ToolCallID)
	switch p.EventType {
	case EventStart:
		if i >= 0 {
			err := disciplineErr("start of %s while it is open", d.open[i].label())
			if !strict {
				f := newFragment(m)
				f.origin = nil
				f.note(m, bodyNone)
				d.open[i] = f
			}
			return err
		}
		f := newFragment(m)
		f.origin = nil
		f.note(m, bodyNone)
		d.open = append(d.open, f)
		d.hot, d.hotBody = f, mt.body
	case EventDelta:
		var err error
		if i < 0 {
			if err = disciplineErr("%s without start", describe(m)); strict {
				return err
			}
			i = d.lenientOpen(m)
		}
		d.open[i].note(m, mt.body)
		d.hot, d.hotBody = d.open[i], mt.body
		return err
	case EventStop:
		var err error
		if i < 0 {
			if err = disciplineErr("%s without start", describe(m)); strict {
				return err
			}
			i = d.lenientOpen(m)
		}
		f := d.remove(i)
		images, has := f.images, f.hasImages
		f.note(m, bodyNone)
		f.images, f.hasImages = images, has // only deltas carry images (P-7)
		d.stopped = f
		return err
	default:
		return disciplineErr("%s has event_type %s", describe(m), quoteValue(p.EventType))
	}
	return nil
}

func (d *Discipline) lenientOpen(m *Message) int {
	f := newFragment(m)
	f.origin = nil
	d.open = append(d.open, f)
	return len(d.open) - 1
}

func (d *Discipline) find(typ, callID string) int {
	for i, f := range d.open {
		if same(f.typ, typ) && f.callID == callID {
			return i
		}
	}
	return -1
}

// remove is out of line for size, as newFragment is.
//
//go:noinline
func (d *Discipline) remove(i int) *fragment {
	f := d.open[i]
	d.open = slices.Delete(d.open, i, i+1)
	return f
}

// match compares the complete payload p with the fragment f (P-7).
func (f *fragment) match(p *Payload) error {
	if body := p.Body(); body != string(f.body) {
		at := 0
		for at < len(body) && at < len(f.body) && body[at] == f.body[at] {
			at++
		}
		return disciplineErr("complete %s body (%d bytes) differs from the deltas of %s (%d bytes) at byte %d", p.Type, len(body), f.label(), len(f.body), at)
	}
	if f.hasImages && !slices.Equal(p.Images(), f.images) {
		return disciplineErr("complete %s images differ from the images of the deltas of %s", p.Type, f.label())
	}
	if same(f.typ, PartialToolCall) && f.name != "" && p.Name != f.name {
		return disciplineErr("complete %s name %s differs from the name %s of %s", p.Type, quoteValue(p.Name), quoteValue(f.name), f.label())
	}
	return nil
}

// Try is [Discipline.CheckMessage] for a producer whose rejected messages
// are dropped: a message that breaks the discipline is reported and leaves
// the checker as it was, so that the checker describes exactly the
// messages it accepted (what [Discipline.Close] closes).
func (d *Discipline) Try(m *Message) error { return d.check(m, true) }

// Unfinished reports, like [Discipline.End] but without resetting the
// checker, a fragment left unfinished: a start without its stop, or a stop
// without its complete message. nil means every fragment is complete.
func (d *Discipline) Unfinished() error {
	switch {
	case d.stopped != nil:
		return disciplineErr("stream ended after the stop of %s, before its complete %s", d.stopped.label(), completeOf(d.stopped.typ))
	case len(d.open) == 1:
		return disciplineErr("stream ended with %s open", d.open[0].label())
	case len(d.open) > 1:
		return disciplineErr("stream ended with %s and %d more fragments open", d.open[0].label(), len(d.open)-1)
	}
	return nil
}

// Open names the first fragment still open, or is "" when none is.
func (d *Discipline) Open() string {
	if len(d.open) == 0 {
		return ""
	}
	return d.open[0].label()
}

// Close ends the producer's stream on its behalf (PROTOCOL.md P-6): for a
// fragment whose stop was its last message, the complete message; for each
// fragment still open, in start order, a stop and then the complete
// message. Each complete message carries the concatenated bodies of the
// fragment's deltas and the images of its deltas; the stops and the
// complete messages carry stopReason. The messages have no timestamp.
// The checker is then reset.
func (d *Discipline) Close(stopReason string) []Message {
	var out []Message
	if f := d.stopped; f != nil {
		out = append(out, f.closing(stopReason))
	}
	for _, f := range d.open {
		stop := f.message(f.typ, "")
		stop.Payload.EventType = EventStop
		stop.Payload.setBody("")
		stop.Payload.Rest = nil // only images: f.message made it
		stop.Payload.StopReason = stopReason
		out = append(out, stop, f.closing(stopReason))
	}
	*d = Discipline{}
	return out
}

// closing is the complete message of f, with stopReason.
func (f *fragment) closing(stopReason string) Message {
	m := f.message(completeOf(f.typ), "")
	m.Payload.StopReason = stopReason
	return m
}

// End reports fragments left unfinished when the producer's stream ends (a
// start without stop, or a stop without its complete message) and resets
// the checker.
func (d *Discipline) End() error {
	err := d.Unfinished()
	*d = Discipline{}
	return err
}

// describe names a message in error messages: "partial_text delta",
// "tool_call \"A\"", "event_msg token_usage".
func describe(m *Message) string {
	p := &m.Payload
	s := p.Type
	if m.Type != TypeModelMsg {
		s = m.Type + " " + s
	}
	if m.IsPartial() {
		s += " " + p.EventType
	}
	if p.ToolCallID != "" {
		s += " " + quoteValue(p.ToolCallID)
	}
	return s
}
