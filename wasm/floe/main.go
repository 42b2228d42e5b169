//go:build js && wasm

// Command floe is the WebAssembly library loaded by static/floe.mjs. It only
// wires: it registers the bridge's exports and hands them to the loader,
// then blocks so that the exports stay callable.
package main

import (
	"syscall"
	"syscall/js"

	"github.com/floehq/floe/jsbridge"
	"github.com/floehq/floe/web/idb"
)

func main() {
	// The loader names a global callback in the environment variable
	// FLOE_READY (not os.Args: the os package alone costs the build 16 KB
	// brotli); it receives the exports object (readiness signal).
	ready := "__floeReady"
	if name, ok := syscall.Getenv("FLOE_READY"); ok && name != "" {
		ready = name
	}
	b := jsbridge.New()
	b.UseIndexedDB(idb.New("floe")) // one database per origin
	api := b.Exports()
	if cb := js.Global().Get(ready); cb.Type() == js.TypeFunction {
		cb.Invoke(api)
	} else {
		js.Global().Set(ready, api)
	}
	select {}
}
