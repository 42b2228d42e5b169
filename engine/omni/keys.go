package omni

import "math/bits"

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

// kDecoded marks a payload that came from the decoder, whatever keys it had.
const kDecoded keySet = 1 << 63

// keyNameTab holds the JSON name of each known key, indexed by bit number.
var keyNameTab = [...]string{
	"type", "role", "text", "thinking", "image_url", "data", "mime_type", "name",
	"arguments", "tool_call_id", "output", "images", "event_type", "stop_reason",
	"sender", "fidelity", "status", "error_message", "attempt", "retry_in_ms",
	"decision", "session", "request", "reason", "mode", "context", "turns",
	"session_id", "tools", "servers", "results", "outcome", "rounds",
	"tokens_used", "provider", "model_id", "model_context_window",
	"system_prompt", "agent_state", "workspace", "source",
}

// payloadPathTab holds "payload.<name>" for each known key, so error paths
// cost nothing to build.
var payloadPathTab = func() (t [len(keyNameTab)]string) {
	for i, n := range keyNameTab {
		t[i] = "payload." + n
	}
	return t
}()

// keyName returns the JSON name of the single key bit k.
func keyName(k keySet) string { return keyNameTab[bits.TrailingZeros64(uint64(k))] }

// payloadPath returns "payload.<name>" for the single key bit k.
func payloadPath(k keySet) string { return payloadPathTab[bits.TrailingZeros64(uint64(k))] }

// keyBits maps each known JSON name to its bit.
var keyBits = func() map[string]keySet {
	m := make(map[string]keySet, len(keyNameTab))
	for i, n := range keyNameTab {
		m[n] = 1 << i
	}
	return m
}()

// lookupKey returns the bit of the known key named b, or 0. A switch beats
// a map lookup here, and neither allocates.
func lookupKey(b []byte) keySet {
	switch string(b) {
	case "type":
		return kType
	case "role":
		return kRole
	case "text":
		return kText
	case "thinking":
		return kThinking
	case "image_url":
		return kImageURL
	case "data":
		return kData
	case "mime_type":
		return kMimeType
	case "name":
		return kName
	case "arguments":
		return kArguments
	case "tool_call_id":
		return kToolCallID
	case "output":
		return kOutput
	case "images":
		return kImages
	case "event_type":
		return kEventType
	case "stop_reason":
		return kStopReason
	case "sender":
		return kSender
	case "fidelity":
		return kFidelity
	case "status":
		return kStatus
	case "error_message":
		return kErrorMessage
	case "attempt":
		return kAttempt
	case "retry_in_ms":
		return kRetryInMs
	case "decision":
		return kDecision
	case "session":
		return kSession
	case "request":
		return kRequest
	case "reason":
		return kReason
	case "mode":
		return kMode
	case "context":
		return kContext
	case "turns":
		return kTurns
	case "session_id":
		return kSessionID
	case "tools":
		return kTools
	case "servers":
		return kServers
	case "results":
		return kResults
	case "outcome":
		return kOutcome
	case "rounds":
		return kRounds
	case "tokens_used":
		return kTokensUsed
	case "provider":
		return kProvider
	case "model_id":
		return kModelID
	case "model_context_window":
		return kModelContextWindow
	case "system_prompt":
		return kSystemPrompt
	case "agent_state":
		return kAgentState
	case "workspace":
		return kWorkspace
	case "source":
		return kSource
	}
	return 0
}

// Has reports whether the decoded payload carried the JSON key name. For a
// payload built in Go (not decoded) it reports false for every key.
func (p *Payload) Has(name string) bool {
	b, ok := keyBits[name]
	return ok && p.has&b != 0
}

// Decoded reports whether the payload came from the decoder.
func (p *Payload) Decoded() bool { return p.has&kDecoded != 0 }
