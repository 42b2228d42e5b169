package main

import (
	"fmt"
	"strings"

	"github.com/floehq/floe/provider/nethttp"
	"github.com/floehq/floe/transport/server"
)

// modelFlags checks the model flags (server.ParseModel, with the flags'
// names in its errors: a flag's, or its variable's when its value came
// from there). A setting not given (--model-id, required) is named as a
// flag, or, when the model came from FLOE_MODEL, as its variable and its
// flag: the operator sets the model so. set reports which flags were
// given; getenv reads the environment (the key never comes from a flag
// value, which any user could read in the process list).
func modelFlags(kind, modelID, baseURL, keyEnv, system, window, idle, gemini, imageBytes, images, noImages, opened string, set, fromEnv map[string]bool, getenv func(string) string) (server.ModelConfig, error) {
	flag := func(name, value string) server.Setting {
		if fromEnv[name] {
			return server.Setting{Name: envName(name), Value: value, Set: true}
		}
		if !set[name] && fromEnv["model"] {
			return server.Setting{Name: envName(name) + " or --" + name, Value: value}
		}
		return server.Setting{Name: "--" + name, Value: value, Set: set[name]}
	}
	return server.ParseModel(server.ModelSettings{
		Model:            flag("model", kind),
		ModelID:          flag("model-id", modelID),
		BaseURL:          flag("base-url", baseURL),
		APIKeyEnv:        flag("api-key-env", keyEnv),
		Delay:            flag("delay", ""),
		System:           flag("system", system),
		ContextWindow:    flag("context-window", window),
		IdleTimeout:      flag("idle-timeout", idle),
		Gemini:           flag("gemini", gemini),
		MaxImageBytes:    flag("max-image-bytes", imageBytes),
		MaxImages:        flag("max-images", images),
		NoImages:         flag("no-images", noImages),
		StartsInThinking: flag("starts-in-thinking", opened),
		Assign: func(name, value string) string {
			if strings.HasPrefix(name, "FLOE_") {
				return name + "=" + value
			}
			return name + " " + value
		},
		Getenv:    getenv,
		KeySource: "the environment variable",
	})
}

// applyModel wires cfg's sessions to mc, a provider model over net/http;
// model names the setting that chose it ("--model openai",
// "FLOE_MODEL=openai").
func applyModel(mc server.ModelConfig, cfg *server.Config, model string) error {
	if err := mc.Apply(cfg, nethttp.New(nil)); err != nil {
		return fmt.Errorf("%s: %w", model, err)
	}
	return nil
}
