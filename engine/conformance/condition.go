package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/floehq/floe/engine/omni"
)

// condition is a FORMAT §3 condition: exactly one of seen, abort, any.
type condition struct {
	seen  map[string]any // matcher of a seen condition
	nth   int            // with seen: 1-based occurrence
	abort bool
	any   []*condition
	text  string // the scenario's JSON, for failure reports
}

// holds evaluates c against the current run's received messages and the
// state of the abort signal handed to the waiting callback.
func (c *condition) holds(stream []any, aborted bool) bool {
	switch {
	case c.seen != nil:
		return countMatches(c.seen, stream) >= c.nth
	case c.abort:
		return aborted
	}
	for _, sub := range c.any {
		if sub.holds(stream, aborted) {
			return true
		}
	}
	return false
}

// usesAbort reports whether c can become true through the abort signal.
func (c *condition) usesAbort() bool {
	if c.abort {
		return true
	}
	for _, sub := range c.any {
		if sub.usesAbort() {
			return true
		}
	}
	return false
}

func parseCondition(raw json.RawMessage) (*condition, error) {
	f, err := fields(raw)
	if err != nil {
		return nil, err
	}
	c := &condition{text: compact(raw)}
	switch {
	case has(f, "seen"):
		if err := onlyKeys(f, "seen", "nth"); err != nil {
			return nil, err
		}
		if c.seen, c.nth, err = parseSeen(f); err != nil {
			return nil, err
		}
	case has(f, "abort"):
		if err := onlyKeys(f, "abort"); err != nil {
			return nil, err
		}
		if err := strict(f["abort"], &c.abort); err != nil || !c.abort {
			return nil, errors.New(`abort: want true`)
		}
	case has(f, "any"):
		if err := onlyKeys(f, "any"); err != nil {
			return nil, err
		}
		var subs []json.RawMessage
		if err := strict(f["any"], &subs); err != nil || len(subs) == 0 {
			return nil, errors.New("any: want a non-empty array of conditions")
		}
		for i, s := range subs {
			sub, err := parseCondition(s)
			if err != nil {
				return nil, fmt.Errorf("any[%d]: %w", i, err)
			}
			c.any = append(c.any, sub)
		}
	default:
		return nil, fmt.Errorf("condition %s: want seen, abort or any", compact(raw))
	}
	return c, nil
}

// parseSeen reads the "seen" matcher and the optional "nth" (default 1).
func parseSeen(f map[string]json.RawMessage) (map[string]any, int, error) {
	m, err := parseMatcher(f["seen"])
	if err != nil {
		return nil, 0, fmt.Errorf("seen: %w", err)
	}
	nth := 1
	if raw, ok := f["nth"]; ok {
		if err := strict(raw, &nth); err != nil || nth < 1 {
			return nil, 0, fmt.Errorf("nth: want an integer ≥ 1, got %s", compact(raw))
		}
	}
	return m, nth, nil
}

// parseMatcher reads a matcher object. An origin must be "*" or an array of
// strings; an empty or null origin means "no origin", like an absent one.
func parseMatcher(raw json.RawMessage) (map[string]any, error) {
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("matcher %s: want an object", compact(raw))
	}
	o, ok := m["origin"]
	if !ok {
		return m, nil
	}
	switch x := o.(type) {
	case nil:
		delete(m, "origin")
	case string:
		if x != "*" {
			return nil, fmt.Errorf(`origin: want "*" or an array, got %q`, x)
		}
	case []any:
		for _, e := range x {
			if _, ok := e.(string); !ok {
				return nil, errors.New("origin: want an array of strings")
			}
		}
		if len(x) == 0 {
			delete(m, "origin")
		}
	default:
		return nil, errors.New(`origin: want "*" or an array of strings`)
	}
	return m, nil
}

// Trigger kinds (FORMAT §7).
const (
	onSeen       = "seen"
	onApproval   = "approval"
	onBackoff    = "backoff"
	onLLMRequest = "llm_request"
)

