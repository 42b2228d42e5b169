//go:build js && wasm

// Command playground is the offline demo page: the real engine with a
// scripted model and an in-memory workspace, rendered by package web/ui.
// Build it with scripts/build.sh; serve it with ./build.sh serve.
package main

import (
	"context"
	"syscall/js"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/playground"
	"github.com/floehq/floe/web/ui"
)

func main() {
	if !js.Global().Get("document").Truthy() {
		println("playground: needs a page with a document")
		return
	}
	console := js.Global().Get("console")
	newSession := func() (*engine.Session, error) {
		return playground.NewSession(playground.RealTime, func(d engine.Diagnostic) {
			console.Call("warn", "floe diagnostic ("+string(d.Kind)+"): "+d.Err.Error())
		})
	}
	app := ui.New(js.Global().Get("document"), newSession)
	app.Run(context.Background())
}
