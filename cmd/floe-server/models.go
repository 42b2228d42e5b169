package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/playground"
	"github.com/floehq/floe/provider"
	"github.com/floehq/floe/provider/anthropic"
	"github.com/floehq/floe/provider/nethttp"
	"github.com/floehq/floe/provider/openai"
	"github.com/floehq/floe/provider/responses"
	"github.com/floehq/floe/transport/host"
	"github.com/floehq/floe/transport/server"
)

// The models --model names.
const (
	modelScripted         = "scripted"
	modelOpenAI           = "openai"
	modelOpenAICompatible = "openai-compatible"
	modelResponses        = "openai-responses"
	modelAnthropic        = "anthropic"
)

const modelNames = "scripted, openai, openai-compatible, openai-responses or anthropic"

// compactPrompt is the summarize request of a provider model's compaction.
const compactPrompt = "Summarize the conversation so far for your own later use: the user's goals, " +
	"what was done and found (files, tool results, decisions), and what remains. Be concise and keep every detail needed to continue."

// modelConfig is what the model flags chose.
type modelConfig struct {
	Kind    string // one of the model names
	ModelID string // the provider's model name
	BaseURL string // "" = the adapter's default
	APIKey  string // from the environment; "" = none
}

// modelFlags validates the model flags. set reports which flags were given;
// getenv reads the environment (the key never comes from a flag value,
// which any user could read in the process list).
func modelFlags(kind, modelID, baseURL, keyEnv string, set map[string]bool, getenv func(string) string) (modelConfig, error) {
	mc := modelConfig{Kind: kind, ModelID: modelID, BaseURL: baseURL}
	switch kind {
	case modelScripted:
		for _, f := range []string{"model-id", "base-url", "api-key-env"} {
			if set[f] {
				return mc, fmt.Errorf("--%s: only with a provider model (--model %s is offline)", f, kind)
			}
		}
		return mc, nil
	case modelOpenAI, modelOpenAICompatible, modelResponses, modelAnthropic:
	default:
		return mc, fmt.Errorf("--model %q: want %s", kind, modelNames)
	}
	if set["delay"] {
		return mc, fmt.Errorf("--delay: only with --model scripted")
	}
	if modelID == "" {
		return mc, fmt.Errorf("--model-id: required with --model %s (the model name the provider knows)", kind)
	}
	if kind == modelOpenAICompatible && baseURL == "" {
		return mc, errors.New("--base-url: required with --model openai-compatible (such as http://127.0.0.1:11434/v1)")
	}
	if baseURL != "" && !validBaseURL(baseURL) {
		return mc, fmt.Errorf("--base-url %q: want an http:// or https:// URL", baseURL)
	}
	if set["api-key-env"] && keyEnv == "" {
		return mc, errors.New("--api-key-env: empty variable name")
	}
	if keyEnv == "" {
		switch kind {
		case modelOpenAI, modelResponses:
			keyEnv = "OPENAI_API_KEY"
		case modelAnthropic:
			keyEnv = "ANTHROPIC_API_KEY"
		}
	}
	if keyEnv != "" {
		mc.APIKey = getenv(keyEnv)
		if mc.APIKey == "" {
			flag := "--api-key-env"
			if !set["api-key-env"] {
				flag = "--model " + kind
			}
			return mc, fmt.Errorf("%s: the environment variable %s is empty or unset (set it, or name another with --api-key-env)", flag, keyEnv)
		}
	}
	return mc, nil
}

func validBaseURL(u string) bool {
	for _, scheme := range []string{"http://", "https://"} {
		if len(u) > len(scheme) && u[:len(scheme)] == scheme {
			return true
		}
	}
	return false
}

// providerModel is what every adapter's Model offers.
type providerModel interface {
	engine.LLM
	engine.HistoryLoader
	Factory() engine.LLMFactory
}

// newModel returns a fresh model context.
func (mc modelConfig) newModel(t provider.Transport) (providerModel, error) {
	switch mc.Kind {
	case modelOpenAI, modelOpenAICompatible:
		return openai.New(openai.Options{Transport: t, Model: mc.ModelID, BaseURL: mc.BaseURL, APIKey: mc.APIKey})
	case modelResponses:
		return responses.New(responses.Options{Transport: t, Model: mc.ModelID, BaseURL: mc.BaseURL, APIKey: mc.APIKey})
	case modelAnthropic:
		return anthropic.New(anthropic.Options{Transport: t, Model: mc.ModelID, BaseURL: mc.BaseURL, APIKey: mc.APIKey})
	}
	return nil, errors.New("model " + mc.Kind + ": not a provider model")
}

// apply sets cfg's wiring: the scripted model by name, a provider model
// through Wire and NewMeta. Each session gets a fresh model context (the
// engine loads a resumed session's history into it) and its own demo
// workspace; compaction summarizes with a fresh context from the
// adapter's Factory.
func (mc modelConfig) apply(cfg *server.Config) error {
	if mc.Kind == modelScripted {
		cfg.Model = modelScripted
		return nil
	}
	cfg.Model = mc.Kind // a label only: Wire wires the sessions
	t := nethttp.New(nil)
	if _, err := mc.newModel(t); err != nil { // the options are checked once, at start
		return fmt.Errorf("--model %s: %w", mc.Kind, err)
	}
	cfg.Wire = func(omni.Message) (host.Wiring, error) {
		m, err := mc.newModel(t)
		if err != nil {
			return host.Wiring{}, err
		}
		ws := playground.NewWorkspace(nil)
		ws.LineDelay = 0
		return host.Wiring{
			LLM:         m,
			NewLLM:      m.Factory(),
			Environment: ws,
			Tools:       ws.Tools(),
			Compaction:  &engine.Compaction{Mode: omni.ModeSummarize, Prompt: compactPrompt},
			MaxTurns:    16,
		}, nil
	}
	cfg.NewMeta = func(id string, now time.Time) omni.Message {
		m := server.NewMeta(id, now)
		r := m.Payload.Edit()
		r.Provider, r.ModelID, r.ModelContextWindow = mc.Kind, mc.ModelID, nil
		return m
	}
	return nil
}
