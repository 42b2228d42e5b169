//go:build js && wasm

package jsbridge

import (
	"fmt"
	"strings"
	"testing"

	"github.com/floehq/floe/engine/omni"
)

// A producer's batch reaches the engine through GenerateParams.EmitBatch
// in order, batchMsgs messages at most at a time, the rest when the batch
// ends, from a buffer that starts at firstBatchMsgs; without EmitBatch one
// message at a time.
func TestEmitterBatches(t *testing.T) {
	var batch strings.Builder
	for i := 0; i < 2*batchMsgs+5; i++ {
		body := fmt.Sprint(i)
		fmt.Fprintf(&batch, "Tda%d:%s0:", len(body), body)
	}
	var sizes []int
	var got []string
	e := emitter{batch: func(ms []omni.Message) {
		sizes = append(sizes, len(ms))
		for _, m := range ms {
			got = append(got, m.Payload.Text)
		}
	}}
	if err := eachRecordAt(batch.String(), nil, &e); err != nil {
		t.Fatal(err)
	}
	e.flush()
	if fmt.Sprint(sizes) != fmt.Sprint([]int{batchMsgs, batchMsgs, 5}) {
		t.Fatalf("batches of %v, want %d, %d and 5", sizes, batchMsgs, batchMsgs)
	}
	for i, s := range got {
		if s != fmt.Sprint(i) {
			t.Fatalf("message %d has body %q", i, s)
		}
	}
	if e.used != batchMsgs || len(e.buf) != 0 {
		t.Fatalf("used %d, %d left; want %d and none", e.used, len(e.buf), batchMsgs)
	}
	small := emitter{batch: func([]omni.Message) {}}
	if err := eachRecordAt("Tda1:a0:Tda1:b0:Tda1:c0:", nil, &small); err != nil || cap(small.buf) != firstBatchMsgs {
		t.Fatalf("a batch of three took a buffer of %d (%v), want %d", cap(small.buf), err, firstBatchMsgs)
	}
	var one []string
	e = emitter{emit: func(m omni.Message) { one = append(one, m.Payload.Text) }}
	if err := eachRecordAt("Tda1:a0:Tda1:b0:", nil, &e); err != nil || strings.Join(one, "") != "ab" || e.buf != nil {
		t.Fatalf("without EmitBatch: %q, %v, buffer %v", one, err, e.buf)
	}
}

// A session keeps the batch buffers of ended tool calls, up to
// maxToolBufs, emptied, and hands each to one call at a time.
func TestToolBufs(t *testing.T) {
	var e jsEnvironment
	if b := e.takeBuf(); b != nil {
		t.Fatalf("a new session has a buffer: %v", b)
	}
	e.putBuf(nil) // a call that emitted no batch keeps nothing
	for i := 0; i < maxToolBufs+2; i++ {
		e.putBuf(make([]omni.Message, 3, firstBatchMsgs))
	}
	seen := map[*omni.Message]bool{}
	for i := 0; i < maxToolBufs; i++ {
		b := e.takeBuf()
		if len(b) != 0 || cap(b) != firstBatchMsgs || seen[&b[:1][0]] {
			t.Fatalf("buffer %d: len %d, cap %d, handed out before %v", i, len(b), cap(b), seen[&b[:1][0]])
		}
		seen[&b[:1][0]] = true
	}
	if b := e.takeBuf(); b != nil {
		t.Fatalf("more than %d buffers kept", maxToolBufs)
	}
}
