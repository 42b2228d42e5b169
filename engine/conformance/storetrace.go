package conformance

import (
	"context"
	"errors"
	"fmt"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

// TraceStorer is implemented by trace sinks that write to a [trace.Store]:
// the resume check ([Options.Resume]) resumes each session from the store
// its sink wrote.
type TraceStorer interface {
	Store() trace.Store
	SessionID() string
}

// StoreTrace is an [engine.TraceSink] that writes one session's Trace
// through a [trace.Writer] to a [trace.Store], and reads it back as a
// [TraceReader]. Unlike [MemoryTrace] it follows the store's rules: a
// rotation creates no file until the next write (ENGINE.md E-13.11), and a
// record the Writer refuses (unstamped, not recordable) is an error.
type StoreTrace struct {
	*trace.Writer
	store trace.Store
}

var (
	_ engine.TraceSink = (*StoreTrace)(nil)
	_ TraceReader      = (*StoreTrace)(nil)
	_ TraceStorer      = (*StoreTrace)(nil)
)

// NewStoreTrace returns a sink that writes session sessionID to store,
// starting at file 1.
func NewStoreTrace(store trace.Store, sessionID string) *StoreTrace {
	return &StoreTrace{Writer: trace.NewWriter(store, sessionID, 1), store: store}
}

// Store returns the store the sink writes to.
func (t *StoreTrace) Store() trace.Store { return t.store }

// Files reads every file of the session back from the store, file 1 first;
// an index the store does not have (a rotation nothing was written after)
// reads as an empty file. A record the reader skipped is an error: the
// runner's own writes are never torn.
func (t *StoreTrace) Files() ([][]omni.Message, error) {
	ctx := context.Background()
	id := t.SessionID()
	infos, err := t.store.Files(ctx, id)
	if errors.Is(err, trace.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out [][]omni.Message
	for _, fi := range infos {
		for len(out) < fi.Index-1 {
			out = append(out, []omni.Message{})
		}
		data, err := t.store.ReadFile(ctx, id, fi.Index)
		if err != nil {
			return nil, err
		}
		p, err := trace.ReadFile(data)
		if err != nil {
			return nil, err
		}
		if p.TornTail || len(p.Skipped) > 0 {
			return nil, fmt.Errorf("file %d: %d malformed line(s), torn tail %t", fi.Index, len(p.Skipped), p.TornTail)
		}
		out = append(out, p.Records)
	}
	return out, nil
}
