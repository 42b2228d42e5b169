package omni

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// MaxMessageBytes caps the size of one encoded message the decoder accepts.
const MaxMessageBytes = 64 << 20

// kDecoded marks a payload that came from the decoder, whatever keys it had.
const kDecoded keySet = 1 << 63

// DecodeError reports why a message could not be decoded. Field is the JSON
// path of the offending value ("payload.text"), or "" for the whole message.
type DecodeError struct {
	Field string
	Msg   string
}

func (e *DecodeError) Error() string {
	if e.Field == "" {
		return "omni: " + e.Msg
	}
	return "omni: " + e.Field + ": " + e.Msg
}

// ErrTooLarge is returned for input over MaxMessageBytes.
var ErrTooLarge = errors.New("omni: message exceeds size limit")

// Decode parses one envelope. It checks JSON types (a string field holding a
// number is an error naming the field); it does not check the protocol's
// rules beyond that (see Validate). Unknown payload keys are kept in Extra.
func Decode(data []byte) (Message, error) {
	var m Message
	err := m.UnmarshalJSON(data)
	return m, err
}

// UnmarshalJSON implements json.Unmarshaler with the rules of Decode.
func (m *Message) UnmarshalJSON(data []byte) error {
	if len(data) > MaxMessageBytes {
		return ErrTooLarge
	}
	*m = Message{}
	fields, err := objectFields(data, "")
	if err != nil {
		return err
	}
	var payload json.RawMessage
	seen := map[string]bool{}
	for _, f := range fields {
		if seen[f.Key] {
			return &DecodeError{f.Key, "duplicate key"}
		}
		seen[f.Key] = true
		switch f.Key {
		case "timestamp":
			if err := str(f.Value, "timestamp", &m.Timestamp); err != nil {
				return err
			}
		case "type":
			if err := str(f.Value, "type", &m.Type); err != nil {
				return err
			}
		case "payload":
			payload = f.Value
		case "origin":
			if isNull(f.Value) {
				continue
			}
			if err := strs(f.Value, "origin", &m.Origin); err != nil {
				return err
			}
		}
	}
	if payload == nil {
		return &DecodeError{"payload", "missing"}
	}
	if !seen["type"] {
		return &DecodeError{"type", "missing"}
	}
	return m.Payload.decode(payload)
}

// UnmarshalJSON decodes a payload object.
func (p *Payload) UnmarshalJSON(data []byte) error { return p.decode(data) }

func (p *Payload) decode(data []byte) error {
	*p = Payload{}
	fields, err := objectFields(data, "payload")
	if err != nil {
		return err
	}
	p.has = kDecoded
	for _, f := range fields {
		bit, known := keyBits[f.Key]
		if !known {
			p.Extra = append(p.Extra, f)
			continue
		}
		if p.has&bit != 0 {
			return &DecodeError{"payload." + f.Key, "duplicate key"}
		}
		p.has |= bit
		if err := p.decodeKey(bit, f.Key, f.Value); err != nil {
			return err
		}
	}
	return nil
}

func (p *Payload) decodeKey(bit keySet, key string, v json.RawMessage) error {
	path := "payload." + key
	switch bit {
	case kType:
		return str(v, path, &p.Type)
	case kRole:
		return str(v, path, &p.Role)
	case kText:
		return str(v, path, &p.Text)
	case kThinking:
		return str(v, path, &p.Thinking)
	case kImageURL:
		return str(v, path, &p.ImageURL)
	case kData:
		return str(v, path, &p.Data)
	case kMimeType:
		return str(v, path, &p.MimeType)
	case kName:
		return str(v, path, &p.Name)
	case kArguments:
		return str(v, path, &p.Arguments)
	case kToolCallID:
		return str(v, path, &p.ToolCallID)
	case kOutput:
		return str(v, path, &p.Output)
	case kImages:
		return strs(v, path, &p.Images)
	case kEventType:
		return str(v, path, &p.EventType)
	case kStopReason:
		return str(v, path, &p.StopReason)
	case kSender:
		return str(v, path, &p.Sender)
	case kFidelity:
		if len(v) == 0 || v[0] != '{' {
			return &DecodeError{path, "want object, got " + kind(v)}
		}
		p.Fidelity = v
	case kStatus:
		return str(v, path, &p.Status)
	case kErrorMessage:
		return str(v, path, &p.ErrorMessage)
	case kAttempt:
		var n int64
		if err := integer(v, path, &n); err != nil {
			return err
		}
		p.Attempt = int(n)
	case kRetryInMs:
		var n int64
		if err := integer(v, path, &n); err != nil {
			return err
		}
		r := int(n)
		p.RetryInMs = &r
	case kDecision:
		return str(v, path, &p.Decision)
	case kSession:
		return counts(v, path, &p.Session)
	case kRequest:
		return counts(v, path, &p.Request)
	case kReason:
		if isNull(v) {
			p.ReasonNull = true
			return nil
		}
		return str(v, path, &p.Reason)
	case kMode:
		return str(v, path, &p.Mode)
	case kContext:
		return integer(v, path, &p.Context)
	case kTurns:
		return integer(v, path, &p.Turns)
	case kSessionID:
		return str(v, path, &p.SessionID)
	case kTools:
		if len(v) == 0 || v[0] != '[' {
			return &DecodeError{path, "want array, got " + kind(v)}
		}
		var tools []ToolDefinition
		if err := json.Unmarshal(v, &tools); err != nil {
			return &DecodeError{path, err.Error()}
		}
		if tools == nil {
			tools = []ToolDefinition{}
		}
		p.Tools = tools
	case kServers:
		if err := strs(v, path, &p.Servers); err != nil {
			return err
		}
		if p.Servers == nil {
			p.Servers = []string{}
		}
	case kResults:
		if len(v) == 0 || v[0] != '[' {
			return &DecodeError{path, "want array, got " + kind(v)}
		}
		p.Results = v
	case kOutcome:
		return str(v, path, &p.Outcome)
	case kRounds:
		return integer(v, path, &p.Rounds)
	case kTokensUsed:
		return integer(v, path, &p.TokensUsed)
	case kProvider:
		return str(v, path, &p.Provider)
	case kModelID:
		return str(v, path, &p.ModelID)
	case kModelContextWindow:
		if len(v) == 0 || !(v[0] == '"' || v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) {
			return &DecodeError{path, "want number or string, got " + kind(v)}
		}
		p.ModelContextWindow = v
	case kSystemPrompt:
		return str(v, path, &p.SystemPrompt)
	case kAgentState:
		return str(v, path, &p.AgentState)
	case kWorkspace:
		return str(v, path, &p.Workspace)
	case kSource:
		return str(v, path, &p.Source)
	}
	return nil
}

