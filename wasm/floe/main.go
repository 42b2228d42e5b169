//go:build js && wasm

// Command floe is the WebAssembly library loaded by static/floe.mjs. It only
// wires: it registers the bridge's exports and hands them to the loader,
// then blocks so that the exports stay callable.
package main

import (
	"github.com/floehq/floe/jsbridge"
	"github.com/floehq/floe/web/idb"
)

func main() {
	b := jsbridge.New()
	b.UseIndexedDB(idb.New("floe")) // one database per origin
	b.Announce()
	select {}
}
