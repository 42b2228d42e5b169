package omni

import "strconv"

// payloadValue decodes the value of the known payload key bit into p.
func (s *scanner) payloadValue(p *Payload, bit keySet) (err error) {
	path := payloadPath(bit)
	switch bit {
	case kType:
		p.Type, err = s.enum(path)
	case kRole:
		p.Role, err = s.enum(path)
	case kText:
		p.Text, err = s.str(path)
	case kThinking:
		p.Thinking, err = s.str(path)
	case kName:
		p.Name, err = s.str(path)
	case kArguments:
		p.Arguments, err = s.str(path)
	case kToolCallID:
		p.ToolCallID, err = s.str(path)
	case kOutput:
		p.Output, err = s.str(path)
	case kEventType:
		p.EventType, err = s.enum(path)
	case kStopReason:
		p.StopReason, err = s.enum(path)
	case kImageURL:
		p.rest().ImageURL, err = s.str(path)
	case kData:
		p.rest().Data, err = s.str(path)
	case kMimeType:
		p.rest().MimeType, err = s.str(path)
	case kImages:
		p.rest().Images, err = s.strs(path)
	case kSender:
		p.rest().Sender, err = s.enum(path)
	case kFidelity:
		if s.peek() != '{' {
			return s.typeErr(path, "object")
		}
		p.rest().Fidelity, err = s.raw(path)
	case kStatus:
		p.rest().Status, err = s.enum(path)
	case kErrorMessage:
		p.rest().ErrorMessage, err = s.str(path)
	case kAttempt:
		var n int64
		n, err = s.integer(path)
		p.rest().Attempt = int(n)
	case kRetryInMs:
		var n int64
		if n, err = s.integer(path); err == nil {
			v := int(n)
			p.rest().RetryInMs = &v
		}
	case kDecision:
		p.rest().Decision, err = s.enum(path)
	case kSession:
		s.usage(p)
		p.rest().Session, err = s.counts(path, 0)
	case kRequest:
		s.usage(p)
		p.rest().Request, err = s.counts(path, 1)
	case kReason:
		if s.null() {
			p.rest().ReasonNull = true
			return nil
		}
		p.rest().Reason, err = s.enum(path)
	case kMode:
		p.rest().Mode, err = s.enum(path)
	case kContext:
		p.rest().Context, err = s.integer(path)
	case kTurns:
		p.rest().Turns, err = s.integer(path)
	case kSessionID:
		p.rest().SessionID, err = s.str(path)
	case kTools:
		p.rest().Tools, err = s.tools(path)
	case kServers:
		p.rest().Servers, err = s.strs(path)
	case kResults:
		if s.peek() != '[' {
			return s.typeErr(path, "array")
		}
		p.rest().Results, err = s.raw(path)
	case kOutcome:
		p.rest().Outcome, err = s.enum(path)
	case kRounds:
		p.rest().Rounds, err = s.integer(path)
	case kTokensUsed:
		p.rest().TokensUsed, err = s.integer(path)
	case kProvider:
		p.rest().Provider, err = s.str(path)
	case kModelID:
		p.rest().ModelID, err = s.str(path)
	case kModelContextWindow:
		if c := s.peek(); c != '"' && kindOf(c) != "number" {
			return s.typeErr(path, "number or string")
		}
		p.rest().ModelContextWindow, err = s.raw(path)
	case kSystemPrompt:
		p.rest().SystemPrompt, err = s.str(path)
	case kAgentState:
		p.rest().AgentState, err = s.str(path)
	case kWorkspace:
		p.rest().Workspace, err = s.str(path)
	case kSource:
		p.rest().Source, err = s.enum(path)
	}
	return err
}

// usage makes p's Rest and the scanner's pair of counts in one allocation
// when p has no Rest yet: a token_usage payload then costs one.
func (s *scanner) usage(p *Payload) {
	if s.pair == nil && p.Rest == nil {
		u := newUsage()
		u.rest.Session, u.rest.Request = nil, nil // counts sets them
		p.Rest, s.pair = &u.rest, &u.c
	}
}

// counts decodes a TokenCounts object. Unknown keys are skipped; missing
// ones are zero. slot picks the half of the payload's shared storage.
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
			err = s.skip(path)
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
