//go:build js && wasm

package jsbridge

import (
	"syscall/js"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider"
	"github.com/floehq/floe/provider/anthropic"
	"github.com/floehq/floe/provider/openai"
	"github.com/floehq/floe/provider/responses"
)

// The built-in model adapters (package provider) behind floe.openai,
// floe.openaiCompatible, floe.openaiResponses and floe.anthropic. The shim
// hands the bridge a model spec instead of a callback object:
//
//	{ provider: "openai-chat" | "openai-responses" | "anthropic",
//	  model: string, baseURL?: string, apiKey?: string,
//	  headers?: {[name]: string}, maxTokens?: number, body?: string /* JSON object */,
//	  version?: string, browserAccess?: boolean /* anthropic */,
//	  fetch: function, browser: boolean }
//
// The session then runs the Go adapter directly: the model's stream never
// crosses into JavaScript; only the response's byte chunks do (fetch.go).

// isModelSpec reports whether v is a model spec (it names a provider).
func isModelSpec(v js.Value) bool {
	return v.Type() == js.TypeObject && v.Get("provider").Type() == js.TypeString
}

// modelSpec is a model spec read from JavaScript.
type modelSpec struct {
	provider      string
	model         string
	baseURL       string
	apiKey        string
	header        map[string]string
	maxTokens     int
	body          omni.RawJSON
	version       string
	browserAccess bool
	transport     provider.Transport
}

// readModelSpec reads and checks a model spec; errors name the field.
func (b *Bridge) readModelSpec(v js.Value, name string) (*modelSpec, error) {
	s := &modelSpec{provider: v.Get("provider").String()}
	switch s.provider {
	case "openai-chat", "openai-responses", "anthropic":
	default:
		return nil, badArg(name+".provider", `want "openai-chat", "openai-responses" or "anthropic", got "`+s.provider+`"`)
	}
	strs := []struct {
		key      string
		dst      *string
		required bool
	}{
		{"model", &s.model, true},
		{"baseURL", &s.baseURL, false},
		{"apiKey", &s.apiKey, false},
		{"version", &s.version, false},
	}
	for _, f := range strs {
		x := v.Get(f.key)
		if absent(x) && !f.required {
			continue
		}
		str, err := wantString(x, name+"."+f.key)
		if err != nil {
			return nil, err
		}
		*f.dst = str
	}
	if s.model == "" {
		return nil, badArg(name+".model", "want a model name, got an empty string")
	}
	if h := v.Get("headers"); !absent(h) {
		if err := wantObject(h, name+".headers"); err != nil {
			return nil, err
		}
		keys := js.Global().Get("Object").Call("keys", h)
		s.header = make(map[string]string, keys.Length())
		for i, n := 0, keys.Length(); i < n; i++ {
			k := keys.Index(i).String()
			hv, err := wantString(h.Get(k), name+".headers["+quote(k)+"]")
			if err != nil {
				return nil, err
			}
			s.header[k] = hv
		}
	}
	if m := v.Get("maxTokens"); !absent(m) {
		n, err := wantInt(m, name+".maxTokens")
		if err != nil {
			return nil, err
		}
		if n < 0 {
			return nil, badArg(name+".maxTokens", "want a positive integer")
		}
		s.maxTokens = n
	}
	if x := v.Get("body"); !absent(x) {
		str, err := wantString(x, name+".body")
		if err != nil {
			return nil, err
		}
		s.body = omni.RawJSON(str)
	}
	if x := v.Get("browserAccess"); !absent(x) {
		if x.Type() != js.TypeBoolean {
			return nil, badArg(name+".browserAccess", "want a boolean, got "+typeName(x))
		}
		s.browserAccess = x.Bool()
	}
	f := v.Get("fetch")
	if err := wantFunc(f, name+".fetch"); err != nil {
		return nil, err
	}
	s.transport = &fetchTransport{b: b, fetch: f, browser: v.Get("browser").Truthy()}
	return s, nil
}

// newContext returns a fresh model context of s that starts from the
// session totals tokens.
func (s *modelSpec) newContext(tokens omni.TokenCounts) (engine.LLM, error) {
	switch s.provider {
	case "openai-chat":
		return openai.New(openai.Options{Transport: s.transport, Model: s.model, BaseURL: s.baseURL, APIKey: s.apiKey,
			Header: s.header, MaxTokens: s.maxTokens, ExtraBody: s.body, SessionTokens: tokens})
	case "openai-responses":
		return responses.New(responses.Options{Transport: s.transport, Model: s.model, BaseURL: s.baseURL, APIKey: s.apiKey,
			Header: s.header, MaxTokens: s.maxTokens, ExtraBody: s.body, SessionTokens: tokens})
	}
	return anthropic.New(anthropic.Options{Transport: s.transport, Model: s.model, BaseURL: s.baseURL, APIKey: s.apiKey,
		Header: s.header, MaxTokens: s.maxTokens, ExtraBody: s.body, BrowserAccess: s.browserAccess,
		Version: s.version, SessionTokens: tokens})
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

// quote returns k in double quotes for an error message.
func quote(k string) string { return `"` + k + `"` }
