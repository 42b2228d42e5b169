package omni

import (
	"math/bits"
	"strconv"
	"unsafe"
)

// payloadValue decodes the value of the known payload key bit into p. The
// keys whose value is a plain string or integer field go through
// [valueSlots]; the rest, each with a check or a type of its own, through
// the switch. (A case with its own call for each of the forty keys made
// one function of 21 KB in WebAssembly, which V8's optimizing compiler
// took 150 ms and a 12 MB zone to compile once it ran hot.)
func (s *scanner) payloadValue(p *Payload, bit keySet) (err error) {
	i := bits.TrailingZeros64(uint64(bit))
	path := payloadPathTab[i]
	if t := valueSlots[i]; t.kind != 0 {
		base := unsafe.Pointer(p)
		if t.rest {
			base = unsafe.Pointer(p.rest())
		}
		at := unsafe.Add(base, t.off)
		switch t.kind {
		case slotStr:
			*(*string)(at), err = s.str(path)
		case slotEnum:
			*(*string)(at), err = s.enum(path)
		default:
			*(*int64)(at), err = s.integer(path)
		}
		return err
	}
	if bit == kSession || bit == kRequest {
		s.usage(p) // before Rest is made: the counts and Rest in one allocation
		slot := 0
		if bit == kRequest {
			slot = 1
		}
		c, err := s.counts(path, slot)
		if slot == 0 {
			p.rest().Session = c
		} else {
			p.rest().Request = c
		}
		return err
	}
	r := p.rest() // every other key is a field of Rest
	switch bit {
	case kImages:
		r.Images, err = s.strs(path)
	case kFidelity:
		if s.peek() != '{' {
			return s.typeErr(path, "object")
		}
		r.Fidelity, err = s.raw(path)
	case kAttempt:
		var n int64
		n, err = s.integer(path)
		r.Attempt = int(n)
	case kRetryInMs:
		var n int64
		if n, err = s.integer(path); err == nil {
			v := int(n)
			r.RetryInMs = &v
		}
	case kReason:
		if s.null() {
			r.ReasonNull = true
			return nil
		}
		r.Reason, err = s.enum(path)
	case kTools:
		r.Tools, err = s.tools(path)
	case kServers:
		r.Servers, err = s.strs(path)
	case kResults:
		if s.peek() != '[' {
			return s.typeErr(path, "array")
		}
		r.Results, err = s.raw(path)
	case kModelContextWindow:
		if c := s.peek(); c != '"' && kindOf(c) != "number" {
			return s.typeErr(path, "number or string")
		}
		r.ModelContextWindow, err = s.raw(path)
	}
	return err
}

// The kinds of a [valueSlot].
const (
	slotStr  = 1 + iota // a string
	slotEnum            // a string that is usually one of the protocol's constants
	slotInt             // an int64
)

// A valueSlot says where the value of a key goes: the field at off in
// Payload, or in its Rest when rest is set, of kind slotStr, slotEnum or
// slotInt; kind 0: the key has a case of its own.
type valueSlot struct {
	off  uintptr
	kind uint8
	rest bool
}

// valueSlots holds the slot of each known key, indexed by bit number.
var valueSlots = func() (t [len(keyNameTab)]valueSlot) {
	var p Payload
	var r Rest
	set := func(k keySet, off uintptr, kind uint8, rest bool) {
		t[bits.TrailingZeros64(uint64(k))] = valueSlot{off, kind, rest}
	}
	set(kType, unsafe.Offsetof(p.Type), slotEnum, false)
	set(kRole, unsafe.Offsetof(p.Role), slotEnum, false)
	set(kText, unsafe.Offsetof(p.Text), slotStr, false)
	set(kThinking, unsafe.Offsetof(p.Thinking), slotStr, false)
	set(kName, unsafe.Offsetof(p.Name), slotStr, false)
	set(kArguments, unsafe.Offsetof(p.Arguments), slotStr, false)
	set(kToolCallID, unsafe.Offsetof(p.ToolCallID), slotStr, false)
	set(kOutput, unsafe.Offsetof(p.Output), slotStr, false)
	set(kEventType, unsafe.Offsetof(p.EventType), slotEnum, false)
	set(kStopReason, unsafe.Offsetof(p.StopReason), slotEnum, false)
	set(kImageURL, unsafe.Offsetof(r.ImageURL), slotStr, true)
	set(kData, unsafe.Offsetof(r.Data), slotStr, true)
	set(kMimeType, unsafe.Offsetof(r.MimeType), slotStr, true)
	set(kSender, unsafe.Offsetof(r.Sender), slotEnum, true)
	set(kStatus, unsafe.Offsetof(r.Status), slotEnum, true)
	set(kErrorMessage, unsafe.Offsetof(r.ErrorMessage), slotStr, true)
	set(kDecision, unsafe.Offsetof(r.Decision), slotEnum, true)
	set(kMode, unsafe.Offsetof(r.Mode), slotEnum, true)
	set(kContext, unsafe.Offsetof(r.Context), slotInt, true)
	set(kTurns, unsafe.Offsetof(r.Turns), slotInt, true)
	set(kSessionID, unsafe.Offsetof(r.SessionID), slotStr, true)
	set(kOutcome, unsafe.Offsetof(r.Outcome), slotEnum, true)
	set(kRounds, unsafe.Offsetof(r.Rounds), slotInt, true)
	set(kTokensUsed, unsafe.Offsetof(r.TokensUsed), slotInt, true)
	set(kProvider, unsafe.Offsetof(r.Provider), slotStr, true)
	set(kModelID, unsafe.Offsetof(r.ModelID), slotStr, true)
	set(kSystemPrompt, unsafe.Offsetof(r.SystemPrompt), slotStr, true)
	set(kAgentState, unsafe.Offsetof(r.AgentState), slotStr, true)
	set(kWorkspace, unsafe.Offsetof(r.Workspace), slotStr, true)
	set(kSource, unsafe.Offsetof(r.Source), slotEnum, true)
	return t
}()

