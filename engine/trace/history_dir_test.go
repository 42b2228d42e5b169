//go:build !js || floenode

package trace_test

import (
	"testing"

	"github.com/floehq/floe/engine/trace"
)

// dirStores returns a FileStore in a fresh directory, where there is one.
func dirStores(t *testing.T) []trace.Store {
	return []trace.Store{trace.NewFileStore(t.TempDir(), trace.FileStoreOptions{})}
}
