package playground

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// SystemPrompt is the playground session's system prompt.
const SystemPrompt = "You are the Floe playground's scripted model. Explore the in-memory workspace with list_files and count_lines, then report."

// NewSession returns an engine session wired to a fresh scripted [Model]
// and the demo [Workspace], both paced by pace (nil: no waiting). It has no
// Trace.
func NewSession(pace Pace) (*engine.Session, error) {
	ws := NewWorkspace(pace)
	return engine.New(engine.Config{
		Meta:        Meta(time.Now()),
		LLM:         NewModel(ws, pace),
		Environment: ws,
		ToolList:    ws.Tools(),
		MaxTurns:    8,
	})
}

// Meta returns a session_meta for a playground session created at now, with
// a session id in the reference format (PROTOCOL.md §2).
func Meta(now time.Time) omni.Message {
	var b [4]byte
	rand.Read(b[:])
	now = now.UTC()
	return omni.Message{
		Timestamp: now.Format(omni.TimestampLayout),
		Type:      omni.TypeSessionMeta,
		Payload: omni.Payload{
			SessionID:          "session-" + now.Format("2006-01-02-15-04-05") + "-" + hex.EncodeToString(b[:]),
			Provider:           "floe-playground",
			ModelID:            "scripted",
			ModelContextWindow: json.RawMessage("32000"),
			SystemPrompt:       SystemPrompt,
			AgentState:         "memory",
			Workspace:          "memory://demo",
		},
	}
}
