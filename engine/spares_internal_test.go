package engine

import (
	"testing"

	"github.com/floehq/floe/engine/omni"
)

// A finished run's merge-queue buffers are pooled cleared: what their stale
// items held (a long text, a tool's output) is not kept alive by the pool.
func TestSparesPutCleared(t *testing.T) {
	b := make([]item, 3, 8)
	b[2].Msg = omni.AssistantText("stale", omni.StatusCompleted)
	b[2].Bits = traceOnly
	s := [2][]item{nil, b}
	putSpares(&s)
	if s[0] != nil || s[1] != nil {
		t.Fatal("putSpares left the run its buffers")
	}
	for i, it := range b[:cap(b)] {
		if it.Msg.Type != "" || it.Msg.Payload.Text != "" || it.Bits != 0 {
			t.Fatalf("slot %d still holds %+v", i, it)
		}
	}
	empty := [2][]item{}
	putSpares(&empty) // nothing to keep: nothing pooled, no panic
}

// TakeSparesForTest takes what the pool of spare buffers holds, for the
// external test below: whether it holds any, and whether any slot of them
// is not cleared (a buffer's marker, below, is not a run's stale item).
func TakeSparesForTest() (some, stale bool) {
	got := takeSpares()
	for _, b := range got {
		if b != nil {
			some = true
		}
		for _, it := range b[:cap(b)] {
			stale = stale || it.Msg.Type != "" && it.Msg.Type != spareMarker
		}
	}
	return some, stale
}

// PutSpareForTest pools a buffer of n items, as a finished run would, with
// a marker in its last slot (written after putSpares cleared it), and
// returns a check: whether takeSpares now gives that buffer back with the
// marker cleared, which only a run that took it, queued in it and pooled
// it again at its end does (a buffer nobody took comes back marked).
func PutSpareForTest(n int) (reused func() bool) {
	b := make([]item, n)
	putSpares(&[2][]item{b})
	b[n-1].Msg.Type = spareMarker
	return func() bool {
		for _, got := range takeSpares() {
			if cap(got) == n && &got[:1][0] == &b[0] {
				return got[:n][n-1].Msg.Type == ""
			}
		}
		return false
	}
}

// spareMarker marks a buffer PutSpareForTest pooled. One that no run took
// stays in the pool marked, where a later test may find it.
const spareMarker = "marker"

// PoolSpares reports whether this build pools a finished run's queue
// buffers (natively).
const PoolSpares = poolSpares
