package trace

import (
	"github.com/floehq/floe/internal/errf"
	"strings"

	"github.com/floehq/floe/engine/omni"
)

// MetaError reports a session_meta payload that cannot start a session.
// Key is the payload key at fault ("provider", "session_id"), or "" when the
// payload as a whole is wrong (not a JSON object).
type MetaError struct {
	Key string
	Msg string
}

func (e *MetaError) Error() string {
	if e.Key == "" {
		return "session_meta: " + e.Msg
	}
	return "session_meta: " + e.Key + ": " + e.Msg
}

// ParseMeta decodes the JSON of a session_meta payload (PROTOCOL.md §2,
// without the envelope) for a new session and checks it with [CheckMeta].
// Errors are [*MetaError] values naming the key.
func ParseMeta(payload []byte) (omni.Message, error) {
	data := make([]byte, 0, len(payload)+40)
	data = append(data, `{"type":"session_meta","payload":`...)
	data = append(append(data, payload...), '}')
	m, err := omni.Decode(data)
	if err != nil {
		if de, ok := errf.As[*omni.DecodeError](err); ok {
			key, ok := strings.CutPrefix(de.Field, "payload.")
			if !ok && de.Field == "payload" {
				key = ""
			}
			return m, &MetaError{Key: key, Msg: de.Msg}
		}
		return m, &MetaError{Msg: err.Error()}
	}
	return m, CheckMeta(m)
}

// CheckMeta reports whether m is a session_meta a new session can be
// started and traced with: valid per PROTOCOL.md §2 (every required key
// present with its type, source one of subagent|schedule; [omni.Validate])
// and a session id that can name a Trace in every Store ([ValidateID]: the
// file layout <yyyy-mm-dd>/<session_id>_NNN.jsonl needs it to be one path
// segment). The reference's ids (session-YYYY-MM-DD-HH-mm-ss-<8 hex>)
// pass. Errors are [*MetaError] values naming the key.
func CheckMeta(m omni.Message) error {
	if m.Type != omni.TypeSessionMeta {
		return &MetaError{Msg: "want a session_meta message, got type " + errf.Quote(m.Type)}
	}
	if err := omni.Validate(m); err != nil {
		ve, ok := errf.As[*omni.ValidationError](err)
		if !ok {
			return &MetaError{Msg: err.Error()}
		}
		msg := ve.Msg
		if ve.Value != "" {
			msg = ve.Value + " " + msg
		}
		return &MetaError{Key: strings.TrimPrefix(ve.Field, "payload."), Msg: msg}
	}
	if why := idProblem(m.Payload.SessionID()); why != "" {
		return &MetaError{Key: "session_id", Msg: QuoteID(m.Payload.SessionID()) + " " + why + " (it names the session's Trace files)"}
	}
	return nil
}
