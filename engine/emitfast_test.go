package engine

import (
	"context"
	"testing"
	"time"

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
	at := time.Date(2026, 7, 18, 3, 10, 22, 531e6, time.UTC)
	d := &driver{r: &run{s: &Session{clock: fixedClock{at}}}, q: q, fast: true}
	q.Register(&d.prod)
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
	if err != nil || len(got) != 2 || got[0].Msg.Payload.EventType != omni.EventStart || got[1].Msg.Payload.Text != "hi" {
		t.Fatalf("queued %d items (%v), want the start and the delta", len(got), err)
	}
	for _, it := range got { // stamped as queued, not when the consumer reads them
		if it.Msg.Timestamp != "2026-07-18T03:10:22.531Z" {
			t.Fatalf("a fragment queued with timestamp %q, want the clock's time", it.Msg.Timestamp)
		}
	}
}

// fixedClock is a Clock that always reads t.
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time                                  { return c.t }
func (c fixedClock) Sleep(ctx context.Context, _ time.Duration) bool { return ctx.Err() == nil }
