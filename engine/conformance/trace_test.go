package conformance

import (
	"context"
	"testing"

	"github.com/floehq/floe/engine/omni"
)

func TestMemoryTrace(t *testing.T) {
	t.Parallel()
	a, b, c := omni.RequestBeginMsg(), omni.AbortMsg("x"), omni.SubagentMsg("s")
	tests := []struct {
		name  string
		ops   []any // omni.Message = Write, "rotate" = Rotate
		sizes []int // records per file
	}{
		{"nothing", nil, []int{}},
		{"one file", []any{a, b}, []int{2}},
		{"rotate then write", []any{a, "rotate", b, c}, []int{1, 2}},
		{"rotate opens the next file", []any{a, "rotate"}, []int{1, 0}},
		{"double rotate", []any{a, "rotate", "rotate", b}, []int{1, 0, 1}},
		{"rotate before any write", []any{"rotate", a}, []int{0, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var tr MemoryTrace
			for _, op := range tc.ops {
				if m, ok := op.(omni.Message); ok {
					if err := tr.Write(context.Background(), m); err != nil {
						t.Fatal(err)
					}
				} else if err := tr.Rotate(); err != nil {
					t.Fatal(err)
				}
			}
			files, err := tr.Files()
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != len(tc.sizes) {
				t.Fatalf("files = %d, want %d", len(files), len(tc.sizes))
			}
			for i, f := range files {
				if len(f) != tc.sizes[i] {
					t.Errorf("file %d: %d records, want %d", i+1, len(f), tc.sizes[i])
				}
			}
		})
	}
}
