package omni

// keySet is a bitmask of known payload keys, recorded by the decoder.
type keySet uint64

// Known payload keys, one bit each.
const (
	kType keySet = 1 << iota
	kRole
	kText
	kThinking
	kImageURL
	kData
	kMimeType
	kName
	kArguments
	kToolCallID
	kOutput
	kImages
	kEventType
	kStopReason
	kSender
	kFidelity
	kStatus
	kErrorMessage
	kAttempt
	kRetryInMs
	kDecision
	kSession
	kRequest
	kReason
	kMode
	kContext
	kTurns
	kSessionID
	kTools
	kServers
	kResults
	kOutcome
	kRounds
	kTokensUsed
	kProvider
	kModelID
	kModelContextWindow
	kSystemPrompt
	kAgentState
	kWorkspace
	kSource
)

// keyNames maps each known key bit to its JSON name.
var keyNames = map[keySet]string{
	kType: "type", kRole: "role", kText: "text", kThinking: "thinking",
	kImageURL: "image_url", kData: "data", kMimeType: "mime_type", kName: "name",
	kArguments: "arguments", kToolCallID: "tool_call_id", kOutput: "output",
	kImages: "images", kEventType: "event_type", kStopReason: "stop_reason",
	kSender: "sender", kFidelity: "fidelity", kStatus: "status",
	kErrorMessage: "error_message", kAttempt: "attempt", kRetryInMs: "retry_in_ms",
	kDecision: "decision", kSession: "session", kRequest: "request", kReason: "reason",
	kMode: "mode", kContext: "context", kTurns: "turns", kSessionID: "session_id",
	kTools: "tools", kServers: "servers", kResults: "results", kOutcome: "outcome",
	kRounds: "rounds", kTokensUsed: "tokens_used", kProvider: "provider",
	kModelID: "model_id", kModelContextWindow: "model_context_window",
	kSystemPrompt: "system_prompt", kAgentState: "agent_state",
	kWorkspace: "workspace", kSource: "source",
}

// keyBits is the inverse of keyNames.
var keyBits = func() map[string]keySet {
	m := make(map[string]keySet, len(keyNames))
	for b, n := range keyNames {
		m[n] = b
	}
	return m
}()

// Has reports whether the decoded payload carried the JSON key name. For a
// payload built in Go (not decoded) it reports false for every key.
func (p *Payload) Has(name string) bool {
	b, ok := keyBits[name]
	return ok && p.has&b != 0
}

// Decoded reports whether the payload came from the decoder.
func (p *Payload) Decoded() bool { return p.has&kDecoded != 0 }
