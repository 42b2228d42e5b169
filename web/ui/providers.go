//go:build js && wasm

package ui

import (
	"errors"

	"github.com/floehq/floe/engine"
)

// newProviderLLM returns the model of a real provider. This build carries
// no provider adapter yet, so every provider but the scripted demo is
// refused with a message saying so.
func newProviderLLM(s Settings) (engine.LLM, engine.LLMFactory, error) {
	return nil, nil, errors.New(providerNames[s.Provider] + " is not available in this build yet: the scripted demo is used.")
}
