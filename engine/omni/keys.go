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

// lookupKey returns the bit of the known key named b, or 0.
func lookupKey(b []byte) keySet {
	if i := keyTab.find(b); i >= 0 {
		return 1 << i
	}
	return 0
}

// keyTab finds a known key's bit number by its name.
var keyTab = newStrTab(keyNameTab[:])

// Has reports whether the decoded payload carried the JSON key name. For a
// payload built in Go (not decoded) it reports false for every key.
func (p *Payload) Has(name string) bool {
	b, ok := keyBits[name]
	return ok && p.has&b != 0
}

// Decoded reports whether the payload came from the decoder.
func (p *Payload) Decoded() bool { return p.has&kDecoded != 0 }
