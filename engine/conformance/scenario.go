package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/floehq/floe/engine/omni"
)

// Format is the only scenario format this package reads.
const Format = "omni-conformance/1"

// Scenario is one loaded scenario file. A file that could not be loaded by
// [LoadDir] is still a Scenario: Err says why, and [Run] reports it as a
// failure. A Scenario is immutable once loaded and may be run many times,
// concurrently.
type Scenario struct {
	Path        string
	ID          string
	Name        string
	Description string
	Rules       []string
	Err         error // non-nil: the file is not a valid scenario

	spec *spec
}

// Load reads and validates one scenario file.
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	s.Path = path
	return s, nil
}

// LoadDir loads every *.json file of dir, sorted by file name. A file that
// is not a valid scenario (or repeats an earlier id) comes back with Err
// set, its ID taken from the file name; only an unreadable directory is an
// error.
func LoadDir(dir string) ([]*Scenario, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []*Scenario
	ids := map[string]string{}
	for _, e := range entries { // os.ReadDir sorts by file name
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		s, err := Load(path)
		if err == nil {
			if prev, dup := ids[s.ID]; dup {
				err = fmt.Errorf("%s: id %q already used by %s", e.Name(), s.ID, prev)
			}
		}
		if err != nil {
			base := strings.TrimSuffix(e.Name(), ".json")
			s = &Scenario{Path: path, ID: base, Name: e.Name(), Err: err}
		} else {
			ids[s.ID] = e.Name()
		}
		out = append(out, s)
	}
	return out, nil
}

// The raw JSON shapes of FORMAT §1–§8. Unknown keys are refused so that a
// misspelt expectation cannot pass silently.
type (
	rawScenario struct {
		Format      string                     `json:"format"`
		ID          string                     `json:"id"`
		Name        string                     `json:"name"`
		Description string                     `json:"description"`
		Rules       []string                   `json:"rules"`
		Session     rawSession                 `json:"session"`
		LLM         map[string][]rawLLMRequest `json:"llm"`
		Tools       map[string]rawTool         `json:"tools"`
		Approvals   map[string]rawApproval     `json:"approvals"`
		Runs        []rawRun                   `json:"runs"`
		Expect      rawExpect                  `json:"expect"`
	}
	rawSession struct {
		Meta     json.RawMessage `json:"meta"`
		ToolList json.RawMessage `json:"tool_list"`
		Config   *rawConfig      `json:"config"`
	}
	rawConfig struct {
		MaxTurns                *int           `json:"max_turns"`
		MaxReconnects           *int           `json:"max_reconnects"`
		ReconnectBackoffMs      *int           `json:"reconnect_backoff_ms"`
		ReconnectBackoffMaxMs   *int           `json:"reconnect_backoff_max_ms"`
		CompactionMaxReconnects *int           `json:"compaction_max_reconnects"`
		Compaction              *rawCompaction `json:"compaction"`
	}
	rawCompaction struct {
		MaxContextLength *int64 `json:"max_context_length"`
		MaxSessionTurns  *int64 `json:"max_session_turns"`
		Mode             string `json:"mode"`
		Prompt           string `json:"prompt"`
	}
	rawLLMRequest struct {
		Steps   []rawStep `json:"steps"`
		Outcome *struct {
			Status       string `json:"status"`
			ErrorMessage string `json:"error_message"`
			Permanent    bool   `json:"permanent"`
		} `json:"outcome"`
	}
	rawStep struct {
		Emit     json.RawMessage `json:"emit"`
		Wait     json.RawMessage `json:"wait"`
		Subagent *rawSubagent    `json:"subagent"`
	}
	rawSubagent struct {
		Meta     json.RawMessage `json:"meta"`
		Prompt   *string         `json:"prompt"`
		Config   *rawConfig      `json:"config"`
		ToolList json.RawMessage `json:"tool_list"`
	}
	rawTool struct {
		Steps []rawStep       `json:"steps"`
		End   json.RawMessage `json:"end"`
	}
	rawApproval struct {
		Decision     string   `json:"decision"`
		Message      string   `json:"message"`
		ExpectOrigin []string `json:"expect_origin"`
	}
	rawRun struct {
		Input        []json.RawMessage  `json:"input"`
		Approver     string             `json:"approver"`
		PreAborted   bool               `json:"pre_aborted"`
		Hooks        []rawHook          `json:"hooks"`
		ExpectStream *[]json.RawMessage `json:"expect_stream"`
	}
	rawHook struct {
		On json.RawMessage   `json:"on"`
		Do []json.RawMessage `json:"do"`
	}
	rawExpect struct {
		LLMInputs      map[string][]rawLLMInput       `json:"llm_inputs"`
		Trace          map[string][][]json.RawMessage `json:"trace"`
		SleepsMs       *[]int64                       `json:"sleeps_ms"`
		ApproverCalls  *[]string                      `json:"approver_calls"`
		ToolExecutions *[]string                      `json:"tool_executions"`
		NewLLMTokens   map[string][]omni.TokenCounts  `json:"new_llm_tokens"`
	}
	rawLLMInput struct {
		Context  int               `json:"context"`
		Messages []json.RawMessage `json:"messages"`
	}
)

