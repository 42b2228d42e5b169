//go:build !wasm

package trace_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/floehq/floe/engine/trace"
)

// Every function of the package that takes a Store refuses a nil one
// with an error wrapping ErrInvalid that names it, as NewWriter and
// NewBatcher do: each panicked on its first call of the Store (an
// embedder's store variable left unset).
func TestNilStoreIsAnError(t *testing.T) {
	ctx := context.Background()
	files := []trace.File{{Name: "2026-11-30/s1_001.jsonl", Data: []byte(metaLine + promptLine)}}
	calls := map[string]func() error{
		"Resume":     func() error { _, err := trace.Resume(ctx, nil, "s1", time.Now); return err },
		"Records":    func() error { _, err := trace.Records(ctx, nil, "s1"); return err },
		"History":    func() error { _, err := trace.History(ctx, nil, "s1"); return err },
		"Children":   func() error { _, err := trace.Children(ctx, nil, "s1"); return err },
		"List":       func() error { _, err := trace.List(ctx, nil); return err },
		"Export":     func() error { _, err := trace.Export(ctx, nil, "s1", time.UTC); return err },
		"ExportTree": func() error { _, err := trace.ExportTree(ctx, nil, "s1", time.UTC); return err },
		"Import":     func() error { _, err := trace.Import(ctx, nil, files); return err },
		"ImportTree": func() error { _, err := trace.ImportTree(ctx, nil, files); return err },
		"DeleteTree": func() error { return trace.DeleteTree(ctx, nil, "s1") },
	}
	for name, f := range calls {
		t.Run(name, func(t *testing.T) {
			var err error
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("panic: %v", p)
					}
				}()
				err = f()
			}()
			if !errors.Is(err, trace.ErrInvalid) || !strings.Contains(err.Error(), "the Store is nil") {
				t.Fatalf("err = %v, want ErrInvalid naming the nil Store", err)
			}
		})
	}
}
