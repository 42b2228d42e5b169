//go:build js && wasm

package jsbridge

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/floehq/floe/engine/omni"
)

// TestStreamBatchBuffer: a stream reuses its batch buffer from pull to
// pull, but does not keep one that a long message grew past maxKeptBatch
// (a run's long complete text would otherwise hold that memory for the
// rest of the run).
func TestStreamBatchBuffer(t *testing.T) {
	text := func(body string) omni.Message {
		return omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.Text, Role: omni.RoleAssistant, Text: body, StopReason: omni.StatusCompleted}}
	}
	batches := [][]omni.Message{
		{text("a"), text("b")},
		{text("c")},
		{text(strings.Repeat("x", maxKeptBatch+1))},
		{text("d")},
	}
	s := newStream()
	ended := false
	s.stop, s.cancel = func() {}, func(error) { ended = true }
	s.nextEach = func(_ int, f func(*omni.Message)) bool {
		if len(batches) == 0 {
			return false
		}
		for i := range batches[0] {
			f(&batches[0][i])
		}
		batches = batches[1:]
		return true
	}
	pull := func() []byte {
		t.Helper()
		b, ok := s.pullBatch(false)
		if !ok {
			t.Fatal("the stream ended early")
		}
		return b
	}
	first := pull()
	if second := pull(); unsafe.SliceData(second) != unsafe.SliceData(first) {
		t.Fatal("a short batch did not reuse the stream's buffer")
	}
	if long := pull(); len(long) <= maxKeptBatch {
		t.Fatalf("the long batch has %d bytes", len(long))
	}
	if s.buf != nil {
		t.Fatalf("the stream keeps a buffer of %d bytes after a long batch", cap(s.buf))
	}
	if b := pull(); !strings.Contains(string(b), "1:d") {
		t.Fatalf("the batch after the long one: %q", b)
	}
	if _, ok := s.pullBatch(false); ok || !ended {
		t.Fatal("the stream did not end")
	}
}
