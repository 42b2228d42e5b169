//go:build !wasm

package engine

import (
	"reflect"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/internal/errf"
)

// checkTrace refuses what the session could only fail with: a model, an
// environment, a clock or a timer that is a nil pointer or a nil function
// in a non-nil interface (an LLMFunc(nil), a nil *Model: every request
// panicked, was recovered as a failure and retried), and a sink that can
// tell it could only fail (trace.Writer: a nil one, one with no Store, an
// id that cannot name Trace files, another session's) — when the session
// is made, rather than in a diagnostic at every call. It refuses a new
// session's Meta that PROTOCOL.md §2 refuses (no provider, no model_id:
// traced as the first record of a Trace the reference does not read); a
// resumed session (Resume set) keeps its Trace's, which an earlier New
// may have written without them. The WebAssembly build leaves it out (2
// KB of floe.wasm): its sessions are made by the bridge, which passes
// none of these and checks the meta (trace.ParseMeta) and the id first.
func checkTrace(cfg Config) error {
	if cfg.Resume == nil {
		if err := omni.Validate(cfg.Meta); err != nil {
			return errf.Errorf("engine: Config.Meta: %w (PROTOCOL.md §2 requires it of a new session)", err)
		}
	}
	for _, f := range []struct {
		name string
		v    any
	}{{"LLM", cfg.LLM}, {"Environment", cfg.Environment}, {"Clock", cfg.Clock}, {"Timer", cfg.Timer}} {
		if v := reflect.ValueOf(f.v); (v.Kind() == reflect.Pointer || v.Kind() == reflect.Func) && v.IsNil() {
			return errf.Errorf("engine: Config.%s is a nil %s", f.name, v.Type())
		}
	}
	if c, ok := cfg.Trace.(interface{ CheckSession(string) error }); ok {
		if err := c.CheckSession(cfg.Meta.Payload.SessionID()); err != nil {
			return errf.Errorf("engine: Config.Trace: %w", err)
		}
	}
	return nil
}
