package omni

import "strconv"

// Builders for the messages the engine synthesizes. They return complete
// values; callers stamp Timestamp.

// UserText is text{role:"user", text, stop_reason:"completed"}.
func UserText(text string) Message {
	return Message{Type: TypeModelMsg, Payload: Payload{Type: Text, Role: RoleUser, Text: text, StopReason: StatusCompleted}}
}

// AssistantText is text{role:"assistant", text, stop_reason}.
func AssistantText(text, stopReason string) Message {
	return Message{Type: TypeModelMsg, Payload: Payload{Type: Text, Role: RoleAssistant, Text: text, StopReason: stopReason}}
}

// ToolOutput is tool_call_output{role:"user", output, tool_call_id, stop_reason}.
func ToolOutput(callID, output, stopReason string) Message {
	return Message{Type: TypeModelMsg, Payload: Payload{Type: ToolCallOutput, Role: RoleUser, Output: output, ToolCallID: callID, StopReason: stopReason}}
}

// ToolCallMsg is a complete tool_call with stop_reason "completed".
func ToolCallMsg(callID, name, arguments string) Message {
	return Message{Type: TypeModelMsg, Payload: Payload{Type: ToolCall, Role: RoleAssistant, Name: name, Arguments: arguments, ToolCallID: callID, StopReason: StatusCompleted}}
}

// Partial builds a partial_* fragment of the given payload type with body
// placed in the field that type streams (text, thinking, arguments, output).
// For tool fragments, callID (and name for tool calls) identify the call.
func Partial(payloadType, eventType, body, callID, name, stopReason string) Message {
	p := Payload{Type: payloadType, EventType: eventType, StopReason: stopReason}
	switch payloadType {
	case PartialText:
		p.Role, p.Text = RoleAssistant, body
	case PartialThinking:
		p.Role, p.Thinking = RoleAssistant, body
	case PartialToolCall:
		p.Role, p.Arguments, p.ToolCallID, p.Name = RoleAssistant, body, callID, name
	case PartialToolCallOutput:
		p.Role, p.Output, p.ToolCallID = RoleUser, body, callID
	}
	return Message{Type: TypeModelMsg, Payload: p}
}

// Event builds an event_msg with the given payload (its Type must be set).
func Event(p Payload) Message { return Message{Type: TypeEventMsg, Payload: p} }

// RequestBeginMsg is request_begin.
func RequestBeginMsg() Message { return Event(Payload{Type: RequestBegin}) }

// ApprovalDecisionMsg is approval_decision{decision, tool_call_id}. A
// standard decision's message shares its Rest with every other
// (sharedRests).
func ApprovalDecisionMsg(decision, callID string) Message {
	var r *Rest
	switch decision {
	case DecisionAllow:
		r = &sharedRests[restAllow]
	case DecisionDeny:
		r = &sharedRests[restDeny]
	case DecisionForbidden:
		r = &sharedRests[restForbidden]
	default:
		r = &Rest{Decision: decision}
	}
	return Event(Payload{Type: ApprovalDecision, ToolCallID: callID, Rest: r})
}

// AbortMsg is abort{reason}.
func AbortMsg(reason string) Message { return Event(Payload{Type: Abort, Rest: &Rest{Reason: reason}}) }

// TokenUsageMsg is token_usage{session, request}.
func TokenUsageMsg(session, request TokenCounts) Message {
	return Event(Payload{Type: TokenUsage, Rest: UsageRest(session, request)})
}

// SubagentMsg is the Trace-only subagent{session_id} pointer.
func SubagentMsg(sessionID string) Message {
	return Event(Payload{Type: Subagent, Rest: &Rest{SessionID: sessionID}})
}

// ToolListReadyMsg is tool_list_ready{tools}.
func ToolListReadyMsg(tools []ToolDefinition) Message {
	if tools == nil {
		tools = []ToolDefinition{}
	}
	return Event(Payload{Type: ToolListReady, Rest: &Rest{Tools: tools}})
}

// Meta is what a session_meta message says of its session (PROTOCOL.md
// §2); Message builds that message.
type Meta struct {
	SessionID     string
	Provider      string
	ModelID       string
	ContextWindow int64 // model_context_window, in tokens
	SystemPrompt  string
	AgentState    string // where the agent keeps its state: an opaque path or identifier (the reference's agent directory)
	Workspace     string // the workspace the tools work in: an opaque path or identifier
	Source        string // "" (a session of its own), SourceSubagent or SourceSchedule
}

// Message is the session_meta of m, without a timestamp (the engine
// stamps the one it writes). It checks nothing: [Validate] names a
// required field left empty (Provider, ModelID…), and trace.CheckMeta
// also whether SessionID can name a Trace in every store.
func (m Meta) Message() Message {
	return Message{Type: TypeSessionMeta, Payload: Payload{Rest: &Rest{
		SessionID: m.SessionID, Provider: m.Provider, ModelID: m.ModelID,
		ModelContextWindow: RawJSON(strconv.FormatInt(m.ContextWindow, 10)),
		SystemPrompt:       m.SystemPrompt, AgentState: m.AgentState, Workspace: m.Workspace, Source: m.Source,
	}}}
}
