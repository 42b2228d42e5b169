package playground

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/floehq/floe/engine/omni"
)

// A fragment grows its body in a buffer: a long reply's allocations are
// linear in its length. Adding each chunk to a string allocated about
// n²/2 bytes: 2 GB for this reply of 200 KB in 20,000 chunks, against
// about 1 MB with the buffer.
func TestFragmentLinear(t *testing.T) {
	chunks := make([]string, 20000)
	for i := range chunks {
		chunks[i] = "lorem ips "
	}
	var got string
	p := &producer{now: func() time.Time { return time.Time{} }, emit: func(m omni.Message) {
		if !m.IsPartial() {
			got = m.Payload.Text
		}
	}}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	p.fragment(context.Background(), omni.PartialText, "", "", chunks, nil, func(body, stop string) omni.Message { return omni.AssistantText(body, stop) })
	runtime.ReadMemStats(&after)
	if len(got) != 200000 {
		t.Fatalf("the complete message has %d bytes, want 200000", len(got))
	}
	if b := after.TotalAlloc - before.TotalAlloc; b > 64<<20 {
		t.Errorf("streaming 200 KB in 20,000 chunks allocated %d MB", b>>20)
	}
}