// objectFields splits a JSON object into its keys and raw values, in order.
func objectFields(data []byte, path string) ([]RawField, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	where := path
	if where == "" {
		where = "message"
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, &DecodeError{path, "invalid JSON: " + err.Error()}
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, &DecodeError{path, where + " is not a JSON object"}
	}
	var fields []RawField
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, &DecodeError{path, "invalid JSON: " + err.Error()}
		}
		key, ok := tok.(string)
		if !ok {
			return nil, &DecodeError{path, "invalid JSON: object key is not a string"}
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, &DecodeError{join(path, key), "invalid JSON: " + err.Error()}
		}
		fields = append(fields, RawField{Key: key, Value: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, &DecodeError{path, "invalid JSON: " + err.Error()}
	}
	if dec.More() {
		return nil, &DecodeError{path, "invalid JSON: trailing data"}
	}
	var rest json.RawMessage
	if err := dec.Decode(&rest); err == nil {
		return nil, &DecodeError{path, "invalid JSON: trailing data"}
	}
	return fields, nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func isNull(v json.RawMessage) bool { return string(v) == "null" }

func kind(v json.RawMessage) string {
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func str(v json.RawMessage, path string, dst *string) error {
	if len(v) == 0 || v[0] != '"' {
		return &DecodeError{path, "want string, got " + kind(v)}
	}
	if err := json.Unmarshal(v, dst); err != nil {
		return &DecodeError{path, err.Error()}
	}
	return nil
}

func strs(v json.RawMessage, path string, dst *[]string) error {
	if len(v) == 0 || v[0] != '[' {
		return &DecodeError{path, "want array of strings, got " + kind(v)}
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(v, &raw); err != nil {
		return &DecodeError{path, err.Error()}
	}
	out := make([]string, len(raw))
	for i, r := range raw {
		if err := str(r, fmt.Sprintf("%s[%d]", path, i), &out[i]); err != nil {
			return err
		}
	}
	*dst = out
	return nil
}

func integer(v json.RawMessage, path string, dst *int64) error {
	if kind(v) != "number" {
		return &DecodeError{path, "want integer, got " + kind(v)}
	}
	var n json.Number
	if err := json.Unmarshal(v, &n); err != nil {
		return &DecodeError{path, err.Error()}
	}
	i, err := n.Int64()
	if err != nil {
		f, ferr := n.Float64()
		if ferr != nil || f != float64(int64(f)) {
			return &DecodeError{path, "want integer, got " + string(v)}
		}
		i = int64(f)
	}
	*dst = i
	return nil
}

func counts(v json.RawMessage, path string, dst **TokenCounts) error {
	fields, err := objectFields(v, path)
	if err != nil {
		return err
	}
	var c TokenCounts
	for _, f := range fields {
		var target *int64
		switch f.Key {
		case "cache_read":
			target = &c.CacheRead
		case "cache_write":
			target = &c.CacheWrite
		case "output":
			target = &c.Output
		case "total":
			target = &c.Total
		default:
			continue
		}
		if err := integer(f.Value, path+"."+f.Key, target); err != nil {
			return err
		}
	}
	*dst = &c
	return nil
}
