package omni

import (
	"strconv"
	"unicode/utf8"
)

// ValidationError reports a message that breaks a rule of PROTOCOL.md.
// Field is the JSON path of the offending key ("payload.event_type",
// "origin"); Value is the offending value written as JSON (`"middle"`,
// `[]`, `null`), shortened when long, or "" when the key is missing; Msg
// says what is wrong.
type ValidationError struct {
	Field string
	Value string
	Msg   string
}

func (e *ValidationError) Error() string {
	if e.Value == "" {
		return "omni: " + e.Field + ": " + e.Msg
	}
	return "omni: " + e.Field + ": " + e.Value + " " + e.Msg
}

// maxValueBytes bounds the value quoted in a ValidationError.
const maxValueBytes = 64

// invalid builds a ValidationError about the string value v.
//
//go:noinline
func invalid(field, v, msg string) error {
	return &ValidationError{Field: field, Value: quoteValue(v), Msg: msg}
}

// missing builds a ValidationError about an absent key.
func missing(field string) error { return &ValidationError{Field: field, Msg: "missing"} }

// quoteValue writes v as a JSON string, cut after maxValueBytes.
func quoteValue(v string) string {
	if len(v) > maxValueBytes {
		cut := maxValueBytes
		for cut > 0 && !utf8.RuneStart(v[cut]) {
			cut--
		}
		return string(appendString(nil, v[:cut])) + "…"
	}
	return string(appendString(nil, v))
}

// Validate checks m against the protocol: envelope and payload types, the
// required keys of the payload type, enum values, role constraints,
// origin and timestamp. It does not check the streaming discipline (see
// [Discipline]) nor the content of opaque values (fidelity, arguments).
//
// For a decoded payload a required key is missing when it was absent from
// the JSON; for a payload built in Go, when it holds its zero value and that
// zero is not meaningful (an empty tool_call_id, a nil token count; an
// empty text is fine). The error is a *[ValidationError].
//
// Validate does not allocate when m is valid.
func Validate(m Message) error { return validate(&m) }

// Validate is [Validate] without copying the message.
func (m *Message) Validate() error { return validate(m) }

func validate(m *Message) error {
	if m.Timestamp != "" && !isCanonicalTimestamp(m.Timestamp) {
		if _, err := ParseTimestamp(m.Timestamp); err != nil {
			return invalid("timestamp", m.Timestamp, "is not an RFC 3339 time")
		}
	}
	if m.Origin != nil {
		if len(m.Origin) == 0 {
			return &ValidationError{Field: "origin", Value: "[]", Msg: "must be absent rather than empty"}
		}
		for i, hop := range m.Origin {
			if hop == "" {
				return invalid("origin["+strconv.Itoa(i)+"]", hop, "is not a session id")
			}
		}
	}
	p := &m.Payload
	var lay *layout
	var mt *modelType
	switch {
	case same(m.Type, TypeModelMsg):
		if mt = modelTypeOf(p.Type); mt == nil {
			return invalid("payload.type", p.Type, "is not a model_msg payload type")
		}
		lay = mt.lay
	case same(m.Type, TypeEventMsg):
		if lay = eventLayout(p.Type); lay == nil {
			return invalid("payload.type", p.Type, "is not an event_msg payload type")
		}
	case same(m.Type, TypeSessionMeta):
		if p.Type != "" || p.has&kType != 0 {
			return invalid("payload.type", p.Type, "must be absent in a session_meta payload")
		}
		lay = &layoutSessionMeta
	default:
		return invalid("type", m.Type, "is not one of session_meta|model_msg|event_msg")
	}
	var keys keySet
	if mt != nil {
		keys = p.modelKeys()
	} else {
		keys = p.presentKeys()
	}
	if err := p.checkRequired(lay, keys); err != nil {
		return err
	}
	if err := p.checkShared(keys); err != nil {
		return err
	}
	switch {
	case mt != nil:
		return p.checkModel(mt)
	case lay == &layoutSessionMeta:
		return p.checkSessionMeta(keys)
	}
	return p.checkEvent(keys)
}

