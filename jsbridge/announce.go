//go:build js && wasm

package jsbridge

import (
	"syscall"
	"syscall/js"
)

// Announce hands the exports to the loader (the readiness signal floe.mjs
// awaits): it calls the global callback named by the environment variable
// FLOE_READY (set through go.env; not os.Args, since the os package alone
// costs the build 16 KB brotli), or, without one, sets the exports as
// globalThis.__floeReady.
func (b *Bridge) Announce() {
	ready := "__floeReady"
	if name, ok := syscall.Getenv("FLOE_READY"); ok && name != "" {
		ready = name
	}
	api := b.Exports()
	if cb := js.Global().Get(ready); cb.Type() == js.TypeFunction {
		cb.Invoke(api)
	} else {
		js.Global().Set(ready, api)
	}
}
