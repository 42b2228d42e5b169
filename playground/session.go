package playground

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// SystemPrompt is the playground session's system prompt.
const SystemPrompt = "You are the Floe playground's scripted model. Explore the in-memory workspace with list_files and count_lines, then report."

// NewSession returns an engine session wired to a fresh scripted [Model]
// and the demo [Workspace], both paced by pace (nil: no waiting). It has no
// Trace. diag, if non-nil, receives the engine's diagnostics.
func NewSession(pace Pace, diag func(engine.Diagnostic)) (*engine.Session, error) {
	ws := NewWorkspace(pace)
	return engine.New(engine.Config{
		Meta:         Meta(time.Now()),
		LLM:          NewModel(ws, pace),
		Environment:  ws,
		ToolList:     ws.Tools(),
		MaxTurns:     8,
		OnDiagnostic: diag,
	})
}

// Meta returns a session_meta for a playground session created at now, with
// a session id in the reference format (PROTOCOL.md §2). The id's random
// part only has to tell this tab's sessions apart, so it is not from
// crypto/rand, which would double the size of the page's WebAssembly.
func Meta(now time.Time) omni.Message {
	now = now.UTC()
	return omni.Message{
		Timestamp: now.Format(omni.TimestampLayout),
		Type:      omni.TypeSessionMeta,
		Payload: omni.Payload{
			SessionID:          "session-" + now.Format("2006-01-02-15-04-05") + fmt.Sprintf("-%08x", rand.Uint32()),
			Provider:           "floe-playground",
			ModelID:            "scripted",
			ModelContextWindow: omni.RawJSON("32000"),
			SystemPrompt:       SystemPrompt,
			AgentState:         "memory",
			Workspace:          "memory://demo",
		},
	}
}