func (p *Payload) checkRequired(lay *layout, keys keySet) error {
	need := lay.required &^ kType
	if !p.Decoded() {
		need &^= lay.zeroOK
	}
	if need&^keys == 0 {
		return nil
	}
	for _, k := range lay.order { // the first missing key in the layout's order
		if need&k != 0 && keys&k == 0 {
			return missing(payloadPath(k))
		}
	}
	return nil
}

// checkShared checks keys any payload may carry: stop_reason and sender.
func (p *Payload) checkShared(keys keySet) error {
	r := p.view()
	if keys&kStopReason != 0 && !isStatus(p.StopReason) {
		return invalid("payload.stop_reason", p.StopReason, "is not one of "+statusList)
	}
	if keys&kSender != 0 {
		if p.Type != Text || p.Role != RoleUser {
			return invalid("payload.sender", r.Sender, "is only allowed on user text")
		}
		switch r.Sender {
		case SenderUser, SenderParentAgent, SenderHarness, SenderServer:
		default:
			return invalid("payload.sender", r.Sender, "is not one of user|parent_agent|harness|server")
		}
	}
	if len(r.Fidelity) > 0 && r.Fidelity[0] != '{' {
		return &ValidationError{Field: "payload.fidelity", Msg: "is not a JSON object"}
	}
	return nil
}

const statusList = "completed|failed|aborted|timeout|malformed|auth"

func isStatus(s string) bool {
	if same(s, StatusCompleted) {
		return true
	}
	switch s {
	case StatusCompleted, StatusFailed, StatusAborted, StatusTimeout, StatusMalformed, StatusAuth:
		return true
	}
	return false
}

func (p *Payload) checkSessionMeta(keys keySet) error {
	r := p.view()
	if r.SessionID == "" {
		return invalid("payload.session_id", "", "must not be empty")
	}
	if w := r.ModelContextWindow; len(w) > 0 && w[0] != '"' && kindOf(w[0]) != "number" {
		return &ValidationError{Field: "payload.model_context_window", Value: quoteValue(string(w)), Msg: "is not a number or a string"}
	}
	if keys&kSource != 0 && r.Source != SourceSubagent && r.Source != SourceSchedule {
		return invalid("payload.source", r.Source, "is not one of subagent|schedule")
	}
	return nil
}

func (p *Payload) checkModel(mt *modelType) error {
	if roleBit(p.Role)&mt.roles == 0 {
		switch mt.roles {
		case roleUserBit:
			return invalid("payload.role", p.Role, "must be user for "+p.Type)
		case roleAssistantBit:
			return invalid("payload.role", p.Role, "must be assistant for "+p.Type)
		}
		return invalid("payload.role", p.Role, "is not one of user|assistant")
	}
	if mt.partial {
		switch p.EventType {
		case EventStart, EventDelta, EventStop:
		default:
			return invalid("payload.event_type", p.EventType, "is not one of start|delta|stop")
		}
	}
	if mt.needID && p.ToolCallID == "" {
		return invalid("payload.tool_call_id", "", "must not be empty")
	}
	if mt.needName && p.Name == "" {
		return invalid("payload.name", "", "must not be empty")
	}
	return nil
}

