//go:build js && wasm

package jsbridge

import (
	"strings"
	"syscall/js"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider"
	"github.com/floehq/floe/provider/anthropic"
	"github.com/floehq/floe/provider/openai"
	"github.com/floehq/floe/provider/responses"
)

// The built-in model adapters (package provider) behind floe.openai,
// floe.openaiCompatible, floe.openaiResponses and floe.anthropic. Instead
// of a callback object the shim hands the bridge a model spec, made and
// checked by the shim (static/floe.mjs, modelSpec):
//
//	{ provider: "openai-chat" | "openai-responses" | "anthropic",
//	  model, baseURL, apiKey, version, body /* JSON object or "" */: string,
//	  headers: string /* "name\nvalue\n…" */, maxTokens: number /* 0 = default */,
//	  idleMs: number /* 0 = default, -1 = none */,
//	  maxImageBytes, maxImages: number /* 0 = default, -1 = none */,
//	  browserAccess, gemini, noImages, noCache, startsInThinking: boolean,
//	  cacheTTL: "" | "5m" | "1h",
//	  http: the http host of fetch.go }
//
// The session then runs the Go adapter directly: the model's stream never
// crosses into JavaScript; only the response's byte chunks do.

// isModelSpec reports whether v is a model spec (it names a provider).
func isModelSpec(v js.Value) bool {
	return v.Type() == js.TypeObject && v.Get("provider").Type() == js.TypeString
}

// modelSpec is a model spec read from JavaScript.
type modelSpec struct {
	provider, model, baseURL, apiKey, version, cacheTTL string
	header                                              map[string]string
	maxTokens, maxImageBytes, maxImages                 int
	idle                                                time.Duration
	body                                                omni.RawJSON
	browserAccess, gemini, noImages, noCache, opened    bool
	transport                                           provider.Transport
}

// readModelSpec reads a model spec. The shim has checked every field; a
// spec of another shape is an internal error.
func (b *Bridge) readModelSpec(v js.Value, name string) (s *modelSpec, err error) {
	defer guard(name, func(e error) { s, err = nil, badArg(name, "a malformed model spec") })
	str := func(k string) string { return v.Get(k).String() }
	s = &modelSpec{provider: str("provider"), model: str("model"), baseURL: str("baseURL"),
		apiKey: str("apiKey"), version: str("version"), cacheTTL: str("cacheTTL"), maxTokens: v.Get("maxTokens").Int(),
		maxImageBytes: v.Get("maxImageBytes").Int(), maxImages: v.Get("maxImages").Int(),
		idle:          time.Duration(v.Get("idleMs").Int()) * time.Millisecond,
		browserAccess: v.Get("browserAccess").Bool(), gemini: v.Get("gemini").Bool(), noImages: v.Get("noImages").Bool(), noCache: v.Get("noCache").Bool(), opened: v.Get("startsInThinking").Bool(), transport: &fetchTransport{b: b, host: v.Get("http")}}
	if body := str("body"); body != "" {
		s.body = omni.RawJSON(body)
	}
	if h := splitLines(str("headers")); len(h) > 1 {
		s.header = make(map[string]string, len(h)/2)
		for i := 0; i+1 < len(h); i += 2 {
			s.header[h[i]] = h[i+1]
		}
	}
	return s, nil
}

// newContext returns a fresh model context of s that starts from the
// session totals tokens.
func (s *modelSpec) newContext(tokens omni.TokenCounts) (engine.LLM, error) {
	switch s.provider {
	case "openai-chat":
		return openai.New(openai.Options{Transport: s.transport, Model: s.model, BaseURL: s.baseURL, APIKey: s.apiKey,
			Header: s.header, MaxTokens: s.maxTokens, ExtraBody: s.body, SessionTokens: tokens, IdleTimeout: s.idle, Gemini: s.gemini,
			MaxImageBytes: s.maxImageBytes, MaxImages: s.maxImages, NoImages: s.noImages, StartsInThinking: s.opened})
	case "openai-responses":
		return responses.New(responses.Options{Transport: s.transport, Model: s.model, BaseURL: s.baseURL, APIKey: s.apiKey,
			Header: s.header, MaxTokens: s.maxTokens, ExtraBody: s.body, SessionTokens: tokens, IdleTimeout: s.idle,
			MaxImageBytes: s.maxImageBytes, MaxImages: s.maxImages, NoImages: s.noImages, StartsInThinking: s.opened})
	}
	return anthropic.New(anthropic.Options{Transport: s.transport, Model: s.model, BaseURL: s.baseURL, APIKey: s.apiKey,
		Header: s.header, MaxTokens: s.maxTokens, ExtraBody: s.body, BrowserAccess: s.browserAccess,
		Version: s.version, SessionTokens: tokens, IdleTimeout: s.idle, NoCache: s.noCache, CacheTTL: s.cacheTTL,
		MaxImageBytes: s.maxImageBytes, MaxImages: s.maxImages, NoImages: s.noImages})
}

// factory is the engine.LLMFactory of s: a fresh context of the same model
// for each compaction.
func (s *modelSpec) factory() engine.LLMFactory {
	return func(tokens omni.TokenCounts) engine.LLM {
		l, err := s.newContext(tokens)
		if err != nil {
			return failingLLM(err.Error())
		}
		return l
	}
}

// providerLLM builds the model context of a spec and the factory of the
// same model.
func (b *Bridge) providerLLM(v js.Value, name string) (engine.LLM, engine.LLMFactory, error) {
	s, err := b.readModelSpec(v, name)
	if err != nil {
		return nil, nil, err
	}
	l, err := s.newContext(omni.TokenCounts{})
	if err != nil {
		return nil, nil, badArg(name, err.Error())
	}
	return l, s.factory(), nil
}

// splitLines is strings.Split(s, "\n"), which links about 1 kB (brotli)
// more.
func splitLines(s string) []string {
	out := make([]string, 0, 8)
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i])
		s = s[i+1:]
	}
}
