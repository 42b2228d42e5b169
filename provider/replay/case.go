// Package replay runs the provider adapters against recorded HTTP
// responses: each case's bytes are served on a loopback HTTP server, in
// the reads the case names, and what the adapter emits and returns is
// checked against the case's expectation and the streaming discipline.
// It is the library behind cmd/floe-providers; it runs natively only.
package replay

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Case is one replay case (the corpus format).
type Case struct {
	Name     string   `json:"name"`
	Provider string   `json:"provider"`
	Response Response `json:"response"`
	Expect   Expect   `json:"expect"`

	File string `json:"-"` // where the case was read from
}

// Response is what the server sends.
type Response struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
	Chunks  []int             `json:"chunks"`
	End     string            `json:"end"` // "eof" (default) or "error"
}

// Expect is what a correct adapter produces. Absent keys are not checked.
type Expect struct {
	Outcome    *ExpectOutcome  `json:"outcome"`
	Text       json.RawMessage `json:"text"`     // string or null
	Thinking   json.RawMessage `json:"thinking"` // string or null
	ToolCalls  []ExpectCall    `json:"tool_calls"`
	Usage      map[string]int64
	Discipline bool `json:"discipline"`

	HasToolCalls bool `json:"-"`
	HasUsage     bool `json:"-"`
}

// ExpectOutcome is the expected outcome.
type ExpectOutcome struct {
	Status               OneOf  `json:"status"`
	ErrorMessageContains string `json:"error_message_contains"`
}

// ExpectCall is one expected tool call.
type ExpectCall struct {
	ID        OneOf `json:"id"`
	Name      OneOf `json:"name"`
	Arguments OneOf `json:"arguments"`
}

// OneOf is a string or an array of accepted strings.
type OneOf []string

// UnmarshalJSON accepts a string or an array of strings.
func (o *OneOf) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*o = OneOf{s}
		return nil
	}
	var ss []string
	if err := json.Unmarshal(b, &ss); err != nil {
		return errors.New("want a string or an array of strings")
	}
	*o = ss
	return nil
}

// Has reports whether s is accepted.
func (o OneOf) Has(s string) bool {
	for _, v := range o {
		if v == s {
			return true
		}
	}
	return false
}

func (o OneOf) String() string {
	if len(o) == 1 {
		return quote(o[0])
	}
	q := make([]string, len(o))
	for i, v := range o {
		q[i] = quote(v)
	}
	return "one of [" + strings.Join(q, ", ") + "]"
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// UnmarshalJSON records which optional keys are present.
func (e *Expect) UnmarshalJSON(b []byte) error {
	type plain Expect
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return err
	}
	_, p.HasToolCalls = keys["tool_calls"]
	if u, ok := keys["usage"]; ok {
		p.HasUsage = true
		if err := json.Unmarshal(u, &p.Usage); err != nil {
			return errors.New("usage: " + err.Error())
		}
	}
	*e = Expect(p)
	return nil
}

// Load reads one case file.
func Load(path string) (*Case, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &Case{File: path}
	if err := json.Unmarshal(data, c); err != nil {
		return nil, errors.New(path + ": " + err.Error())
	}
	if c.Name == "" {
		c.Name = strings.TrimSuffix(filepath.Base(path), ".json")
	}
	if c.Expect.Outcome == nil || len(c.Expect.Outcome.Status) == 0 {
		return nil, errors.New(path + ": expect.outcome.status is missing")
	}
	if c.Response.Status == 0 {
		return nil, errors.New(path + ": response.status is missing")
	}
	sum := 0
	for _, n := range c.Response.Chunks {
		if n <= 0 {
			return nil, errors.New(path + ": response.chunks holds a size ≤ 0")
		}
		sum += n
	}
	if len(c.Response.Chunks) > 0 && sum != len(c.Response.Body) {
		return nil, errors.New(path + ": response.chunks do not add up to the body's length")
	}
	switch c.Response.End {
	case "", "eof", "error":
	default:
		return nil, errors.New(path + `: response.end must be "eof" or "error"`)
	}
	return c, nil
}

// Files lists the *.json case files of dir, sorted.
func Files(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, errors.New("no *.json cases in " + dir)
	}
	sort.Strings(files)
	return files, nil
}