func (p *Payload) checkEvent(keys keySet) error {
	r := p.view()
	switch p.Type {
	case RequestEnd:
		if !isStatus(r.Status) {
			return invalid("payload.status", r.Status, "is not one of "+statusList)
		}
		if r.RetryInMs != nil && *r.RetryInMs < 0 {
			return &ValidationError{Field: "payload.retry_in_ms", Value: strconv.Itoa(*r.RetryInMs), Msg: "is negative"}
		}
		return p.checkAttempt(keys)
	case ApprovalDecision:
		switch r.Decision {
		case DecisionAllow, DecisionDeny, DecisionForbidden:
		default:
			return invalid("payload.decision", r.Decision, "is not one of allow|deny|forbidden")
		}
		if p.ToolCallID == "" {
			return invalid("payload.tool_call_id", "", "must not be empty")
		}
	case CompactionBegin:
		return p.checkCompaction()
	case CompactionEnd:
		if err := p.checkCompaction(); err != nil {
			return err
		}
		if !isStatus(r.Status) {
			return invalid("payload.status", r.Status, "is not one of "+statusList)
		}
		if keys&kRetryInMs != 0 {
			return &ValidationError{Field: "payload.retry_in_ms", Msg: "is not allowed on compaction_end"}
		}
		return p.checkAttempt(keys)
	case Subagent:
		if r.SessionID == "" {
			return invalid("payload.session_id", "", "must not be empty")
		}
	case ToolListReady:
		for i := range r.Tools {
			if r.Tools[i].Name == "" {
				return invalid("payload.tools["+strconv.Itoa(i)+"].name", "", "must not be empty")
			}
		}
	case MCPConnectEnd:
		switch r.Status {
		case StatusCompleted, StatusFailed, StatusAborted:
		default:
			return invalid("payload.status", r.Status, "is not one of completed|failed|aborted")
		}
	case GoalFinished:
		switch r.Outcome {
		case "complete", "blocked", "budget_limited", StatusAborted:
		default:
			return invalid("payload.outcome", r.Outcome, "is not one of complete|blocked|budget_limited|aborted")
		}
	}
	return nil
}

func (p *Payload) checkCompaction() error {
	r := p.view()
	if r.ReasonNull && r.Reason == "" {
		return &ValidationError{Field: "payload.reason", Value: "null", Msg: "is not one of context|turns|manual"}
	}
	switch r.Reason {
	case ReasonContext, ReasonTurns, ReasonManual:
	default:
		return invalid("payload.reason", r.Reason, "is not one of context|turns|manual")
	}
	if r.Mode != ModeSummarize && r.Mode != ModeDiscard {
		return invalid("payload.mode", r.Mode, "is not one of summarize|discard")
	}
	return nil
}

// checkAttempt checks the 1-based attempt ordinal when present.
func (p *Payload) checkAttempt(keys keySet) error {
	r := p.view()
	if keys&kAttempt != 0 && r.Attempt < 1 {
		return &ValidationError{Field: "payload.attempt", Value: strconv.Itoa(r.Attempt), Msg: "is not a 1-based ordinal"}
	}
	return nil
}

// isCanonicalTimestamp reports whether ts is a valid instant in the layout
// writers use (P-1: "2006-01-02T15:04:05.000Z"), checked without time.Parse,
// which costs more than the rest of a partial's validation. Other RFC 3339
// forms fall back to time.Parse.
func isCanonicalTimestamp(ts string) bool {
	if len(ts) != len(TimestampLayout) || ts[4] != '-' || ts[7] != '-' || ts[10] != 'T' ||
		ts[13] != ':' || ts[16] != ':' || ts[19] != '.' || ts[23] != 'Z' {
		return false
	}
	// The digits, at the positions the layout has them (a bit per byte).
	const digits = 0b11101101101101101101111
	for i := 0; i < 23; i++ {
		if digits>>i&1 != 0 && ts[i]-'0' > 9 {
			return false
		}
	}
	d := func(i int) int { return int(ts[i] - '0') }
	year := d(0)*1000 + d(1)*100 + d(2)*10 + d(3)
	month, day := d(5)*10+d(6), d(8)*10+d(9)
	if month < 1 || month > 12 || day < 1 || d(11)*10+d(12) > 23 || d(14) > 5 || d(17) > 5 {
		return false
	}
	if day <= 28 {
		return true
	}
	switch month {
	case 2:
		return day == 29 && year%4 == 0 && (year%100 != 0 || year%400 == 0)
	case 4, 6, 9, 11:
		return day <= 30
	}
	return day <= 31
}
