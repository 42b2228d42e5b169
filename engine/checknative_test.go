//go:build !wasm

package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/enginetest"
	"github.com/floehq/floe/engine/omni"
)

type nilModel struct{}

func (*nilModel) StreamGenerate(context.Context, engine.GenerateParams, func(omni.Message)) engine.Outcome {
	return engine.Outcome{Status: omni.StatusCompleted}
}

type nilClock struct{ t time.Time }

func (c *nilClock) Now() time.Time                                  { return c.t }
func (c *nilClock) Sleep(ctx context.Context, d time.Duration) bool { return true }

// engine.New refuses a model, an environment or a clock that is a nil
// pointer or function in a non-nil interface, naming the field and the
// type: before, every request panicked, was recovered as a failure and
// retried until the run gave up. (The WebAssembly build leaves the check
// out: engine/checktrace_wasm.go.)
func TestNewRefusesTypedNil(t *testing.T) {
	llm := enginetest.NewLLM()
	for _, tc := range []struct {
		cfg  engine.Config
		says string
	}{
		{engine.Config{LLM: engine.LLMFunc(nil)}, "engine: Config.LLM is a nil engine.LLMFunc"},
		{engine.Config{LLM: (*nilModel)(nil)}, "engine: Config.LLM is a nil *engine_test.nilModel"},
		{engine.Config{LLM: llm, Environment: engine.EnvironmentFunc(nil)}, "engine: Config.Environment is a nil engine.EnvironmentFunc"},
		{engine.Config{LLM: llm, Clock: (*nilClock)(nil)}, "engine: Config.Clock is a nil *engine_test.nilClock"},
	} {
		tc.cfg.Meta = enginetest.Meta("s")
		if _, err := engine.New(tc.cfg); err == nil || err.Error() != tc.says {
			t.Errorf("New = %v, want %q", err, tc.says)
		}
	}
	if _, err := engine.New(engine.Config{Meta: enginetest.Meta("s"), LLM: &nilModel{}, Clock: &nilClock{}}); err != nil {
		t.Errorf("non-nil pointers: %v", err)
	}
}
