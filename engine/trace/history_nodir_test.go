//go:build js && !floenode

package trace_test

import (
	"testing"

	"github.com/floehq/floe/engine/trace"
)

// dirStores returns no store: the browser build has no FileStore.
func dirStores(t *testing.T) []trace.Store { return nil }
