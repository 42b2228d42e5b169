package omni

import (
	"math/bits"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// layout lists, per payload type, its keys in reference order (PROTOCOL.md
// §2–§5), which of them are required, and which required keys have a
// meaningful zero value (an empty text is a text; an empty tool_call_id is
// not an id).
type layout struct {
	order    []keySet
	required keySet
	zeroOK   keySet
}

var (
	layoutSessionMeta = layout{[]keySet{kSessionID, kProvider, kModelID, kModelContextWindow, kSystemPrompt, kAgentState, kWorkspace, kSource}, kSessionID | kProvider | kModelID | kModelContextWindow | kSystemPrompt | kAgentState | kWorkspace, kSystemPrompt | kAgentState | kWorkspace}

	layoutText                  = layout{[]keySet{kType, kRole, kText, kStopReason, kFidelity, kSender}, kType | kRole | kText, kText}
	layoutImageURL              = layout{[]keySet{kType, kRole, kImageURL, kStopReason}, kType | kRole | kImageURL, 0}
	layoutInlineData            = layout{[]keySet{kType, kRole, kData, kMimeType, kStopReason, kFidelity}, kType | kRole | kData | kMimeType, kData}
	layoutThinking              = layout{[]keySet{kType, kRole, kThinking, kStopReason, kFidelity}, kType | kRole | kThinking, kThinking}
	layoutInlineThinking        = layout{[]keySet{kType, kRole, kData, kMimeType, kStopReason, kFidelity}, kType | kRole | kData | kMimeType, kData}
	layoutToolCall              = layout{[]keySet{kType, kRole, kName, kArguments, kToolCallID, kStopReason, kFidelity}, kType | kRole | kName | kArguments | kToolCallID, kArguments}
	layoutToolCallOutput        = layout{[]keySet{kType, kRole, kOutput, kImages, kToolCallID, kStopReason}, kType | kRole | kOutput | kToolCallID, kOutput}
	layoutPartialText           = layout{[]keySet{kType, kRole, kEventType, kText, kStopReason}, kType | kRole | kEventType | kText, kText}
	layoutPartialThinking       = layout{[]keySet{kType, kRole, kEventType, kThinking, kStopReason}, kType | kRole | kEventType | kThinking, kThinking}
	layoutPartialToolCall       = layout{[]keySet{kType, kRole, kEventType, kName, kArguments, kToolCallID, kStopReason}, kType | kRole | kEventType | kName | kArguments | kToolCallID, kName | kArguments}
	layoutPartialToolCallOutput = layout{[]keySet{kType, kRole, kEventType, kOutput, kImages, kToolCallID, kStopReason}, kType | kRole | kEventType | kOutput | kToolCallID, kOutput}

	layoutRequestBegin     = layout{[]keySet{kType}, kType, 0}
	layoutRequestEnd       = layout{[]keySet{kType, kStatus, kErrorMessage, kAttempt, kRetryInMs}, kType | kStatus, 0}
	layoutApprovalDecision = layout{[]keySet{kType, kDecision, kToolCallID}, kType | kDecision | kToolCallID, 0}
	layoutTokenUsage       = layout{[]keySet{kType, kSession, kRequest}, kType | kSession | kRequest, 0}
	layoutCompactionBegin  = layout{[]keySet{kType, kReason, kMode, kContext, kTurns}, kType | kReason | kMode | kContext | kTurns, kContext | kTurns}
	layoutCompactionEnd    = layout{[]keySet{kType, kReason, kMode, kStatus, kAttempt, kErrorMessage}, kType | kReason | kMode | kStatus, 0}
	layoutAbort            = layout{[]keySet{kType, kReason}, kType | kReason, kReason}
	layoutSubagent         = layout{[]keySet{kType, kSessionID}, kType | kSessionID, 0}
	layoutToolListReady    = layout{[]keySet{kType, kTools}, kType | kTools, kTools}
	layoutMCPConnectBegin  = layout{[]keySet{kType, kServers}, kType | kServers, kServers}
	layoutMCPConnectEnd    = layout{[]keySet{kType, kStatus, kResults}, kType | kStatus | kResults, kResults}
	layoutGoalFinished     = layout{[]keySet{kType, kOutcome, kRounds, kTokensUsed}, kType | kOutcome | kRounds | kTokensUsed, kRounds | kTokensUsed}
)

// modelLayout returns the layout of a model_msg payload type, or nil.
func modelLayout(payloadType string) *layout {
	if mt := modelTypeOf(payloadType); mt != nil {
		return mt.lay
	}
	return nil
}

// eventLayout returns the layout of an event_msg payload type, or nil.
func eventLayout(payloadType string) *layout {
	if i := eventTab.findString(payloadType); i >= 0 {
		return eventLayouts[i]
	}
	return nil
}

// eventTab and eventLayouts hold the event payload types and their
// layouts, in the same order (a table: see strTab).
var (
	eventTab = newStrTab([]string{
		RequestBegin, RequestEnd, ApprovalDecision, TokenUsage, CompactionBegin, CompactionEnd,
		Abort, Subagent, ToolListReady, MCPConnectBegin, MCPConnectEnd, GoalFinished,
	})
	eventLayouts = [...]*layout{
		&layoutRequestBegin, &layoutRequestEnd, &layoutApprovalDecision, &layoutTokenUsage, &layoutCompactionBegin, &layoutCompactionEnd,
		&layoutAbort, &layoutSubagent, &layoutToolListReady, &layoutMCPConnectBegin, &layoutMCPConnectEnd, &layoutGoalFinished,
	}
)

// layoutOf returns the layout of payloadType inside an envelope of type
// envType, or nil when the pair is unknown. An envelope type this package
// does not know accepts the payload types of both model_msg and event_msg.
func layoutOf(envType, payloadType string) *layout {
	switch envType {
	case TypeSessionMeta:
		return &layoutSessionMeta
	case TypeModelMsg:
		return modelLayout(payloadType)
	case TypeEventMsg:
		return eventLayout(payloadType)
	}
	if l := modelLayout(payloadType); l != nil {
		return l
	}
	return eventLayout(payloadType)
}

// MarshalJSON encodes m as one line of JSON (no trailing newline).
func (m Message) MarshalJSON() ([]byte, error) {
	return m.AppendJSON(make([]byte, 0, 256)), nil
}

// AppendJSON appends the JSON encoding of m to dst. Keys come in reference
// order; strings are escaped exactly as JavaScript's JSON.stringify does, so
// a trace written here diffs cleanly against one written by the reference.
// An empty Timestamp is omitted.
func (m *Message) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	if m.Timestamp != "" {
		dst = append(dst, `"timestamp":`...)
		dst = appendString(dst, m.Timestamp)
		dst = append(dst, ',')
	}
	dst = append(dst, `"type":`...)
	dst = appendString(dst, m.Type)
	dst = append(dst, `,"payload":`...)
	dst = m.Payload.appendJSON(dst, layoutOf(m.Type, m.Payload.Type))
	if len(m.Origin) > 0 {
		dst = append(dst, `,"origin":`...)
		dst = appendStrings(dst, m.Origin)
	}
	return append(dst, '}')
}

