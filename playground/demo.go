package playground

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/internal/errf"
)

// Demo is a demo script: rules the scripted [Model] tries, in order, on
// each new prompt before its own behaviour, so that a teacher can make
// the offline demo answer a lesson's prompts without writing Go. Make
// one with [ParseDemo].
type Demo struct {
	Rules []DemoRule
}

// DemoRule is one rule of a [Demo]: when Match finds the prompt, the
// model streams Think as its thinking, Say as its answer and Calls as
// its tool calls; once their outputs come back it answers Then (the
// model's own summary of the outputs when Then is empty).
type DemoRule struct {
	Match string // a substring of the prompt (any case), or /regexp/ (/regexp/i: any case)
	Think string
	Say   string
	Calls []DemoCall
	Then  string

	re *regexp.Regexp // Match as a regular expression; nil: a substring
}

// DemoCall is a tool call of a [DemoRule]: one of the playground's tools
// and its arguments, which fit the tool's schema.
type DemoCall struct {
	Tool string
	Args json.RawMessage // a JSON object
}

// Limits of a demo script.
const (
	MaxDemoBytes = 1 << 20 // the file
	maxDemoRules = 1000
	maxDemoCalls = 16 // calls of one rule
)

// demoKeys are the fields of a rule, in the order the errors name them.
var demoKeys = []string{"match", "think", "say", "calls", "then"}

// ParseDemo reads a demo script: a JSON array of rules
//
//	{"match": "…", "think": "…", "say": "…", "calls": [{"tool": "…", "args": {…}}], "then": "…"}
//
// of which match is required and one of think, say or calls. A file that
// is not such an array is refused with an error naming the rule (counted
// from 1, with its line) and the field at fault: an unknown field, a
// field of the wrong type, a bad regular expression, an unknown tool,
// arguments that do not fit the tool's schema, a then without calls, or
// a file over [MaxDemoBytes].
func ParseDemo(data []byte) (*Demo, error) {
	if len(data) > MaxDemoBytes {
		return nil, fmt.Errorf("the demo script is %d bytes; at most %d (1 MiB)", len(data), MaxDemoBytes)
	}
	if !utf8.Valid(data) {
		return nil, errors.New("the demo script is not UTF-8 text")
	}
	if err := jsonSyntax(data); err != nil {
		return nil, err
	}
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, errors.New("the demo script is empty: it must be a JSON array of rules")
	}
	if trimmed[0] != '[' {
		return nil, fmt.Errorf("the demo script must be a JSON array of rules, not %s", jsonKindLong(trimmed[0]))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.Token() // the '['
	tools := demoTools()
	d := &Demo{}
	for n := 1; dec.More(); n++ {
		start := int(dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("rule %d: %v", n, err) // json.Valid passed: not expected
		}
		if n > maxDemoRules {
			return nil, fmt.Errorf("the demo script has more than %d rules", maxDemoRules)
		}
		for start < len(data) && strings.IndexByte(" \t\r\n,", data[start]) >= 0 {
			start++
		}
		r, err := parseRule(raw, tools)
		if err != nil {
			return nil, fmt.Errorf("rule %d (line %d): %w", n, 1+bytes.Count(data[:start], []byte("\n")), err)
		}
		d.Rules = append(d.Rules, r)
	}
	if len(d.Rules) == 0 {
		return nil, errors.New("the demo script has no rules")
	}
	return d, nil
}

// jsonSyntax says where data is not JSON, by line.
func jsonSyntax(data []byte) error {
	if json.Valid(bytes.TrimPrefix(data, []byte("\uFEFF"))) {
		return nil
	}
	var v any
	err := json.Unmarshal(bytes.TrimPrefix(data, []byte("\uFEFF")), &v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off := min(int(se.Offset), len(data))
		return fmt.Errorf("the demo script is not JSON: line %d: %s", 1+bytes.Count(data[:off], []byte("\n")), se.Error())
	}
	return fmt.Errorf("the demo script is not JSON: %v", err)
}

