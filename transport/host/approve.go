package host

import (
	"context"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/transport"
)

// approve is the runs' approver (T-13): the approval mode answers, or a
// pending entry waits for Approve (or the abort) with no timeout.
func (h *Host) approve(ctx context.Context, call omni.Message) (engine.Decision, error) {
	h.mu.Lock()
	id := call.Payload.ToolCallID
	nth := 0
	if len(call.Origin) == 0 && h.calls != nil {
		// Counted whatever answers it: the approval mode's answers too, so
		// that a later call of the same id waits for its own tool_call.
		n := h.count(id)
		n.asked++
		nth = n.asked
	}
	switch h.mode {
	case ModeAllowAll:
		h.mu.Unlock()
		return omni.DecisionAllow, nil
	case ModeDenyAll:
		h.mu.Unlock()
		return omni.DecisionDeny, nil
	case ModeReadOnly:
		if ro := h.reg.cfg.ReadOnly; ro != nil && ro(call.Payload.Name) {
			h.mu.Unlock()
			return omni.DecisionAllow, nil
		}
	}
	for i, a := range h.pending {
		if a.call.Payload.ToolCallID == id { // re-registered: the old entry is denied
			a.reply <- omni.DecisionDeny
			h.pending = append(h.pending[:i:i], h.pending[i+1:]...)
			h.pendingGauge(-1)
			break
		}
	}
	a := &approval{call: call, reply: make(chan string, 1), nth: nth}
	h.pending = append(h.pending, a)
	h.pendingGauge(1)
	// The engine asks as soon as the model's tool_call is complete, which
	// may be before the run's consumer has published it: the request then
	// waits for it (consume), so that a client never gets an
	// approval_request for a call it has not seen. A subagent's call
	// (with origin) is asked for by its own run: it is shown at once.
	if len(call.Origin) > 0 || h.calls == nil || h.calls[id].published >= nth {
		h.show(a)
	}
	h.mu.Unlock()
	select {
	case d := <-a.reply:
		return engine.Decision(d), nil
	case <-ctx.Done():
		h.mu.Lock()
		h.remove(a)
		h.mu.Unlock()
		return omni.DecisionDeny, ctx.Err()
	}
}

// show publishes a's approval_request; h.mu is held.
func (h *Host) show(a *approval) {
	a.shown = true
	h.publish(approvalEvent(a.call))
}

// Approve answers the pending approval of toolCallID with "allow" or
// "deny"; ErrNoPendingApproval when none is pending.
func (h *Host) Approve(toolCallID, decision string) error {
	if decision != omni.DecisionAllow && decision != omni.DecisionDeny {
		return badRequest("decision: want \"allow\" or \"deny\", got " + quote(decision))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, a := range h.pending {
		if a.call.Payload.ToolCallID == toolCallID {
			h.remove(a)
			a.reply <- decision
			return nil
		}
	}
	return noPendingApproval(toolCallID)
}

func (h *Host) remove(a *approval) {
	for i, p := range h.pending {
		if p == a {
			h.pending = append(h.pending[:i:i], h.pending[i+1:]...)
			h.pendingGauge(-1)
			return
		}
	}
}

// pendingGauge adds n to the approvals pending (Config.Metrics).
func (h *Host) pendingGauge(n int) {
	if m := h.reg.cfg.Metrics; m != nil {
		m.ApprovalsPending.Add(int64(n))
	}
}

// denyPending resolves every pending approval as deny; h.mu is held.
func (h *Host) denyPending() {
	for _, a := range h.pending {
		a.reply <- omni.DecisionDeny
	}
	h.pendingGauge(-len(h.pending))
	h.pending = nil
}

func quote(s string) string {
	return string(transport.AppendString(nil, s))
}
