//go:build !js || floenode

package server

import "github.com/floehq/floe/engine/trace"

func dirStore(dir string) trace.Store { return trace.NewFileStore(dir, trace.FileStoreOptions{}) }