// jsonKindLong names the kind of the JSON value starting with b.
func jsonKindLong(b byte) string {
	switch b {
	case '{':
		return "an object"
	case '"':
		return "a string"
	case '[':
		return "an array"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

func parseRule(raw json.RawMessage, tools map[string]argSchema) (DemoRule, error) {
	var r DemoRule
	var fields map[string]json.RawMessage
	if raw[0] != '{' {
		return r, fmt.Errorf("a rule must be an object, not %s", jsonKindLong(raw[0]))
	}
	if err := json.Unmarshal(raw, &fields); err != nil {
		return r, err
	}
	for _, k := range sortedKeys(fields) {
		if !slices.Contains(demoKeys, k) {
			return r, fmt.Errorf("unknown field %q; a rule has %s", k, strings.Join(demoKeys, ", "))
		}
	}
	str := func(key string, dst *string) error {
		v, ok := fields[key]
		if !ok {
			return nil
		}
		if v[0] != '"' {
			return fmt.Errorf("%s: want a string, got %s", key, jsonKindLong(v[0]))
		}
		return json.Unmarshal(v, dst)
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"match", &r.Match}, {"think", &r.Think}, {"say", &r.Say}, {"then", &r.Then}} {
		if err := str(f.key, f.dst); err != nil {
			return r, err
		}
	}
	if strings.TrimSpace(r.Match) == "" {
		return r, errors.New("match: missing or empty: give a piece of the prompt, or /a regular expression/")
	}
	if re, ok, err := demoRegexp(r.Match); err != nil {
		return r, fmt.Errorf("match: bad regular expression %s: %w", errf.Quote(r.Match), err)
	} else if ok {
		r.re = re
	}
	if v, ok := fields["calls"]; ok {
		if v[0] != '[' {
			return r, fmt.Errorf("calls: want an array, got %s", jsonKindLong(v[0]))
		}
		var calls []json.RawMessage
		if err := json.Unmarshal(v, &calls); err != nil {
			return r, fmt.Errorf("calls: %w", err)
		}
		if len(calls) > maxDemoCalls {
			return r, fmt.Errorf("calls: %d calls; at most %d", len(calls), maxDemoCalls)
		}
		for i, c := range calls {
			call, err := parseCall(c, tools)
			if err != nil {
				return r, fmt.Errorf("calls[%d]%s", i, err)
			}
			r.Calls = append(r.Calls, call)
		}
	}
	if r.Then != "" && len(r.Calls) == 0 {
		return r, errors.New("then: it is said after the calls' outputs, and this rule has no calls")
	}
	if strings.TrimSpace(r.Think+r.Say) == "" && len(r.Calls) == 0 {
		return r, errors.New("nothing to answer: give say, think or calls")
	}
	return r, nil
}

// demoRegexp compiles a match written /regexp/ or /regexp/i; ok is false
// for a plain substring.
func demoRegexp(match string) (re *regexp.Regexp, ok bool, err error) {
	if len(match) < 2 || match[0] != '/' {
		return nil, false, nil
	}
	body, flags := match[1:], ""
	switch {
	case strings.HasSuffix(body, "/i"):
		body, flags = body[:len(body)-2], "(?i)"
	case strings.HasSuffix(body, "/"):
		body = body[:len(body)-1]
	default:
		return nil, false, nil // "/etc and more": a substring
	}
	if body == "" {
		return nil, false, errors.New("it is empty")
	}
	re, err = regexp.Compile(flags + body)
	if err != nil {
		if se, ok := err.(*syntax.Error); ok { // its expression quoted: it may hold a line break
			return nil, false, errors.New(string(se.Code) + ": " + errf.Quote(se.Expr))
		}
		return nil, false, errors.New(strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	return re, true, nil
}

// parseCall reads one call of a rule; its errors start with what follows
// "calls[i]".
func parseCall(raw json.RawMessage, tools map[string]argSchema) (DemoCall, error) {
	var c DemoCall
	if raw[0] != '{' {
		return c, fmt.Errorf(": a call must be an object, not %s", jsonKindLong(raw[0]))
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return c, fmt.Errorf(": %w", err)
	}
	for _, k := range sortedKeys(fields) {
		if k != "tool" && k != "args" {
			return c, fmt.Errorf(": unknown field %q; a call has tool and args", k)
		}
	}
	t, ok := fields["tool"]
	if !ok {
		return c, errors.New(".tool: missing")
	}
	if t[0] != '"' {
		return c, fmt.Errorf(".tool: want a string, got %s", jsonKindLong(t[0]))
	}
	json.Unmarshal(t, &c.Tool)
	schema, ok := tools[c.Tool]
	if !ok {
		return c, fmt.Errorf(".tool: unknown tool %q; the playground's tools are %s", c.Tool, strings.Join(sortedKeys(tools), ", "))
	}
	c.Args = json.RawMessage("{}")
	if a, ok := fields["args"]; ok {
		c.Args = a
	}
	if err := schema.check(c.Args); err != nil {
		return c, fmt.Errorf(" (%s).args%s", c.Tool, err)
	}
	var compact bytes.Buffer
	json.Compact(&compact, c.Args)
	c.Args = compact.Bytes()
	return c, nil
}

// argSchema is the part of JSON Schema the playground's tools use: an
// object of string and string-array properties, some required, no others.
type argSchema struct {
	Properties map[string]struct {
		Type      string `json:"type"`
		MinLength int    `json:"minLength"`
		Items     *struct {
			Type string `json:"type"`
		} `json:"items"`
	} `json:"properties"`
	Required []string `json:"required"`
}

// demoTools are the schemas of every tool a playground session may offer.
func demoTools() map[string]argSchema {
	ws := &Workspace{
		Eval: func(context.Context, string, time.Duration) (EvalResult, error) { return EvalResult{}, nil },
		Subagent: func(context.Context, engine.ToolRequest, string, func(omni.Message)) (string, error) {
			return "", nil
		},
	}
	out := map[string]argSchema{}
	for _, t := range ws.Tools() {
		var s argSchema
		if err := json.Unmarshal(t.Parameters, &s); err != nil {
			panic("playground: the schema of " + t.Name + ": " + err.Error())
		}
		out[t.Name] = s
	}
	return out
}

// check says how args do not fit s; its errors start with what follows
// "args" (".path: …", ": missing …").
func (s argSchema) check(args json.RawMessage) error {
	if args[0] != '{' {
		return fmt.Errorf(": want an object, got %s", jsonKindLong(args[0]))
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(args, &fields); err != nil {
		return fmt.Errorf(": %w", err)
	}
	names := sortedKeys(s.Properties)
	takes := "no arguments"
	if len(names) > 0 {
		takes = strings.Join(names, ", ")
	}
	for _, k := range sortedKeys(fields) {
		p, ok := s.Properties[k]
		if !ok {
			return fmt.Errorf(": unknown field %q; the tool takes %s", k, takes)
		}
		v := fields[k]
		switch p.Type {
		case "string":
			if v[0] != '"' {
				return fmt.Errorf(".%s: want a string, got %s", k, jsonKindLong(v[0]))
			}
			var str string
			json.Unmarshal(v, &str)
			if utf8.RuneCountInString(str) < p.MinLength {
				return fmt.Errorf(".%s: must not be empty", k)
			}
		case "array":
			if v[0] != '[' {
				return fmt.Errorf(".%s: want an array of strings, got %s", k, jsonKindLong(v[0]))
			}
			var items []json.RawMessage
			json.Unmarshal(v, &items)
			for i, it := range items {
				if it[0] != '"' {
					return fmt.Errorf(".%s[%d]: want a string, got %s", k, i, jsonKindLong(it[0]))
				}
			}
		}
	}
	for _, k := range s.Required {
		if _, ok := fields[k]; !ok {
			return fmt.Errorf(": missing %q", k)
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// find returns the first rule that matches prompt.
func (d *Demo) find(prompt string) *DemoRule {
	if d == nil {
		return nil
	}
	low := strings.ToLower(prompt)
	for i := range d.Rules {
		r := &d.Rules[i]
		if r.re != nil && r.re.MatchString(prompt) || r.re == nil && strings.Contains(low, strings.ToLower(r.Match)) {
			return r
		}
	}
	return nil
}
