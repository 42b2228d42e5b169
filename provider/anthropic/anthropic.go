// Package anthropic is the model adapter for the Anthropic Messages
// streaming API.
package anthropic

import (
	"context"
	"errors"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/internal/errf"
	"github.com/floehq/floe/provider"
)

// DefaultBaseURL is the base URL used when Options.BaseURL is empty.
const DefaultBaseURL = "https://api.anthropic.com/v1"

// DefaultMaxTokens is max_tokens when Options.MaxTokens is 0.
const DefaultMaxTokens = 8192

// DefaultMaxImageBytes and DefaultMaxImages are what a request's images
// may take when Options.MaxImageBytes and Options.MaxImages are 0: under
// the API's limits of 32 MB a request, room left for the text, and 100
// images.
const (
	DefaultMaxImageBytes = 24_000_000
	DefaultMaxImages     = 100
)

// DefaultVersion is the anthropic-version header when Options.Version is "".
const DefaultVersion = "2023-06-01"

// Options configure a Model.
type Options struct {
	Transport provider.Transport // required: how requests are sent
	Model     string             // required: the model name the server knows
	BaseURL   string             // "" = DefaultBaseURL; requests go to BaseURL + "/messages" (its trailing slashes dropped; the path goes before a query, which is kept)
	APIKey    string             // sent as x-api-key
	Header    map[string]string  // extra request headers (names in any case; New refuses a name or value HTTP does not take)

	// MaxTokens is sent as max_tokens (required by the API); 0 =
	// DefaultMaxTokens. A thinking budget at or above it is halved to fit
	// under it (above 2048; at or below, max_tokens is raised, as it is
	// above the default). New refuses one below 0.
	MaxTokens int
	// BrowserAccess sends "anthropic-dangerous-direct-browser-access: true",
	// which Anthropic requires of requests made from a browser page.
	BrowserAccess bool
	// Version is the anthropic-version header; "" = DefaultVersion.
	Version string
	// NoCache sends no cache_control. By default a request carries
	// prompt-cache breakpoints: on the system prompt (sent as one text
	// block; it caches the tools too), on the last block of the last
	// message and on the last block of the user message before it. Set
	// it for a proxy or a compatible server that refuses the field.
	NoCache bool
	// CacheTTL is how long the breakpoints' prefixes stay cached: "" or
	// "5m", the API's default of 5 minutes, or "1h" (a write costs more,
	// twice the input price against 1.25 times; worth it when a session
	// pauses longer than 5 minutes between requests). Every breakpoint
	// takes it. "1h" also sends "anthropic-beta:
	// extended-cache-ttl-2025-04-11", which the API asked of it, after
	// the betas of an anthropic-beta of Header, if any. New refuses
	// another value; with NoCache it sends nothing.
	CacheTTL string
	// MaxImageBytes and MaxImages are what the images of a request may
	// take: the length of their data (base64) or URLs, and their number;
	// a document's (a PDF's) data counts toward the bytes. Past either, the oldest are sent as a text saying so, until those
	// kept take half of it (provider.ImageLimit). 0 =
	// DefaultMaxImageBytes, DefaultMaxImages; below 0 = no limit. Apart
	// from them, a request of more than 20 images, one wider or higher
	// than 2000 px, sends the newest (the API refuses it), and an image
	// of more than 5 MB of base64 or 8000 px a side goes as a text
	// saying so.
	MaxImageBytes, MaxImages int
	// NoImages is for a model without vision (DeepSeek's Anthropic API
	// documents that it takes no images): each image, a user's or a tool
	// result's, goes as a text block saying it was not sent because the
	// model takes none ("[image not sent: the model takes no images]"),
	// a tool result's in its tool_result, as the Chat adapter's NoImages.
	NoImages bool

	// ExtraBody is a JSON object whose members are added to every request
	// body (e.g. {"temperature":0.2}); nil = none. New refuses a member
	// the adapter writes (model, max_tokens, stream, system, messages,
	// tools, thinking), which would go twice; an output_config replaces
	// the one adaptive thinking sends (its effort).
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
}

// Model is one stateful Anthropic Messages context.
type Model struct {
	opts Options
	c    provider.Conversation
	// ownConfig: ExtraBody has an output_config, which replaces the
	// adapter's (adaptive thinking's effort).
	ownConfig bool
}

// New validates o and returns a fresh context.
func New(o Options) (*Model, error) {
	o.BaseURL = provider.BaseURL(o.BaseURL, DefaultBaseURL)
	if o.Version == "" {
		o.Version = DefaultVersion
	}
	switch o.CacheTTL {
	case "", "5m", "1h":
	default:
		return nil, errors.New(api + `: Options.CacheTTL: want "5m" or "1h" (or "" for the API's default, 5 minutes), got ` + errf.Quote(o.CacheTTL))
	}
	beta := ""
	if o.CacheTTL == "1h" && !o.NoCache {
		beta = extendedCacheTTL
	}
	m := &Model{opts: o}
	if err := m.c.Setup(api, o.Transport, o.Model, provider.JoinURL(o.BaseURL, "/messages"), o.ExtraBody, o.SessionTokens, o.IdleTimeout, o.MaxTokens, o.Header, "anthropic-version", o.Version, "Version", "anthropic-beta", beta, "CacheTTL", "x-api-key", o.APIKey, "APIKey", "anthropic-dangerous-direct-browser-access", browser(o.BrowserAccess), "BrowserAccess"); err != nil {
		return nil, err
	}
	// A member the adapter writes would go twice (output_config, written
	// with adaptive thinking, is ExtraBody's when it has one).
	if err := provider.OwnMember(api, o.ExtraBody, ";model=Options.Model;max_tokens=Options.MaxTokens;stream=;system=;messages=;tools=;thinking=the run's thinking level;"); err != nil {
		return nil, err
	}
	m.ownConfig = provider.OwnMember(api, o.ExtraBody, ";output_config=;") != nil
	m.c.Images = provider.Limit(o.MaxImageBytes, o.MaxImages, provider.ImageLimit{Bytes: DefaultMaxImageBytes, Count: DefaultMaxImages})
	// Its endpoint is its URL alone: Anthropic documents thinking
	// signatures as valid across its platforms (the Claude API, Bedrock,
	// Vertex), so a key changed between runs still verifies them; one left
	// out of a tool loop resumed with thinking on is a 400 ("must start
	// with a thinking block").
	return m, nil
}

// extendedCacheTTL is the beta the API asked of a cache TTL of an hour
// when it came out (one the API has made general is still taken); it is
// added to the betas of an anthropic-beta of Options.Header.
const extendedCacheTTL = "extended-cache-ttl-2025-04-11"

// Factory returns an engine.LLMFactory that starts fresh contexts with m's
// options (for compaction).
func (m *Model) Factory() engine.LLMFactory {
	return func(session omni.TokenCounts) engine.LLM {
		return &Model{opts: m.opts, c: m.c.Fresh(session), ownConfig: m.ownConfig}
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
	return m.c.Generate(ctx, &p, emit, m.body, newDecoder)
}

func newDecoder(e *provider.Emitter) provider.Decoder { return &Decoder{E: e} }

func browser(on bool) string {
	if on {
		return "true"
	}
	return ""
}
