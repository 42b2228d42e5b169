// Package responses is the model adapter for the OpenAI Responses
// streaming API (also served by Azure OpenAI and LM Studio).
package responses

import (
	"context"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider"
)

// DefaultBaseURL is the base URL used when Options.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// DefaultMaxImageBytes and DefaultMaxImages are what a request's images
// may take when Options.MaxImageBytes and Options.MaxImages are 0: under
// OpenAI's limits of 50 MB of images a request and 500 images.
const (
	DefaultMaxImageBytes = 40_000_000
	DefaultMaxImages     = 500
)

// Options configure a Model.
type Options struct {
	Transport provider.Transport // required: how requests are sent
	Model     string             // required: the model name the server knows
	BaseURL   string             // "" = DefaultBaseURL; requests go to BaseURL + "/responses" (its trailing slashes dropped; the path goes before a query, which is kept)
	APIKey    string             // sent as "Authorization: Bearer KEY"; "" = no Authorization header
	Header    map[string]string  // extra request headers (names in any case; New refuses a name or value HTTP does not take)

	// MaxTokens, when > 0, is sent as max_output_tokens; New refuses one
	// below 0.
	MaxTokens int
	// ExtraBody is a JSON object whose members are added to every request
	// body (e.g. {"temperature":0.2}); nil = none. New refuses a member
	// the adapter writes (model, stream, store, instructions, input,
	// tools, include, reasoning, max_output_tokens), which would go twice.
	ExtraBody omni.RawJSON
	// SessionTokens are the session totals the context starts from (the
	// argument of an engine.LLMFactory).
	SessionTokens omni.TokenCounts
	// IdleTimeout ends a request as timeout (retried by the engine) when
	// it waited about this long on the server without a byte: for its
	// headers, or in a read of its body (the time its emit waits on the
	// engine does not count). 0 = provider.DefaultIdleTimeout (5
	// minutes); below 0 = none.
	IdleTimeout time.Duration
	// MaxImageBytes and MaxImages are what the images of a request may
	// take: the length of their URLs (data: URLs of base64) and their
	// number; a document's (a PDF's) data: URL counts toward the bytes.
	// Past either, the oldest are sent as a text saying so, until
	// those kept take half of it (provider.ImageLimit). 0 =
	// DefaultMaxImageBytes, DefaultMaxImages; below 0 = no limit.
	MaxImageBytes, MaxImages int
	// NoImages is for a model without vision (one behind LM Studio's
	// Responses API): each image, a user's or a tool output's, goes as a
	// text saying it was not sent because the model takes none
	// (provider.NoImage), a tool output's in its output. No model id
	// sets it.
	NoImages bool
	// StartsInThinking is for a reasoning model whose chat template opens
	// its thinking, on a server that leaves the thinking in the text
	// (vLLM without --reasoning-parser): the reply's text is thinking
	// until its </think>, all of it if none comes (as the Chat adapter's
	// option). Without it, only text that opens with <think> holds
	// thinking. A reply with reasoning items has its text as text.
	StartsInThinking bool
}

// Model is one stateful Responses API context.
type Model struct {
	opts Options
	c    provider.Conversation
}

// New validates o and returns a fresh context.
func New(o Options) (*Model, error) {
	o.BaseURL = provider.BaseURL(o.BaseURL, DefaultBaseURL)
	m := &Model{opts: o}
	if err := m.c.Setup(api, o.Transport, o.Model, provider.JoinURL(o.BaseURL, "/responses"), o.ExtraBody, o.SessionTokens, o.IdleTimeout, o.MaxTokens, o.Header, "authorization", bearer(o.APIKey), "APIKey"); err != nil {
		return nil, err
	}
	// A member the adapter writes would go twice.
	if err := provider.OwnMember(api, o.ExtraBody, ";model=Options.Model;stream=;store=;instructions=;input=;tools=;include=the run's thinking level;reasoning=the run's thinking level;max_output_tokens=Options.MaxTokens;"); err != nil {
		return nil, err
	}
	m.c.Images = provider.Limit(o.MaxImageBytes, o.MaxImages, provider.ImageLimit{Bytes: DefaultMaxImageBytes, Count: DefaultMaxImages})
	m.c.KeyEndpoint(o.APIKey) // its reasoning is verified by the account that made it
	return m, nil
}

// Factory returns an engine.LLMFactory that starts fresh contexts with m's
// options (for compaction).
func (m *Model) Factory() engine.LLMFactory {
	return func(session omni.TokenCounts) engine.LLM {
		return &Model{opts: m.opts, c: m.c.Fresh(session)}
	}
}

// Usage returns the token counts the last completed request stated, its
// input count too, which token_usage does not carry. It changes as the
// request's token_usage is emitted: read it from the run's consumer on
// taking that message (it is then that request's) or between runs; it is
// not synchronized with a request in flight.
func (m *Model) Usage() provider.Usage { return m.c.Last }

// LoadHistory implements engine.HistoryLoader: history becomes the
// conversation so far.
func (m *Model) LoadHistory(ctx context.Context, history []omni.Message) error {
	m.c.Load(history)
	return nil
}

// StreamGenerate implements engine.LLM.
func (m *Model) StreamGenerate(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
	return m.c.Generate(ctx, &p, emit, m.body, m.newDecoder)
}

func (m *Model) newDecoder(e *provider.Emitter) provider.Decoder {
	return &Decoder{E: e, tags: provider.InlineThinking{Opened: m.opts.StartsInThinking}}
}

func bearer(key string) string {
	if key == "" {
		return ""
	}
	return "Bearer " + key
}
