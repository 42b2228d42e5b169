//go:build js && wasm && floenode

// Command floe-node is the WebAssembly library floe.mjs loads in Node: the
// browser build (wasm/floe) with directory stores in place of IndexedDB.
// Go's file system calls go through Node's fs there; the browser build
// leaves them out (size). Build it with -tags floenode. It only wires,
// like wasm/floe.
package main

import (
	"time"

	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/jsbridge"
)

func main() {
	b := jsbridge.New()
	b.UseDirectories(func(dir string) trace.Store {
		// The reference layout, dated in local time (PROTOCOL.md P-11).
		// Held: the lock file of a session's run, held by floe-node.mjs.
		return trace.NewFileStore(dir, trace.FileStoreOptions{Now: time.Now, Held: b.DirLockHeld(dir)})
	})
	b.Announce()
	select {}
}