// usage makes p's Rest and the scanner's pair of counts in one allocation
// when p has no Rest yet: a token_usage payload then costs one.
func (s *scanner) usage(p *Payload) {
	if s.pair == nil && p.Rest == nil {
		u := newUsage()
		u.rest.Session, u.rest.Request = nil, nil // counts sets them
		p.Rest, s.pair = &u.rest, &u.c
	}
}

// counts decodes a TokenCounts object. Unknown keys are kept raw in
// Extra; missing ones are zero. slot picks the half of the payload's
// shared storage.
func (s *scanner) counts(path string, slot int) (*TokenCounts, error) {
	if s.peek() != '{' {
		return nil, s.typeErr(path, "object")
	}
	if s.pair == nil {
		s.pair = new([2]TokenCounts)
	}
	c := &s.pair[slot]
	var seen [4]bool
	more, err := s.open(path, '}')
	for more && err == nil {
		s.ws()
		start := s.i
		var k []byte
		if k, err = s.key(path); err != nil {
			return nil, err
		}
		f := -1
		switch string(k) {
		case "cache_read":
			f = 0
		case "cache_write":
			f = 1
		case "output":
			f = 2
		case "total":
			f = 3
		}
		switch {
		case f < 0:
			if err = s.skip(path); err == nil {
				if c.Extra != "" {
					c.Extra += ","
				}
				c.Extra += string(s.data[start:s.i])
			}
		case seen[f]:
			err = &DecodeError{Field: path, Msg: "duplicate key"}
		default:
			seen[f] = true
			dst := [...]*int64{&c.CacheRead, &c.CacheWrite, &c.Output, &c.Total}[f]
			*dst, err = s.integer(path)
		}
		if err != nil {
			return nil, renameErr(err, path, path+"."+string(k))
		}
		more, err = s.next(path, '}')
	}
	return c, err
}

// tools decodes a ToolDefinition array. Elements must be objects; name and
// description must be strings when present; parameters is kept raw;
// unknown keys are skipped.
func (s *scanner) tools(path string) ([]ToolDefinition, error) {
	if s.peek() != '[' {
		return nil, s.typeErr(path, "array")
	}
	out := []ToolDefinition{}
	more, err := s.open(path, ']')
	for more && err == nil {
		var t ToolDefinition
		if t, err = s.tool(path, len(out)); err != nil {
			return nil, elemErr(err, path, len(out))
		}
		out = append(out, t)
		more, err = s.next(path, ']')
	}
	return out, err
}

// tool decodes element i of the ToolDefinition array at path.
func (s *scanner) tool(path string, i int) (t ToolDefinition, err error) {
	if s.peek() != '{' {
		return t, elemErr(s.typeErr(path, "object"), path, i)
	}
	var seen [3]bool
	more, err := s.open(path, '}')
	for more && err == nil {
		var k []byte
		if k, err = s.key(path); err != nil {
			return t, err
		}
		f := -1
		switch string(k) {
		case "name":
			f = 0
		case "description":
			f = 1
		case "parameters":
			f = 2
		}
		switch {
		case f < 0:
			err = s.skip(path)
		case seen[f]:
			err = &DecodeError{Field: path, Msg: "duplicate key"}
		case f == 0:
			t.Name, err = s.str(path)
		case f == 1:
			t.Description, err = s.str(path)
		default:
			t.Parameters, err = s.raw(path)
		}
		if err != nil {
			return t, renameErr(err, path, path+"["+strconv.Itoa(i)+"]."+string(k))
		}
		if f >= 0 {
			seen[f] = true
		}
		more, err = s.next(path, '}')
	}
	return t, elemErr(err, path, i)
}
