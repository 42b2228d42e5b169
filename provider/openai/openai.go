// Package openai is the model adapter for the OpenAI Chat Completions
// streaming API, which is also the wire of OpenAI-compatible servers
// (Ollama, llama.cpp's server, LM Studio, vLLM, OpenRouter…).
package openai

import (
	"context"
	"strings"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider"
)

// DefaultBaseURL is the base URL used when Options.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// DefaultMaxImageBytes and DefaultMaxImages are what a request's images
// may take when Options.MaxImageBytes and Options.MaxImages are 0: under
// OpenAI's limits of 50 MB of images a request and 500 images (other
// servers get the same). GeminiMaxImageBytes is the default for Gemini
// (Options.Gemini), under the 20 MB its requests of inline data may take.
const (
	DefaultMaxImageBytes = 40_000_000
	GeminiMaxImageBytes  = 16_000_000
	DefaultMaxImages     = 500
)

// Options configure a Model.
type Options struct {
	Transport provider.Transport // required: how requests are sent
	Model     string             // required: the model name the server knows
	BaseURL   string             // "" = DefaultBaseURL; requests go to BaseURL + "/chat/completions" (its trailing slashes dropped; the path goes before a query, which is kept)
	APIKey    string             // sent as "Authorization: Bearer KEY"; "" = no Authorization header
	Header    map[string]string  // extra request headers (names in any case; New refuses a name or value HTTP does not take)

	// MaxTokens, when > 0, is sent as max_tokens; New refuses one below 0.
	MaxTokens int
	// ExtraBody is a JSON object whose members are added to every request
	// body (e.g. {"temperature":0.2}); nil = none. New refuses a member
	// the adapter writes (model, stream, messages, tools,
	// reasoning_effort, max_tokens, max_completion_tokens), which would
	// go twice. Its stream_options
	// replaces the adapter's ({"include_usage":true}), and
	// "stream_options":null sends none, for a server that refuses the
	// member (the usage then counts only if the server sends it unasked).
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
	// Gemini speaks the dialect of Google's Gemini API (its OpenAI
	// endpoint): tool calls carry their thought signatures in
	// extra_content, a call without one (from another model) gets Google's
	// stand-in, and reasoning_effort keeps to the levels it accepts. Set
	// by New for a BaseURL on generativelanguage.googleapis.com; set it
	// for a proxy in front of that API. Other servers get no
	// extra_content.
	Gemini bool
	// MaxImageBytes and MaxImages are what the images of a request may
	// take: the length of their URLs (data: URLs of base64) and their
	// number; a document's (a PDF's) data: URL counts toward the bytes.
	// Past either, the oldest are sent as a text saying so, until
	// those kept take half of it (provider.ImageLimit). 0 =
	// DefaultMaxImageBytes (GeminiMaxImageBytes for Gemini),
	// DefaultMaxImages; below 0 = no limit.
	MaxImageBytes, MaxImages int
	// NoImages is for a model without vision (DeepSeek's, whose API
	// answers 400 to any image, and so failed every later request of a
	// session whose tool returned one): each image, a user's or a tool
	// output's, goes as a text saying it was not sent because the model
	// takes none ("[image not sent: the model takes no images]"), a tool
	// output's in its tool message. No model id sets it.
	NoImages bool
	// StartsInThinking is for a reasoning model whose chat template opens
	// its thinking (the prompt ends in "<think>\n": DeepSeek-R1's, QwQ's,
	// Qwen3's thinking models') on a server that leaves the thinking in
	// the text (llama.cpp's server with --reasoning-format none, vLLM
	// without --reasoning-parser): the reply's content is thinking until
	// its </think>, all of it if none comes. A reply whose thinking comes
	// in a reasoning field has its content as text. Without it, only
	// content that opens with <think> holds thinking.
	StartsInThinking bool
}

// Model is one stateful Chat Completions context.
type Model struct {
	opts Options
	c    provider.Conversation
	// noStream: ExtraBody has a stream_options, sent or null.
	noStream bool
}

// New validates o and returns a fresh context.
func New(o Options) (*Model, error) {
	o.BaseURL = provider.BaseURL(o.BaseURL, DefaultBaseURL)
	o.Gemini = o.Gemini || hostIs(o.BaseURL, geminiHost)
	m := &Model{opts: o}
	if err := m.c.Setup(api, o.Transport, o.Model, provider.JoinURL(o.BaseURL, "/chat/completions"), o.ExtraBody, o.SessionTokens, o.IdleTimeout, o.MaxTokens, o.Header, "authorization", bearer(o.APIKey), "APIKey"); err != nil {
		return nil, err
	}
	// A member the adapter writes would go twice (stream_options is
	// ExtraBody's when it has one: below).
	if err := provider.OwnMember(api, o.ExtraBody, ";model=Options.Model;stream=;messages=;tools=;reasoning_effort=the run's thinking level;max_tokens=Options.MaxTokens;max_completion_tokens=Options.MaxTokens;"); err != nil {
		return nil, err
	}
	def := provider.ImageLimit{Bytes: DefaultMaxImageBytes, Count: DefaultMaxImages}
	if o.Gemini {
		def.Bytes = GeminiMaxImageBytes
	}
	m.c.Images = provider.Limit(o.MaxImageBytes, o.MaxImages, def)
	if o.ExtraBody != nil {
		m.opts.ExtraBody, m.noStream = streamOptions(o.ExtraBody)
	}
	return m, nil
}

// streamOptions reports whether the JSON object body has a member
// stream_options, and returns body without it when its value is null.
func streamOptions(body omni.RawJSON) (omni.RawJSON, bool) {
	has, j := false, 0
	omni.WalkJSON(body, func(path []byte, kind byte, val []byte) error {
		if string(path) == "stream_options" {
			has = true
			if kind == 'n' {
				j = cap(body) - cap(val) + 4 // val is body's: after the null
			}
		}
		return nil
	})
	if j > 0 {
		// The member goes with the comma before it, or the one after it
		// when it is the first (none when it is the only one); its key
		// holds neither ',' nor '{'.
		b := string(body)
		i := j - 5
		for b[i] != ',' && b[i] != '{' {
			i--
		}
		if b[i] == '{' {
			i++
			if k := strings.IndexByte(b[j:], ','); k >= 0 {
				j += k + 1
			}
		}
		body = omni.RawJSON(b[:i] + b[j:])
	}
	return body, has
}

// Factory returns an engine.LLMFactory that starts fresh contexts with m's
// options (for compaction).
func (m *Model) Factory() engine.LLMFactory {
	return func(session omni.TokenCounts) engine.LLM {
		return &Model{opts: m.opts, c: m.c.Fresh(session), noStream: m.noStream}
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

// geminiHost serves Google's Gemini API.
const geminiHost = "generativelanguage.googleapis.com"

// hostIs reports whether the host of URL u is host (ASCII lower case),
// its letters compared in any case.
func hostIs(u, host string) bool {
	i := 0
	for i+2 < len(u) && (u[i] != ':' || u[i+1] != '/' || u[i+2] != '/') {
		i++
	}
	if i+2 >= len(u) {
		return false
	}
	u = u[i+3:]
	n := 0
	for n < len(u) && u[n] != '/' && u[n] != ':' && u[n] != '?' {
		n++
	}
	if n != len(host) {
		return false
	}
	for j := 0; j < n; j++ {
		if u[j]|0x20 != host[j] { // host is lower case letters, digits, '.' and '-'
			return false
		}
	}
	return true
}

func bearer(key string) string {
	if key == "" {
		return ""
	}
	return "Bearer " + key
}
