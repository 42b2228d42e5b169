package omni

// Envelope types (PROTOCOL.md P-2).
const (
	TypeSessionMeta = "session_meta"
	TypeModelMsg    = "model_msg"
	TypeEventMsg    = "event_msg"
)

// Complete model_msg payload types (PROTOCOL.md §3).
const (
	Text           = "text"
	ImageURL       = "image_url"
	InlineData     = "inline_data"
	Thinking       = "thinking"
	InlineThinking = "inline_thinking"
	ToolCall       = "tool_call"
	ToolCallOutput = "tool_call_output"
)

// Streaming fragment payload types (PROTOCOL.md §4).
const (
	PartialText           = "partial_text"
	PartialThinking       = "partial_thinking"
	PartialToolCall       = "partial_tool_call"
	PartialToolCallOutput = "partial_tool_call_output"
)

// event_msg payload types (PROTOCOL.md §5).
const (
	RequestBegin     = "request_begin"
	RequestEnd       = "request_end"
	ApprovalDecision = "approval_decision"
	TokenUsage       = "token_usage"
	CompactionBegin  = "compaction_begin"
	CompactionEnd    = "compaction_end"
	Abort            = "abort"
	Subagent         = "subagent"
	ToolListReady    = "tool_list_ready"
	MCPConnectBegin  = "mcp_connect_begin"
	MCPConnectEnd    = "mcp_connect_end"
	GoalFinished     = "goal_finished"
)

// Roles.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Fragment event types (PROTOCOL.md §4).
const (
	EventStart = "start"
	EventDelta = "delta"
	EventStop  = "stop"
)

// The six stop reasons / statuses (PROTOCOL.md §6).
const (
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusAborted   = "aborted"
	StatusTimeout   = "timeout"
	StatusMalformed = "malformed"
	StatusAuth      = "auth"
)

// Approval decisions (PROTOCOL.md §5).
const (
	DecisionAllow     = "allow"
	DecisionDeny      = "deny"
	DecisionForbidden = "forbidden"
)

// Senders of user text (PROTOCOL.md §3). Absent means SenderUser.
const (
	SenderUser        = "user"
	SenderParentAgent = "parent_agent"
	SenderHarness     = "harness"
	SenderServer      = "server"
)

// Compaction reasons and modes (PROTOCOL.md §5).
const (
	ReasonContext   = "context"
	ReasonTurns     = "turns"
	ReasonManual    = "manual"
	ModeSummarize   = "summarize"
	ModeDiscard     = "discard"
	SourceSubagent  = "subagent"
	SourceSchedule  = "schedule"
	TimestampLayout = "2006-01-02T15:04:05.000Z"
)

// Message is one OmniMessage envelope (PROTOCOL.md §1).
//
// A Message is a value of 232 bytes (on a 64-bit platform, WebAssembly
// included): copying it is cheap enough for the hot path and the engine
// never mutates a message it was handed. Its Payload.Rest and the slices
// inside it (Origin, Rest.Images, Rest.Tools, raw JSON) are shared between
// copies and must be treated as immutable once the message has been
// emitted; Payload.Edit gives a copy a Rest of its own to change.
type Message struct {
	Timestamp string   // ISO-8601 UTC, "2006-01-02T15:04:05.000Z"; "" = not stamped yet
	Type      string   // TypeSessionMeta, TypeModelMsg or TypeEventMsg
	Origin    []string // subagent chain, outer → inner; nil for the session's own messages
	Payload   Payload
}

