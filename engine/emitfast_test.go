package engine

import (
	"context"
	"testing"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/mergequeue"
)

// emit's fast path takes a well-formed fragment of the LLM's own without
// the driver's lock (held here throughout: a fast path that took it would
// block), and hands everything else to the slow path untouched: a complete
// message, a fragment that fails the discipline (nothing queued, the
// checker as it was), any fragment while the fast path is off.
func TestEmitFastTakesNoDriverLock(t *testing.T) {
	q := mergequeue.New[item](8)
	d := &driver{q: q, prod: q.NewProducer(), fast: true}
	d.mu.Lock()
	defer d.mu.Unlock()
	frag := func(ev, body string) *omni.Message {
		m := omni.Partial(omni.PartialText, ev, body, "", "", omni.StatusCompleted)
		return &m
	}
	if !d.emitFast(frag(omni.EventStart, "")) || !d.emitFast(frag(omni.EventDelta, "hi")) {
		t.Fatal("the fast path refused a well-formed fragment")
	}
	text := omni.AssistantText("hi", omni.StatusCompleted)
	if d.emitFast(&text) {
		t.Fatal("the fast path took a complete message")
	}
	thinking := omni.Partial(omni.PartialThinking, omni.EventDelta, "x", "", "", omni.StatusCompleted)
	if d.emitFast(&thinking) { // a delta without its start: the slow path refuses it
		t.Fatal("the fast path took a fragment the discipline refuses")
	}
	d.fast = false // as the slow path leaves it while it runs (under both locks there)
	if d.emitFast(frag(omni.EventDelta, "!")) {
		t.Fatal("the fast path took a fragment while off")
	}
	d.fast = true
	if err := d.check.Try(frag(omni.EventStop, "")); err != nil { // the checker saw start and delta only
		t.Fatalf("the checker after the fast path: %v", err)
	}
	got, err := q.Swap(context.Background(), nil)
	if err != nil || len(got) != 2 || got[0].m.Payload.EventType != omni.EventStart || got[1].m.Payload.Text != "hi" {
		t.Fatalf("queued %d items (%v), want the start and the delta", len(got), err)
	}
}
