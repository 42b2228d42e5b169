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
// is not cleared.
func TakeSparesForTest() (some, stale bool) {
	got := takeSpares()
	for _, b := range got {
		if b != nil {
			some = true
		}
		for _, it := range b[:cap(b)] {
			stale = stale || it.Msg.Type != ""
		}
	}
	return some, stale
}

// FastEmit reports whether this build has emit's fast path (natively).
const FastEmit = fastEmit
