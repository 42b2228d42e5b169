//go:build js && wasm

package jsbridge

import "testing"

// A removed waiter's channel serves the next waiter empty, and a reply
// for the removed id never reaches it.
func TestWaitersReuseChannels(t *testing.T) {
	var w waiters
	id1, ch1 := w.add()
	if !w.send(id1, reply{json: "first"}) {
		t.Fatal("send to a live waiter failed")
	}
	w.remove(id1) // its reply unread
	id2, ch2 := w.add()
	if ch2 != ch1 {
		t.Fatal("the removed waiter's channel was not reused")
	}
	if len(ch2) != 0 {
		t.Fatalf("the reused channel holds %d replies, want none", len(ch2))
	}
	if w.send(id1, reply{json: "late"}) {
		t.Error("a reply for a removed id was accepted")
	}
	if len(ch2) != 0 {
		t.Fatal("a reply for a removed id reached the channel's next waiter")
	}
	if !w.send(id2, reply{json: "second"}) {
		t.Fatal("send to the new waiter failed")
	}
	if w.send(id2, reply{json: "third"}) {
		t.Error("a second reply to one waiter was accepted")
	}
	if r := <-ch2; r.json != "second" {
		t.Fatalf("got %q, want the new waiter's reply", r.json)
	}
	w.remove(id2)
	w.remove(id2) // twice: nothing more is kept
	if len(w.free) != 1 {
		t.Fatalf("%d channels kept, want 1", len(w.free))
	}

	// At most maxFreeWaiters are kept.
	ids := make([]int, 3*maxFreeWaiters)
	for i := range ids {
		ids[i], _ = w.add()
	}
	for _, id := range ids {
		w.remove(id)
	}
	if len(w.free) != maxFreeWaiters || len(w.m) != 0 {
		t.Fatalf("%d channels kept and %d waiters left, want %d and 0", len(w.free), len(w.m), maxFreeWaiters)
	}
}