// MarshalJSON encodes the payload alone, as it would appear in a
// model_msg or event_msg envelope (a payload with Type "" is laid out as a
// session_meta payload).
func (p Payload) MarshalJSON() ([]byte, error) {
	lay := layoutOf("", p.Type)
	if p.Type == "" {
		lay = &layoutSessionMeta
	}
	return p.appendJSON(nil, lay), nil
}

// appendJSON writes the payload object. Keys of lay come first in reference
// order, then any other known key the payload holds, then Extra. A payload
// built in Go always gets the required keys of its layout; a decoded one
// gets exactly the keys it was decoded with (plus any field set since), so
// a forwarded message is written back as it came (PROTOCOL.md P-5).
func (p *Payload) appendJSON(dst []byte, lay *layout) []byte {
	dst = append(dst, '{')
	first := true
	keys := p.presentKeys()
	if keys&kType != 0 && (lay == nil || lay.order[0] != kType) {
		// A stray "type" (in session_meta) still leads.
		dst, first = p.appendKey(dst, kType, first)
		keys &^= kType
	}
	if lay != nil {
		if !p.Decoded() {
			keys |= lay.required
		}
		for _, k := range lay.order {
			if keys&k != 0 {
				dst, first = p.appendKey(dst, k, first)
				keys &^= k
			}
		}
	}
	for keys != 0 { // known keys outside the layout, in key order
		k := keys & -keys
		dst, first = p.appendKey(dst, k, first)
		keys &^= k
	}
	for _, f := range p.Extra() {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendString(dst, f.Key)
		dst = append(dst, ':')
		dst = appendRaw(dst, f.Value, "null")
	}
	return append(dst, '}')
}

