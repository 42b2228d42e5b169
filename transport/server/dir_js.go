//go:build js && !floenode

package server

import "github.com/floehq/floe/engine/trace"

// dirStore: WebAssembly builds have no file system (FileStore is left out).
func dirStore(string) trace.Store { return nil }
