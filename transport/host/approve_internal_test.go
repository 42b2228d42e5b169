package host

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/transport"
)

// eventsSince returns the events h's channel published after the id
// since, as a client resuming from it reads them.
func eventsSince(t *testing.T, h *Host, since string) []transport.Received {
	t.Helper()
	sub, mode := h.channel().Subscribe(since, true, nil)
	defer sub.Close()
	if mode != transport.Hit {
		t.Fatalf("resuming from %s: %v, want a hit", since, mode)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Serve writes what is queued, then returns
	var b bytes.Buffer
	sub.Serve(ctx, &b, nil)
	var out []transport.Received
	rd := transport.NewReader(&b)
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Comment == "" {
			out = append(out, ev)
		}
	}
}

// A model may give a call the id of an earlier call of the run (a server
// that numbers its calls afresh each turn, a call cut off and made again).
// Each call's approval_request waits for its own tool_call, as the first's
// did (README, Approvals: it always follows its tool_call on the stream).
// The first, asked before its call was published, left the id marked as
// published, and so did a call the approval mode answered or one cut off
// (E-5.2: never asked about): the next call's request went out before its
// call.
func TestApprovalOfAReusedCallIDWaitsForItsCall(t *testing.T) {
	_, h, gate := gatedRun(t)
	defer close(gate)
	call := omni.ToolCallMsg("call_0", "write_file", `{"path":"main.go"}`)
	decided := make(chan engine.Decision, 1)
	// ask has the run's approver asked for call, as the engine does as
	// soon as the model's call is complete, and returns once it waits (or
	// has its answer, when the approval mode gives it).
	ask := func(pending int) {
		go func() {
			d, _ := h.approve(context.Background(), call)
			decided <- d
		}()
		for {
			h.mu.Lock()
			n := len(h.pending)
			h.mu.Unlock()
			if pending == 1 && n == 1 || pending == 0 && len(decided) == 1 {
				return
			}
			runtime.Gosched()
		}
	}
	relay := func(m omni.Message) { // the run's consumer publishes m
		h.mu.Lock()
		h.relay(&m, nil)
		h.mu.Unlock()
	}
	// The approval mode answers the first call, asked before it is
	// published; the second is cut off (never asked about).
	if err := h.SetMode(ModeAllowAll); err != nil {
		t.Fatal(err)
	}
	ask(0)
	if d := <-decided; d != omni.DecisionAllow {
		t.Fatalf("allow-all decided %q", d)
	}
	relay(call)
	cut := call
	cut.Payload.StopReason = omni.StatusFailed
	relay(cut)
	if err := h.SetMode(ModeAsk); err != nil {
		t.Fatal(err)
	}
	for turn := 1; turn <= 2; turn++ {
		since := h.channel().LastID()
		ask(1) // before the call reached the stream
		if evs := eventsSince(t, h, since); len(evs) != 0 {
			t.Fatalf("turn %d: before its tool_call was published the stream had %+v", turn, evs)
		}
		relay(call)
		evs := eventsSince(t, h, since)
		if len(evs) != 2 || evs[0].Name != "" || evs[1].Name != transport.EventServer || !bytes.Contains([]byte(evs[1].Data), []byte(`"type":"approval_request"`)) {
			t.Fatalf("turn %d: after its tool_call the stream had %+v, want the call and its approval_request", turn, evs)
		}
		if err := h.Approve("call_0", omni.DecisionAllow); err != nil {
			t.Fatal(err)
		}
		if d := <-decided; d != omni.DecisionAllow {
			t.Fatalf("turn %d: decided %q", turn, d)
		}
	}
}

// T-13: registering an approval for an id already pending resolves the
// old entry as deny; the new one waits for its own decision.
func TestApprovalOfAnIDAlreadyPendingDeniesTheOld(t *testing.T) {
	_, h, gate := gatedRun(t)
	defer close(gate)
	if err := h.SetMode(ModeAsk); err != nil {
		t.Fatal(err)
	}
	// Two subagents' calls (shown at once, each asked by its own run) of
	// one id: the case where two may be pending together.
	first, second := make(chan engine.Decision, 1), make(chan engine.Decision, 1)
	ask := func(origin string, out chan engine.Decision) {
		call := omni.ToolCallMsg("call_0", "write_file", `{}`)
		call.Origin = []string{origin}
		go func() {
			d, _ := h.approve(context.Background(), call)
			out <- d
		}()
		for {
			h.mu.Lock()
			n, last := len(h.pending), ""
			if n > 0 {
				last = h.pending[n-1].call.Origin[0]
			}
			h.mu.Unlock()
			if last == origin {
				return
			}
			runtime.Gosched()
		}
	}
	ask("child-a", first)
	ask("child-b", second)
	h.mu.Lock()
	n := len(h.pending)
	h.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d approvals pending for one id, want 1", n)
	}
	if d := <-first; d != omni.DecisionDeny {
		t.Fatalf("the entry registered first got %q, want deny", d)
	}
	if len(second) != 0 {
		t.Fatal("the entry registered again was answered without a decision")
	}
	if err := h.Approve("call_0", omni.DecisionAllow); err != nil {
		t.Fatal(err)
	}
	if d := <-second; d != omni.DecisionAllow {
		t.Fatalf("the entry registered again got %q, want the decision posted", d)
	}
	if err := h.Approve("call_0", omni.DecisionAllow); err == nil {
		t.Fatal("a third decision found an approval pending")
	}
}

// T-10: a connection's initial events are the task_state snapshot, then
// one approval_request per pending approval, oldest first.
func TestInitialEventsListPendingApprovalsOldestFirst(t *testing.T) {
	_, h, gate := gatedRun(t)
	defer close(gate)
	if err := h.SetMode(ModeAsk); err != nil {
		t.Fatal(err)
	}
	ids := []string{"call_b", "call_a", "call_c"} // asked in this order
	for i, id := range ids {
		call := omni.ToolCallMsg(id, "write_file", `{}`)
		call.Origin = []string{"child"} // a subagent's: shown at once
		go h.approve(context.Background(), call)
		for {
			h.mu.Lock()
			n := len(h.pending)
			h.mu.Unlock()
			if n == i+1 {
				break
			}
			runtime.Gosched()
		}
	}
	sub, _ := h.Subscribe("", false)
	defer sub.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var b bytes.Buffer
	sub.Serve(ctx, &b, nil)
	var got []string
	rd := transport.NewReader(&b)
	for {
		ev, err := rd.Next()
		if err != nil {
			break
		}
		got = append(got, ev.Data)
	}
	if len(got) != 4 || !bytes.Contains([]byte(got[0]), []byte(`"type":"task_state","state":"running"`)) {
		t.Fatalf("initial events %q, want the task_state snapshot then three approval_requests", got)
	}
	for i, id := range ids {
		if !bytes.Contains([]byte(got[i+1]), []byte(`"type":"approval_request"`)) || !bytes.Contains([]byte(got[i+1]), []byte(`"tool_call_id":"`+id+`"`)) {
			t.Fatalf("initial event %d is %s, want the approval_request of %s (oldest first)", i+1, got[i+1], id)
		}
	}
	for _, id := range ids {
		if err := h.Approve(id, omni.DecisionDeny); err != nil {
			t.Fatal(err)
		}
	}
}
