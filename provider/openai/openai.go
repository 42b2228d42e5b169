// Package openai is the model adapter for the OpenAI Chat Completions
// streaming API, which is also the wire of OpenAI-compatible servers
// (Ollama, llama.cpp's server, LM Studio, vLLM, OpenRouter…).
package openai

import (
	"context"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/internal/errf"
	"github.com/floehq/floe/provider"
)

// DefaultBaseURL is the base URL used when Options.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// Options configure a Model.
type Options struct {
	Transport provider.Transport // required: how requests are sent
	Model     string             // required: the model name the server knows
	BaseURL   string             // "" = DefaultBaseURL; requests go to BaseURL + "/chat/completions"
	APIKey    string             // sent as "Authorization: Bearer KEY"; "" = no Authorization header
	Header    map[string]string  // extra request headers

	// MaxTokens, when > 0, is sent as max_tokens.
	MaxTokens int
	// ExtraBody is a JSON object whose members are added to every request
	// body (e.g. {"temperature":0.2}); nil = none.
	ExtraBody omni.RawJSON
	// SessionTokens are the session totals the context starts from (the
	// argument of an engine.LLMFactory).
	SessionTokens omni.TokenCounts
}

// Model is one stateful Chat Completions context.
type Model struct {
	opts Options
	conv provider.Conversation
}

// New validates o and returns a fresh context.
func New(o Options) (*Model, error) {
	if o.Transport == nil {
		return nil, errf.Errorf("openai: Options.Transport is required")
	}
	if o.Model == "" {
		return nil, errf.Errorf("openai: Options.Model is required")
	}
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	if o.ExtraBody != nil && !(&provider.JSONWriter{B: []byte("{")}).Members(o.ExtraBody) {
		return nil, errf.Errorf("openai: Options.ExtraBody is not a JSON object")
	}
	m := &Model{opts: o}
	m.conv.Session = o.SessionTokens
	return m, nil
}

// Factory returns an engine.LLMFactory that starts fresh contexts with m's
// options (for compaction).
func (m *Model) Factory() engine.LLMFactory {
	return func(session omni.TokenCounts) engine.LLM {
		o := m.opts
		o.SessionTokens = session
		n := &Model{opts: o}
		n.conv.Session = session
		return n
	}
}

// Usage returns the token counts the last completed request stated.
func (m *Model) Usage() provider.Usage { return m.conv.Last }

// LoadHistory implements engine.HistoryLoader: history becomes the
// conversation so far.
func (m *Model) LoadHistory(ctx context.Context, history []omni.Message) error {
	m.conv.Load(history)
	return nil
}

// StreamGenerate implements engine.LLM.
func (m *Model) StreamGenerate(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
	req := &provider.Request{Method: "POST", URL: m.opts.BaseURL + "/chat/completions", Header: m.header(), Body: m.body(&p)}
	e := provider.NewEmitter(emit, &m.conv.IDs)
	d := &Decoder{E: e}
	return m.conv.Run(ctx, m.opts.Transport, req, api, e, d, p.NewMessages, d.counts)
}

const api = "openai"

func (m *Model) header() map[string]string {
	h := map[string]string{"content-type": "application/json", "accept": "text/event-stream"}
	if m.opts.APIKey != "" {
		h["authorization"] = "Bearer " + m.opts.APIKey
	}
	for k, v := range m.opts.Header {
		h[k] = v
	}
	return h
}