// trigger is a hook's "on".
type trigger struct {
	kind     string
	seen     map[string]any
	nth      int
	approval string // tool_call_id
	backoff  int    // 1-based sleeper call, whole scenario
	session  string // llm_request
	index    int    // llm_request, 1-based
	text     string
}

func parseTrigger(raw json.RawMessage) (*trigger, error) {
	f, err := fields(raw)
	if err != nil {
		return nil, err
	}
	t := &trigger{text: compact(raw)}
	switch {
	case has(f, onSeen):
		t.kind = onSeen
		if err := onlyKeys(f, "seen", "nth"); err != nil {
			return nil, err
		}
		t.seen, t.nth, err = parseSeen(f)
	case has(f, onApproval):
		t.kind = onApproval
		if err := onlyKeys(f, onApproval); err != nil {
			return nil, err
		}
		if err = strict(f[onApproval], &t.approval); err == nil && t.approval == "" {
			err = errors.New("approval: empty tool_call_id")
		}
	case has(f, onBackoff):
		t.kind = onBackoff
		if err := onlyKeys(f, onBackoff); err != nil {
			return nil, err
		}
		if err = strict(f[onBackoff], &t.backoff); err == nil && t.backoff < 1 {
			err = errors.New("backoff: want an integer ≥ 1")
		}
	case has(f, onLLMRequest):
		t.kind = onLLMRequest
		if err := onlyKeys(f, onLLMRequest); err != nil {
			return nil, err
		}
		var r struct {
			Session string `json:"session"`
			Index   int    `json:"index"`
		}
		if err = strict(f[onLLMRequest], &r); err == nil && (r.Session == "" || r.Index < 1) {
			err = errors.New("llm_request: want a session and an index ≥ 1")
		}
		t.session, t.index = r.Session, r.Index
	default:
		return nil, fmt.Errorf("trigger %s: want seen, approval, backoff or llm_request", t.text)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.kind, err)
	}
	return t, nil
}

// action is one entry of a hook's "do".
type action struct {
	abort  bool
	steer  []omni.Message
	expect bool // steer: the expected result of Steer
	text   string
}

func parseAction(raw json.RawMessage) (*action, error) {
	var a struct {
		Action string            `json:"action"`
		Input  []json.RawMessage `json:"input"`
		Expect *bool             `json:"expect"`
	}
	if err := strict(raw, &a); err != nil {
		return nil, err
	}
	act := &action{text: compact(raw)}
	switch a.Action {
	case "abort":
		if a.Input != nil || a.Expect != nil {
			return nil, errors.New("abort takes no input or expect")
		}
		act.abort = true
	case "steer":
		if len(a.Input) == 0 {
			return nil, errors.New("steer: missing input")
		}
		msgs, err := decodeMessages(a.Input)
		if err != nil {
			return nil, fmt.Errorf("steer: input%w", err)
		}
		act.steer = msgs
		// An absent expect means the steer must be accepted.
		act.expect = a.Expect == nil || *a.Expect
	default:
		return nil, fmt.Errorf("action %q: want abort or steer", a.Action)
	}
	return act, nil
}

// fields splits a JSON object into its keys.
func fields(raw json.RawMessage) (map[string]json.RawMessage, error) {
	var f map[string]json.RawMessage
	if err := json.Unmarshal(raw, &f); err != nil || f == nil {
		return nil, fmt.Errorf("%s: want an object", compact(raw))
	}
	return f, nil
}

func has(f map[string]json.RawMessage, key string) bool {
	_, ok := f[key]
	return ok
}

// onlyKeys fails on any key of f not in allowed.
func onlyKeys(f map[string]json.RawMessage, allowed ...string) error {
	var extra []string
	for k := range f {
		if !slices.Contains(allowed, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return fmt.Errorf("unexpected key(s) %s", strings.Join(extra, ", "))
	}
	return nil
}

// strict decodes raw into dst, refusing unknown object keys.
func strict(raw json.RawMessage, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(dst)
}

// compact is raw JSON without insignificant whitespace, for messages.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}
