package trace_test

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/enginetest"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

// runBytes returns the bytes allocated by one run of 100 streamed deltas
// in a session with the given id, traced through a Writer to a MemStore,
// reporting every diagnostic's text as a bridge would.
func runBytes(t *testing.T, id string) uint64 {
	t.Helper()
	deltas := make([]string, 100)
	for i := range deltas {
		deltas[i] = "x"
	}
	llm := enginetest.NewLLM(enginetest.Reply{Emit: enginetest.TextReply(1, deltas...)}, enginetest.Reply{Emit: enginetest.TextReply(1, deltas...)})
	s, err := engine.New(engine.Config{
		Meta: enginetest.Meta(id), LLM: llm, Clock: enginetest.NewClock(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)),
		Trace:        sinkOnly{trace.NewWriter(&trace.MemStore{}, id, 1)}, // engine.New refuses a Writer of a bad id: past it, the cost of each write
		OnDiagnostic: func(d engine.Diagnostic) { _ = d.Err.Error() },
	})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, prompt := range []string{"one", "two"} {
		seq, err := s.Run(context.Background(), []omni.Message{omni.UserText(prompt)}, engine.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for range seq {
		}
	}
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// sinkOnly is a TraceSink that hides the Writer's CheckSession.
type sinkOnly struct{ w *trace.Writer }

func (s sinkOnly) Write(ctx context.Context, m omni.Message) error { return s.w.Write(ctx, m) }
func (s sinkOnly) Rotate() error                                   { return s.w.Rotate() }

// The cost of a run grows with the session id's length per session, never
// per record: with a 1 MB id (invalid: it writes nothing, and every failed
// write is a diagnostic) a two-request run allocates well under 8 bytes
// per id byte more than with a 1-byte id (a cost per record, as before, was
// 150 per id byte: 160 MB).
func TestSessionIDCostPerSession(t *testing.T) {
	const n = 1 << 20
	short := runBytes(t, "s")
	long := runBytes(t, strings.Repeat("i", n))
	if extra := int64(long) - int64(short); extra > 8*n {
		t.Errorf("id of %d bytes: %d bytes allocated by the run, %d more than with a 1-byte id (per-record cost)", n, long, extra)
	}
}

// Writing a record to a Writer whose session id is invalid costs a few
// allocations whatever the id's length.
func TestWriterLongIDAllocs(t *testing.T) {
	m := omni.UserText("x")
	m.Timestamp = "2026-11-30T09:00:00.000Z"
	for _, n := range []int{300, 1 << 22} {
		w := trace.NewWriter(&trace.MemStore{}, strings.Repeat("i", n), 1)
		var msgBytes int
		allocs := testing.AllocsPerRun(100, func() {
			err := w.Write(context.Background(), m)
			msgBytes = len(err.Error())
		})
		if allocs > 8 || msgBytes > 300 {
			t.Errorf("id of %d bytes: %.0f allocations per write, a %d-byte error", n, allocs, msgBytes)
		}
	}
}

func BenchmarkWriteLongSessionID(b *testing.B) {
	m := omni.UserText("x")
	m.Timestamp = "2026-11-30T09:00:00.000Z"
	for _, n := range []int{16, 200} {
		b.Run(strconv.Itoa(n)+"B", func(b *testing.B) {
			w := trace.NewWriter(&trace.MemStore{}, strings.Repeat("i", n), 1)
			b.ReportAllocs()
			for b.Loop() {
				if err := w.Write(context.Background(), m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