func parse(data []byte) (*Scenario, error) {
	var r rawScenario
	if err := strict(data, &r); err != nil {
		return nil, err
	}
	if r.Format != Format {
		return nil, fmt.Errorf("format: want %q, got %q", Format, r.Format)
	}
	if r.ID == "" || r.Name == "" {
		return nil, errors.New("id and name are required")
	}
	sp, err := compile(&r)
	if err != nil {
		return nil, err
	}
	return &Scenario{ID: r.ID, Name: r.Name, Description: r.Description, Rules: r.Rules, spec: sp}, nil
}

// decodeMessage decodes one scenario message for handing to the engine.
func decodeMessage(raw json.RawMessage) (omni.Message, error) {
	m, err := omni.Decode(raw)
	if err != nil {
		return m, err
	}
	if m.Timestamp != "" {
		return m, errors.New("scenario messages carry no timestamp")
	}
	return m, nil
}

// decodeMessages decodes a list; an error names the position ("[2]: …").
func decodeMessages(raws []json.RawMessage) ([]omni.Message, error) {
	out := make([]omni.Message, len(raws))
	for i, raw := range raws {
		m, err := decodeMessage(raw)
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		out[i] = m
	}
	return out, nil
}

// expectedMessages turns expected messages into comparable values; each must
// also be a valid omni message.
func expectedMessages(raws []json.RawMessage) ([]any, error) {
	out := make([]any, len(raws))
	for i, raw := range raws {
		if _, err := omni.Decode(raw); err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		v, err := decodeJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		out[i] = normMessage(v)
	}
	return out, nil
}

// decodeMeta builds the session_meta message of a session or subagent.
func decodeMeta(raw json.RawMessage) (omni.Message, error) {
	if len(raw) == 0 {
		return omni.Message{}, errors.New("missing")
	}
	var env bytes.Buffer
	env.WriteString(`{"type":"session_meta","payload":`)
	env.Write(raw)
	env.WriteString("}")
	m, err := omni.Decode(env.Bytes())
	if err != nil {
		return m, err
	}
	if m.Payload.SessionID() == "" {
		return m, errors.New("session_id: missing")
	}
	return m, nil
}

// decodeToolList reads an optional tool_list; present (even empty) ⇒ non-nil.
func decodeToolList(raw json.RawMessage) ([]omni.ToolDefinition, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var tools []omni.ToolDefinition
	if err := strict(raw, &tools); err != nil {
		return nil, err
	}
	if tools == nil {
		tools = []omni.ToolDefinition{}
	}
	return tools, nil
}
