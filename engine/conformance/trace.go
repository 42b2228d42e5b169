package conformance

import (
	"context"
	"slices"
	"sync"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// TraceReader is implemented by trace sinks whose content the runner can
// read back after a scenario: every file the sink received, file 1 first.
// A sink returned by [Options.TraceFor] must implement it for the trace
// expectation to be checked.
type TraceReader interface {
	Files() ([][]omni.Message, error)
}

// MemoryTrace is an in-memory [engine.TraceSink] and [TraceReader]. Files
// follow FORMAT §8 literally: the first Write opens file 1 and each Rotate
// opens the next file at once, so a rotation that is never followed by a
// Write shows up as an empty file (ENGINE.md E-13.11 says none may appear).
// The zero value is ready to use; it is safe for concurrent use.
type MemoryTrace struct {
	mu    sync.Mutex
	files [][]omni.Message
	cur   int // 0-based index of the file the next Write goes to
}

var (
	_ engine.TraceSink = (*MemoryTrace)(nil)
	_ TraceReader      = (*MemoryTrace)(nil)
)

// Write appends msg to the current file.
func (t *MemoryTrace) Write(_ context.Context, msg omni.Message) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.open()
	t.files[t.cur] = append(t.files[t.cur], msg)
	return nil
}

// Rotate makes the next Write go to the next file.
func (t *MemoryTrace) Rotate() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cur++
	t.open()
	return nil
}

// open makes sure the current file, and every file before it, exists.
func (t *MemoryTrace) open() {
	for len(t.files) <= t.cur {
		t.files = append(t.files, []omni.Message{})
	}
}

// Files returns a copy of every file opened so far, file 1 first.
func (t *MemoryTrace) Files() ([][]omni.Message, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([][]omni.Message, len(t.files))
	for i, f := range t.files {
		out[i] = slices.Clone(f)
	}
	return out, nil
}