// presentKeys returns the keys the payload holds: those it was decoded with
// plus those whose field is not zero. A key in it is written even where it
// is optional.
func (p *Payload) presentKeys() keySet {
	r := p.view()
	m := p.modelKeys() // with the keys the decoder saw
	set := func(k keySet, on bool) {
		if on {
			m |= k
		}
	}
	set(kImages, len(r.Images) > 0)
	set(kFidelity, len(r.Fidelity) > 0)
	set(kStatus, r.Status != "")
	set(kErrorMessage, r.ErrorMessage != "")
	set(kAttempt, r.Attempt != 0)
	set(kRetryInMs, r.RetryInMs != nil)
	set(kDecision, r.Decision != "")
	set(kSession, r.Session != nil)
	set(kRequest, r.Request != nil)
	set(kReason, r.Reason != "" || r.ReasonNull)
	set(kMode, r.Mode != "")
	set(kContext, r.Context != 0)
	set(kTurns, r.Turns != 0)
	set(kSessionID, r.SessionID != "")
	set(kTools, r.Tools != nil)
	set(kServers, r.Servers != nil)
	set(kResults, len(r.Results) > 0)
	set(kOutcome, r.Outcome != "")
	set(kRounds, r.Rounds != 0)
	set(kTokensUsed, r.TokensUsed != 0)
	set(kProvider, r.Provider != "")
	set(kModelID, r.ModelID != "")
	set(kModelContextWindow, len(r.ModelContextWindow) > 0)
	set(kSystemPrompt, r.SystemPrompt != "")
	set(kAgentState, r.AgentState != "")
	set(kWorkspace, r.Workspace != "")
	set(kSource, r.Source != "")
	return m
}

// modelKeys decides the keys validation reads of a model_msg payload:
// those its layouts require, stop_reason and sender (modelKeyMask), and
// adds the keys the decoder saw. presentKeys adds the rest to it.
func (p *Payload) modelKeys() keySet {
	r := p.view()
	m := p.has &^ kDecoded
	set := func(k keySet, on bool) {
		if on {
			m |= k
		}
	}
	set(kType, p.Type != "")
	set(kRole, p.Role != "")
	set(kText, p.Text != "")
	set(kThinking, p.Thinking != "")
	set(kImageURL, r.ImageURL != "")
	set(kData, r.Data != "")
	set(kMimeType, r.MimeType != "")
	set(kName, p.Name != "")
	set(kArguments, p.Arguments != "")
	set(kToolCallID, p.ToolCallID != "")
	set(kOutput, p.Output != "")
	set(kEventType, p.EventType != "")
	set(kStopReason, p.StopReason != "")
	set(kSender, r.Sender != "")
	return m
}

