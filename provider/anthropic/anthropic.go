// Package anthropic is the model adapter for the Anthropic Messages
// streaming API.
package anthropic

import (
	"context"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/internal/errf"
	"github.com/floehq/floe/provider"
)

// DefaultBaseURL is the base URL used when Options.BaseURL is empty.
const DefaultBaseURL = "https://api.anthropic.com/v1"

// DefaultMaxTokens is max_tokens when Options.MaxTokens is 0.
const DefaultMaxTokens = 8192

// DefaultVersion is the anthropic-version header when Options.Version is "".
const DefaultVersion = "2023-06-01"

// Options configure a Model.
type Options struct {
	Transport provider.Transport // required: how requests are sent
	Model     string             // required: the model name the server knows
	BaseURL   string             // "" = DefaultBaseURL; requests go to BaseURL + "/messages"
	APIKey    string             // sent as x-api-key
	Header    map[string]string  // extra request headers

	// MaxTokens is sent as max_tokens (required by the API); 0 = DefaultMaxTokens.
	MaxTokens int
	// BrowserAccess sends "anthropic-dangerous-direct-browser-access: true",
	// which Anthropic requires of requests made from a browser page.
	BrowserAccess bool
	// Version is the anthropic-version header; "" = DefaultVersion.
	Version string

	// ExtraBody is a JSON object whose members are added to every request
	// body (e.g. {"temperature":0.2}); nil = none.
	ExtraBody omni.RawJSON
	// SessionTokens are the session totals the context starts from (the
	// argument of an engine.LLMFactory).
	SessionTokens omni.TokenCounts
}

// Model is one stateful Anthropic Messages context.
type Model struct {
	opts Options
	conv provider.Conversation
}

// New validates o and returns a fresh context.
func New(o Options) (*Model, error) {
	if o.Transport == nil {
		return nil, errf.Errorf("anthropic: Options.Transport is required")
	}
	if o.Model == "" {
		return nil, errf.Errorf("anthropic: Options.Model is required")
	}
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = DefaultMaxTokens
	}
	if o.Version == "" {
		o.Version = DefaultVersion
	}
	if o.ExtraBody != nil && !omni.IsJSONObject(o.ExtraBody) {
		return nil, errf.Errorf("anthropic: Options.ExtraBody is not a JSON object")
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
	sent := m.conv.Request(p.NewMessages)
	body, err := m.body(&p, sent)
	if err != nil {
		return engine.Outcome{Status: omni.StatusFailed, ErrorMessage: err.Error(), Permanent: true}
	}
	req := &provider.Request{Method: "POST", URL: m.opts.BaseURL + "/messages", Header: m.header(), Body: body}
	e := provider.NewEmitter(emit, &m.conv.IDs)
	d := &Decoder{E: e}
	return m.conv.Run(ctx, m.opts.Transport, req, api, e, d, sent, d.counts)
}

const api = "anthropic"

func (m *Model) header() map[string]string {
	h := map[string]string{"content-type": "application/json", "accept": "text/event-stream", "anthropic-version": m.opts.Version}
	if m.opts.APIKey != "" {
		h["x-api-key"] = m.opts.APIKey
	}
	if m.opts.BrowserAccess {
		h["anthropic-dangerous-direct-browser-access"] = "true"
	}
	for k, v := range m.opts.Header {
		h[k] = v
	}
	return h
}
