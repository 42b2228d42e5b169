package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider"
	"github.com/floehq/floe/provider/anthropic"
	"github.com/floehq/floe/provider/openai"
	"github.com/floehq/floe/provider/responses"
)

// recorder records request bodies and answers each with a failure (the
// body is all these tests look at).
type recorder struct{ bodies [][]byte }

func (r *recorder) RoundTrip(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	r.bodies = append(r.bodies, req.Body)
	return nil, &provider.Failure{Status: omni.StatusFailed, Message: "recorded", Permanent: true}
}

// topKeys returns the members of the JSON object b in order, a member
// given twice twice.
func topKeys(t *testing.T, b []byte) []string {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("body %s: not an object", b)
	}
	var keys []string
	for d.More() {
		k, err := d.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// An ExtraBody member an adapter writes itself went into the body twice
// (Anthropic's max_tokens and system, OpenAI's max_completion_tokens with
// MaxTokens set): New refuses it, naming the member and what sets it, as
// floe.mjs refuses such a body member; others join the body once each.
// Anthropic's output_config, which only adaptive thinking writes, is
// ExtraBody's when it has one.
func TestExtraBodyOwnMembers(t *testing.T) {
	type adapter struct {
		name string
		own  map[string]string // member: the start of New's error
		make func(tr provider.Transport, extra string) (engine.LLM, error)
	}
	adapters := []adapter{
		{"anthropic", map[string]string{
			"max_tokens": "anthropic: Options.ExtraBody.max_tokens: the adapter writes it (set Options.MaxTokens)",
			"system":     "anthropic: Options.ExtraBody.system: the adapter writes it",
			"model":      "anthropic: Options.ExtraBody.model: the adapter writes it (set Options.Model)",
			"thinking":   "anthropic: Options.ExtraBody.thinking: the adapter writes it (set the run's thinking level)",
			"messages":   "", "stream": "", "tools": "",
		}, func(tr provider.Transport, extra string) (engine.LLM, error) {
			return anthropic.New(anthropic.Options{Transport: tr, Model: "claude-opus-4-7", MaxTokens: 100, ExtraBody: omni.RawJSON(extra)})
		}},
		{"openai", map[string]string{
			"max_completion_tokens": "openai: Options.ExtraBody.max_completion_tokens: the adapter writes it (set Options.MaxTokens)",
			"max_tokens":            "openai: Options.ExtraBody.max_tokens: the adapter writes it (set Options.MaxTokens)",
			"reasoning_effort":      "openai: Options.ExtraBody.reasoning_effort: the adapter writes it (set the run's thinking level)",
			"model":                 "", "stream": "", "messages": "", "tools": "",
		}, func(tr provider.Transport, extra string) (engine.LLM, error) {
			return openai.New(openai.Options{Transport: tr, Model: "gpt-5", MaxTokens: 100, ExtraBody: omni.RawJSON(extra)})
		}},
		{"responses", map[string]string{
			"max_output_tokens": "openai responses: Options.ExtraBody.max_output_tokens: the adapter writes it (set Options.MaxTokens)",
			"instructions":      "openai responses: Options.ExtraBody.instructions: the adapter writes it",
			"reasoning":         "", "include": "", "store": "", "input": "", "model": "", "stream": "", "tools": "",
		}, func(tr provider.Transport, extra string) (engine.LLM, error) {
			return responses.New(responses.Options{Transport: tr, Model: "gpt-5", MaxTokens: 100, ExtraBody: omni.RawJSON(extra)})
		}},
	}
	p := engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("hi")}, SystemPrompt: "Be brief.", ThinkingLevel: "high",
		Tools: []omni.ToolDefinition{{Name: "look", Parameters: omni.RawJSON(`{"type":"object"}`)}}}
	for _, a := range adapters {
		for member, want := range a.own {
			_, err := a.make(&recorder{}, `{"temperature":0.2,"`+member+`":1}`)
			if err == nil || want != "" && err.Error() != want || !strings.Contains(err.Error(), "ExtraBody."+member+": the adapter writes it") {
				t.Errorf("%s: ExtraBody %s: New = %v, want %q", a.name, member, err, want)
			}
		}
		// Members of its own nested in another are no members of the body.
		tr := &recorder{}
		m, err := a.make(tr, `{"temperature":0.2,"metadata":{"model":"x","max_tokens":1}}`)
		if err != nil {
			t.Fatalf("%s: %v", a.name, err)
		}
		m.StreamGenerate(context.Background(), p, func(omni.Message) {})
		seen := map[string]bool{}
		for _, k := range topKeys(t, tr.bodies[0]) {
			if seen[k] {
				t.Errorf("%s: %q twice in %s", a.name, k, tr.bodies[0])
			}
			seen[k] = true
		}
		if !seen["temperature"] || !seen["metadata"] {
			t.Errorf("%s: ExtraBody's members not sent: %s", a.name, tr.bodies[0])
		}
	}
	// output_config: the adapter's (the effort) without one in ExtraBody,
	// ExtraBody's with one.
	for extra, want := range map[string]string{
		``: `"output_config":{"effort":"high"}`,
		`{"output_config":{"format":{"type":"json_schema"}}}`: `"output_config":{"format":{"type":"json_schema"}}`,
	} {
		tr := &recorder{}
		m, err := anthropic.New(anthropic.Options{Transport: tr, Model: "claude-opus-4-7", ExtraBody: omni.RawJSON(extra)})
		if extra == "" {
			m, err = anthropic.New(anthropic.Options{Transport: tr, Model: "claude-opus-4-7"})
		}
		if err != nil {
			t.Fatal(err)
		}
		m.StreamGenerate(context.Background(), p, func(omni.Message) {})
		b := tr.bodies[0]
		if !bytes.Contains(b, []byte(want)) || bytes.Count(b, []byte(`"output_config"`)) != 1 || !bytes.Contains(b, []byte(`"thinking":{"type":"adaptive"}`)) {
			t.Errorf("ExtraBody %s: body %s, want %s once, with adaptive thinking", extra, b, want)
		}
	}
}
