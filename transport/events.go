package transport

import (
	"strconv"
	"unicode/utf8"
)

// Run states of the task_state event (TRANSPORT.md §4).
const (
	StateIdle       = "idle"
	StateRunning    = "running"
	StateCompacting = "compacting"
)

// Pending is one entry of task_state's pendingSteering / pendingFollowUps.
type Pending struct {
	ID     string
	Text   string
	Images int
	Files  int
}

// TaskState is the task_state server event.
type TaskState struct {
	State            string
	Queued           int // omitted when 0
	PendingSteering  []Pending
	PendingFollowUps []Pending
}

// Event returns the task_state server event.
func (t TaskState) Event() Event {
	b := []byte(`{"type":"task_state","state":`)
	b = AppendString(b, t.State)
	if t.Queued > 0 {
		b = append(b, `,"queued":`...)
		b = strconv.AppendInt(b, int64(t.Queued), 10)
	}
	b = appendPending(b, "pendingSteering", t.PendingSteering)
	b = appendPending(b, "pendingFollowUps", t.PendingFollowUps)
	return Event{Name: EventServer, Data: append(b, '}')}
}

func appendPending(b []byte, key string, ps []Pending) []byte {
	if len(ps) == 0 {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, `":[`...)
	for i, p := range ps {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = AppendString(b, p.ID)
		b = append(b, `,"text":`...)
		b = AppendString(b, p.Text)
		b = append(b, `,"images":`...)
		b = strconv.AppendInt(b, int64(p.Images), 10)
		b = append(b, `,"files":`...)
		b = strconv.AppendInt(b, int64(p.Files), 10)
		b = append(b, '}')
	}
	return append(b, ']')
}

// ApprovalRequest returns the approval_request server event for a tool_call
// message given as its JSON text, with the origin when non-empty.
func ApprovalRequest(toolCallJSON []byte, origin []string) Event {
	b := []byte(`{"type":"approval_request","toolCall":`)
	b = append(b, toolCallJSON...)
	if len(origin) > 0 {
		b = append(b, `,"origin":[`...)
		for i, o := range origin {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, o)
		}
		b = append(b, ']')
	}
	return Event{Name: EventServer, Data: append(b, '}')}
}

// Simple returns a server event {"type":typ} followed by string fields
// given as key, value pairs.
func Simple(typ string, kv ...string) Event {
	b := []byte(`{"type":`)
	b = AppendString(b, typ)
	for i := 0; i+1 < len(kv); i += 2 {
		b = append(b, ',')
		b = AppendString(b, kv[i])
		b = append(b, ':')
		b = AppendString(b, kv[i+1])
	}
	return Event{Name: EventServer, Data: append(b, '}')}
}

// AppendString appends s as a JSON string the way JSON.stringify writes it.
func AppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
			continue
		default:
			b = append(b, c)
		}
		i++
	}
	return append(b, '"')
}

// SessionState returns the user channel's session_state server event.
func SessionState(sessionID, state, lastActiveAt string, hasTrace bool) Event {
	b := []byte(`{"type":"session_state","sessionId":`)
	b = AppendString(b, sessionID)
	b = append(b, `,"state":`...)
	b = AppendString(b, state)
	b = append(b, `,"lastActiveAt":`...)
	b = AppendString(b, lastActiveAt)
	b = append(b, `,"hasTrace":`...)
	b = strconv.AppendBool(b, hasTrace)
	return Event{Name: EventServer, Data: append(b, '}')}
}