// modelKeyMask holds the keys modelKeys decides.
const modelKeyMask = kType | kRole | kText | kThinking | kImageURL | kData | kMimeType | kName |
	kArguments | kToolCallID | kOutput | kEventType | kStopReason | kSender

func (p *Payload) appendKey(dst []byte, k keySet, first bool) ([]byte, bool) {
	r := p.view()
	if !first {
		dst = append(dst, ',')
	}
	i := bits.TrailingZeros64(uint64(k))
	dst = append(dst, '"')
	dst = append(dst, keyNameTab[i]...)
	dst = append(dst, '"', ':')
	// The plain string and integer fields, as the decoder reads them.
	if t := valueSlots[i]; t.kind != 0 {
		base := unsafe.Pointer(p)
		if t.rest {
			base = unsafe.Pointer(r)
		}
		at := unsafe.Add(base, t.off)
		if t.kind == slotInt {
			return strconv.AppendInt(dst, *(*int64)(at), 10), false
		}
		return appendString(dst, *(*string)(at)), false
	}
	switch k {
	case kImages:
		dst = appendStrings(dst, r.Images)
	case kFidelity:
		dst = appendRaw(dst, r.Fidelity, "{}")
	case kAttempt:
		dst = strconv.AppendInt(dst, int64(r.Attempt), 10)
	case kRetryInMs:
		v := 0
		if r.RetryInMs != nil {
			v = *r.RetryInMs
		}
		dst = strconv.AppendInt(dst, int64(v), 10)
	case kSession:
		dst = appendCounts(dst, r.Session)
	case kRequest:
		dst = appendCounts(dst, r.Request)
	case kReason:
		if r.ReasonNull && r.Reason == "" {
			dst = append(dst, "null"...)
		} else {
			dst = appendString(dst, r.Reason)
		}
	case kTools:
		dst = appendTools(dst, r.Tools)
	case kServers:
		dst = appendStrings(dst, r.Servers)
	case kResults:
		dst = appendRaw(dst, r.Results, "[]")
	case kModelContextWindow:
		dst = appendRaw(dst, r.ModelContextWindow, "0")
	}
	return dst, false
}

func appendRaw(dst, raw []byte, empty string) []byte {
	if len(raw) == 0 {
		return append(dst, empty...)
	}
	return append(dst, raw...)
}

// AppendJSON appends c as a JSON object: the four counts, then Extra.
func (c TokenCounts) AppendJSON(dst []byte) []byte { return appendCounts(dst, &c) }

func appendCounts(dst []byte, c *TokenCounts) []byte {
	var z TokenCounts
	if c == nil {
		c = &z
	}
	dst = append(dst, `{"cache_read":`...)
	dst = strconv.AppendInt(dst, c.CacheRead, 10)
	dst = append(dst, `,"cache_write":`...)
	dst = strconv.AppendInt(dst, c.CacheWrite, 10)
	dst = append(dst, `,"output":`...)
	dst = strconv.AppendInt(dst, c.Output, 10)
	dst = append(dst, `,"total":`...)
	dst = strconv.AppendInt(dst, c.Total, 10)
	if c.Extra != "" {
		dst = append(append(dst, ','), c.Extra...)
	}
	return append(dst, '}')
}

func appendTools(dst []byte, tools []ToolDefinition) []byte {
	dst = append(dst, '[')
	for i, t := range tools {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"name":`...)
		dst = appendString(dst, t.Name)
		dst = append(dst, `,"description":`...)
		dst = appendString(dst, t.Description)
		if len(t.Parameters) > 0 {
			dst = append(dst, `,"parameters":`...)
			dst = append(dst, t.Parameters...)
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

func appendStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, s)
	}
	return append(dst, ']')
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string the way JSON.stringify writes it:
// only '"', '\\' and control characters are escaped; invalid UTF-8 becomes
// U+FFFD.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if plainByte[c] {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, `\ufffd`...)
				i += size
				start = i
				continue
			}
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
