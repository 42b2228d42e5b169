//go:build !js || floenode

package trace_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/floehq/floe/engine/trace"
)

// heapStore is a MemStore whose ReadParts measures the live heap at every
// tenth part.
type heapStore struct {
	trace.MemStore
	parts int
	live  uint64 // the most seen
}

func (s *heapStore) ReadParts(ctx context.Context, id string, index int, part func([]byte) error) error {
	return s.MemStore.ReadParts(ctx, id, index, func(p []byte) error {
		if s.parts++; s.parts%10 == 0 {
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			s.live = max(s.live, ms.HeapAlloc)
		}
		return part(p)
	})
}

// Resume reads a file a part at a time and replays each record as its line
// ends: while it reads, it holds the history so far and a part, not the
// file and its records (read whole, the file, the records and the history
// were about 2.6 times the file at the end), and it allocates about three
// times the file in all (4.6 when the history grew by appends).
func TestResumeHoldsTheHistoryNotTheFile(t *testing.T) {
	ctx := context.Background()
	data := longTrace(5000)
	store := &heapStore{}
	if err := store.Create(ctx, longID, [][]byte{data}); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, err := trace.Resume(ctx, store, longID, fixedNow)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	size := uint64(len(data))
	if store.parts < 50 {
		t.Fatalf("a file of %d bytes read in %d parts", size, store.parts)
	}
	if n := store.live - before.HeapAlloc; 5*n > 6*size {
		t.Errorf("Resume of a %d-byte file held %d bytes as it read; want under 1.2 times the file", size, n)
	}
	if n := after.TotalAlloc - before.TotalAlloc; 2*n > 7*size {
		t.Errorf("Resume of a %d-byte file allocated %d bytes; want under 3.5 times the file", size, n)
	}
	t.Logf("file %d, live %d (%.2f), allocated %d (%.2f)", size, store.live-before.HeapAlloc, float64(store.live-before.HeapAlloc)/float64(size), after.TotalAlloc-before.TotalAlloc, float64(after.TotalAlloc-before.TotalAlloc)/float64(size))
	runtime.KeepAlive(res)
}

// BenchmarkResumeLong resumes a session of 20,000 turns (a 23 MB Trace)
// from a memory store and from a directory (read a part at a time), and
// reports the heap at its peak, sampled every millisecond, above the heap
// before (peak-MB), and what the Resumed holds (kept-MB).
func BenchmarkResumeLong(b *testing.B) {
	ctx := context.Background()
	data := longTrace(20000)
	for _, c := range []struct {
		name  string
		store trace.Store
	}{{"mem", &trace.MemStore{}}, {"dir", trace.NewFileStore(b.TempDir(), trace.FileStoreOptions{})}} {
		if err := c.store.Create(ctx, longID, [][]byte{data}); err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			var peak, kept float64
			for b.Loop() {
				b.StopTimer()
				runtime.GC()
				var before, ms runtime.MemStats
				runtime.ReadMemStats(&before)
				top := make(chan uint64)
				stop := make(chan struct{})
				go func() {
					high := uint64(0)
					tick := time.NewTicker(time.Millisecond)
					defer tick.Stop()
					for {
						runtime.ReadMemStats(&ms)
						high = max(high, ms.HeapAlloc)
						select {
						case <-stop:
							top <- high
							return
						case <-tick.C:
						}
					}
				}()
				b.StartTimer()
				res, err := trace.Resume(ctx, c.store, longID, fixedNow)
				b.StopTimer()
				close(stop)
				high := <-top
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				runtime.ReadMemStats(&ms)
				runtime.KeepAlive(res)
				peak += float64(high-before.HeapAlloc) / (1 << 20)
				kept += float64(int64(ms.HeapAlloc)-int64(before.HeapAlloc)) / (1 << 20)
				b.StartTimer()
			}
			b.ReportMetric(peak/float64(b.N), "peak-MB")
			b.ReportMetric(kept/float64(b.N), "kept-MB")
		})
	}
}
