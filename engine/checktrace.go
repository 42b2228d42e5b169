//go:build !wasm

package engine

import "github.com/floehq/floe/internal/errf"

// checkTrace asks a sink that can tell it could only fail (trace.Writer: a
// nil one, an id that cannot name Trace files, another session's) to say
// so when the session is made, rather than in a diagnostic at every write.
// The WebAssembly build leaves it out (2 KB of floe.wasm): its sessions are
// made by the bridge, which checks the id first.
func checkTrace(cfg Config) error {
	if c, ok := cfg.Trace.(interface{ CheckSession(string) error }); ok {
		if err := c.CheckSession(cfg.Meta.Payload.SessionID()); err != nil {
			return errf.Errorf("engine: Config.Trace: %w", err)
		}
	}
	return nil
}
