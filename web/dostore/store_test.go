//go:build js && wasm

package dostore_test

import (
	"context"
	"syscall/js"
	"testing"
	"time"

	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/engine/trace/tracetest"
	"github.com/floehq/floe/web/dostore"
	"github.com/floehq/floe/web/jsx"
)

// newSQL returns a fresh, empty SqlStorage. In Node, scripts/test-wasm.sh
// loads tests/dostore/sql.cjs (NODE_OPTIONS=--require), which serves
// Cloudflare's ctx.storage.sql API over sql.js.
func newSQL(t *testing.T) js.Value {
	t.Helper()
	p := js.Global().Get("floeSQLStorage")
	if !p.Truthy() {
		t.Skip("no floeSQLStorage in this JavaScript environment (run through scripts/test-wasm.sh)")
	}
	mk, err := jsx.Await(context.Background(), p)
	if err != nil {
		t.Fatalf("floeSQLStorage: %v", err)
	}
	return mk.Invoke()
}

func newStore(t *testing.T) *dostore.Store {
	t.Helper()
	s, err := dostore.New(newSQL(t), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStoreContract(t *testing.T) {
	tracetest.TestStore(t, func(t *testing.T) trace.Store { return newStore(t) })
}