// Payload is the union of every payload of PROTOCOL.md §2–§5. Which fields
// are meaningful depends on Type (and, for session_meta, on the envelope:
// a session_meta payload has Type ""). Fields the protocol marks optional are
// omitted from the JSON when they hold their zero value, except where noted.
//
// The fields of the streamed fragments and of the complete text, thinking,
// tool_call and tool_call_output messages, which make up almost all of a
// run's traffic, are Payload's own; every other field is in Rest, which is
// nil when all of them are zero. Rest is shared between copies of a
// message, like its slices: read its fields with the getters of the same
// name (Status, Reason, …), which are nil-safe, and change them through
// Edit, which gives the payload a Rest of its own.
type Payload struct {
	_ [0]func() // not comparable (as before Rest): no equality code is generated

	Type string // payload type; "" for session_meta

	// model_msg
	Role       string
	Text       string // text, partial_text
	Thinking   string // thinking, partial_thinking
	Name       string // tool_call, partial_tool_call
	Arguments  string // tool_call, partial_tool_call (JSON text)
	ToolCallID string // tool_call*, approval_decision
	Output     string // tool_call_output, partial_tool_call_output
	EventType  string // partial_*: start | delta | stop
	StopReason string // one of the six statuses; "" = absent

	// Rest holds every other field; nil = all zero. Copies of a message,
	// and some built messages, share it: change a message's Rest through
	// Edit.
	Rest *Rest

	// has records which keys were present when the payload was decoded, so
	// validation can tell "missing" from "empty". Builders leave it zero.
	has keySet
}

// Rest is the part of a Payload that fragments and complete text,
// thinking, tool_call and tool_call_output messages leave empty.
//
// Keys this package does not know are kept in Extra with their raw JSON and
// written back verbatim (PROTOCOL.md P-5); Fidelity is kept byte for byte.
type Rest struct {
	// model_msg
	ImageURL string   // image_url
	Data     string   // inline_data, inline_thinking (base64)
	MimeType string   // inline_data, inline_thinking
	Images   []string // tool_call_output, partial_tool_call_output (data: URLs)
	Sender   string   // text, user role only; "" = absent (= "user")
	Fidelity RawJSON

	// event_msg
	Status       string       // request_end, compaction_end, mcp_connect_end
	ErrorMessage string       // request_end, compaction_end; "" = absent
	Attempt      int          // request_end, compaction_end; 0 = absent
	RetryInMs    *int         // request_end; nil = absent
	Decision     string       // approval_decision
	Session      *TokenCounts // token_usage
	Request      *TokenCounts // token_usage
	Reason       string       // compaction_*, abort
	ReasonNull   bool         // abort: "reason": null on the wire (readers accept it)
	Mode         string       // compaction_*
	Context      int64        // compaction_begin
	Turns        int64        // compaction_begin
	SessionID    string       // subagent, session_meta
	Tools        []ToolDefinition
	Servers      []string // mcp_connect_begin
	Results      RawJSON  // mcp_connect_end: McpServerConnectResult[] (reference detail, kept raw)
	Outcome      string   // goal_finished
	Rounds       int64    // goal_finished
	TokensUsed   int64    // goal_finished

	// session_meta (Type == "")
	Provider           string
	ModelID            string
	ModelContextWindow RawJSON // number or string, kept raw
	SystemPrompt       string
	AgentState         string
	Workspace          string
	Source             string // "subagent" | "schedule" | "" (absent)

	// Extra holds keys this package does not know, in the order read.
	Extra []RawField
}

// RawJSON is a raw JSON value kept byte for byte (fidelity, unknown keys,
// tool parameters). It marshals as itself with encoding/json, like
// json.RawMessage, without this package importing encoding/json: that
// import alone would add about 90 KB to the WebAssembly build.
type RawJSON []byte

// MarshalJSON returns r itself, or null when r is empty.
func (r RawJSON) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	return r, nil
}

// UnmarshalJSON keeps a copy of data.
func (r *RawJSON) UnmarshalJSON(data []byte) error {
	*r = append((*r)[:0], data...)
	return nil
}

// RawField is one unknown payload key and its raw JSON value.
type RawField struct {
	Key   string
	Value RawJSON
}

// TokenCounts is the token accounting of token_usage (PROTOCOL.md §5). All
// four keys are always written.
type TokenCounts struct {
	CacheRead  int64 `json:"cache_read"`  // input tokens read from the provider's prompt cache
	CacheWrite int64 `json:"cache_write"` // input tokens written to it
	Output     int64 `json:"output"`      // tokens the model generated (thinking included)
	// Total is every token of the request, input (cached or not) and
	// output, as the provider counts it: a request's Total is the
	// context's size. There is no input key; an adapter gives it apart
	// (provider.Usage.Input).
	Total int64 `json:"total"`
	// Extra is a decoded object's members beyond the four, as they came
	// (`"input":5,"x":{}`), written back after them: a producer's keys
	// survive (P-5).
	Extra string `json:"-"`
}

