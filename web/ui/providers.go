//go:build js && wasm

package ui

import (
	"context"
	"errors"
	"strings"
	"syscall/js"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/playground"
	"github.com/floehq/floe/provider"
	"github.com/floehq/floe/provider/anthropic"
	"github.com/floehq/floe/provider/openai"
	"github.com/floehq/floe/provider/responses"
	"github.com/floehq/floe/web/fetch"
	"github.com/floehq/floe/web/jsx"
)

// newProviderLLM returns the model of a real provider (package provider's
// adapters over the browser's fetch). The key goes only to the chosen
// endpoint: requests never follow redirects and carry no cookies.
// Its session tokens start from seed (a resumed session's).
func newProviderLLM(s Settings, seed omni.TokenCounts) (engine.LLM, engine.LLMFactory, error) {
	if strings.TrimSpace(s.Model) == "" {
		return nil, nil, errors.New("Settings: choose a model name for " + providerNames[s.Provider] + "; the scripted demo is used meanwhile.")
	}
	if err := playground.CheckBaseURL(s.BaseURL); err != nil {
		return nil, nil, err
	}
	if err := playground.CheckKey(s.Key); err != nil {
		return nil, nil, err
	}
	if err := playground.CheckThinkingLevel(s.ThinkingLevel); err != nil {
		return nil, nil, err
	}
	tr := fetch.Transport{Hint: corsHint}
	base := provider.BaseURL(strings.TrimSpace(s.BaseURL), "") // its path's trailing slashes dropped, a query kept
	switch s.Provider {
	case "openai", "openai-compatible":
		if s.Provider == "openai-compatible" && base == "" {
			return nil, nil, errors.New("Settings: an OpenAI-compatible server needs its base URL, e.g. http://127.0.0.1:11434/v1 for Ollama.")
		}
		if s.Provider == "openai" && s.Key == "" && base == "" {
			return nil, nil, errors.New("Settings: OpenAI needs an API key (or a Base URL: a proxy that adds it, a local server).")
		}
		m, err := openai.New(openai.Options{Transport: tr, Model: s.Model, BaseURL: base, APIKey: s.Key, SessionTokens: seed, Gemini: s.Gemini, NoImages: s.NoImages,
			StartsInThinking: s.startsInThinking()})
		if err != nil {
			return nil, nil, err
		}
		return m, m.Factory(), nil
	case "openai-responses":
		if s.Key == "" && base == "" {
			return nil, nil, errors.New("Settings: the OpenAI Responses API needs an API key (or a Base URL: a proxy that adds it, a local server).")
		}
		m, err := responses.New(responses.Options{Transport: tr, Model: s.Model, BaseURL: base, APIKey: s.Key, SessionTokens: seed, NoImages: s.NoImages,
			StartsInThinking: s.startsInThinking()})
		if err != nil {
			return nil, nil, err
		}
		return m, m.Factory(), nil
	case "anthropic":
		if s.Key == "" && base == "" {
			return nil, nil, errors.New("Settings: Anthropic needs an API key (or a Base URL: a proxy that adds it).")
		}
		m, err := anthropic.New(anthropic.Options{Transport: tr, Model: s.Model, BaseURL: base, APIKey: s.Key, BrowserAccess: true, SessionTokens: seed,
			NoImages: s.NoImages})
		if err != nil {
			return nil, nil, err
		}
		return m, m.Factory(), nil
	}
	return nil, nil, errors.New("unknown provider " + s.Provider)
}

// corsHint explains a request that got no response: the page's
// Content-Security-Policy blocks the URL (the browser refuses the fetch
// with the same error as an unreachable server), or the server is not
// running, or it refuses this page's origin (CORS).
func corsHint(url string, err error) error {
	if msg, blocked := playground.ConnectBlocked(pagePolicies(), js.Global().Get("location").Get("href").String(), url); blocked {
		return errors.New("no request sent to " + url + ": " + msg)
	}
	origin := js.Global().Get("location").Get("origin").String()
	msg := "no response from " + url + " (" + err.Error() + "): the server is not running, or it does not allow this page's origin " + origin + " (CORS)."
	switch {
	case strings.Contains(url, ":11434"):
		msg += " Ollama: start it with OLLAMA_ORIGINS=" + origin + " ollama serve."
	case strings.Contains(url, ":1234"):
		msg += " LM Studio: enable CORS in its server settings."
	case strings.Contains(url, ":8081"):
		msg += " llama.cpp: llama-server answers any origin; check that it runs and that the URL ends in /v1."
	}
	return errors.New(msg)
}

// pagePolicies returns the Content-Security-Policies the page runs under:
// its meta elements' and its header's (read with a HEAD request of the
// page itself; none when that fails).
func pagePolicies() []string {
	var out []string
	metas := js.Global().Get("document").Call("querySelectorAll", `meta[http-equiv="Content-Security-Policy" i]`)
	for i := 0; i < metas.Length(); i++ {
		out = append(out, playground.SplitPolicies(metas.Index(i).Call("getAttribute", "content").String())...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p, err := jsx.Invoke(js.Global().Get("fetch"), js.Global().Get("location").Get("href"), map[string]any{"method": "HEAD", "cache": "no-store"})
	if err != nil {
		return out
	}
	res, err := jsx.Await(ctx, p)
	if err != nil {
		return out
	}
	if h := res.Get("headers").Call("get", "content-security-policy"); h.Type() == js.TypeString {
		out = append(out, playground.SplitPolicies(h.String())...)
	}
	return out
}
