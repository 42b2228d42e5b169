//go:build js && wasm && floenode

// Command floe-node is the WebAssembly library floe.mjs loads in Node: the
// browser build (wasm/floe) with directory stores in place of IndexedDB.
// Go's file system calls go through Node's fs there; the browser build
// leaves them out (size). Build it with -tags floenode. It only wires,
// like wasm/floe.
package main

import (
	"syscall"
	"syscall/js"
	"time"

	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/jsbridge"
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
	b.UseDirectories(func(dir string) trace.Store {
		// The reference layout, dated in local time (PROTOCOL.md P-11).
		return trace.NewFileStore(dir, trace.FileStoreOptions{Now: time.Now})
	})
	api := b.Exports()
	if cb := js.Global().Get(ready); cb.Type() == js.TypeFunction {
		cb.Invoke(api)
	} else {
		js.Global().Set(ready, api)
	}
	select {}
}