// Add returns the field-by-field sum of t and u, without Extra.
func (t TokenCounts) Add(u TokenCounts) TokenCounts {
	return TokenCounts{CacheRead: t.CacheRead + u.CacheRead, CacheWrite: t.CacheWrite + u.CacheWrite, Output: t.Output + u.Output, Total: t.Total + u.Total}
}

// ToolDefinition describes one tool (PROTOCOL.md §5, tool_list_ready).
type ToolDefinition struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Parameters  RawJSON `json:"parameters,omitempty"`
}

// IsPartial reports whether m is a streaming fragment (partial_*).
func (m *Message) IsPartial() bool {
	// Every partial type is "partial_" and more; no complete type starts
	// with p. Tested against modelTypeOf (kinds_test.go).
	t := m.Payload.Type
	if len(t) < len(PartialText) || t[0] != 'p' || !same(m.Type, TypeModelMsg) {
		return false
	}
	switch len(t) {
	case len(PartialText):
		return same(t, PartialText)
	case len(PartialThinking):
		return same(t, PartialThinking)
	case len(PartialToolCall):
		return same(t, PartialToolCall)
	case len(PartialToolCallOutput):
		return same(t, PartialToolCallOutput)
	}
	return false
}

// IsEvent reports whether m is an event_msg of the given payload type.
func (m *Message) IsEvent(payloadType string) bool {
	return same(m.Type, TypeEventMsg) && same(m.Payload.Type, payloadType)
}

// IsModel reports whether m is a model_msg of the given payload type.
func (m *Message) IsModel(payloadType string) bool {
	return same(m.Type, TypeModelMsg) && same(m.Payload.Type, payloadType)
}

// IsRealToolCall reports whether m is a complete tool_call whose stop_reason
// is exactly "completed" (ENGINE.md §0).
func (m *Message) IsRealToolCall() bool {
	return m.IsModel(ToolCall) && same(m.Payload.StopReason, StatusCompleted)
}

// Recordable reports whether m may be written to a Trace (ENGINE.md E-16.1):
// no origin, and session_meta, a complete model_msg or an event_msg.
func (m *Message) Recordable() bool {
	if len(m.Origin) > 0 {
		return false
	}
	switch {
	case same(m.Type, TypeModelMsg):
		return !m.IsPartial()
	case same(m.Type, TypeEventMsg), same(m.Type, TypeSessionMeta):
		return true
	}
	return false
}

// WithOrigin returns a copy of m whose origin is hop prepended to m's origin
// (PROTOCOL.md P-3, ENGINE.md E-15.5). The original is not modified.
func (m Message) WithOrigin(hop string) Message {
	o := make([]string, 0, len(m.Origin)+1)
	o = append(o, hop)
	m.Origin = append(o, m.Origin...)
	return m
}

// Body returns the streamed body of a text, thinking, tool call or tool
// output message, complete or partial: text, thinking, arguments or output.
func (p *Payload) Body() string { return p.bodyOf(modelTypeOf(p.Type)) }

// bodyOf is Body for a payload of type mt (nil: not a model type).
func (p *Payload) bodyOf(mt *modelType) string { return p.field(bodyKind(mt)) }

// bodyKind is the body field of mt: bodyNone for nil.
func bodyKind(mt *modelType) uint8 {
	if mt == nil {
		return bodyNone
	}
	return mt.body
}

// field returns the body field k (bodyText...) of p, or "".
func (p *Payload) field(k uint8) string {
	switch k {
	case bodyText:
		return p.Text
	case bodyThinking:
		return p.Thinking
	case bodyArguments:
		return p.Arguments
	case bodyOutput:
		return p.Output
	}
	return ""
}
