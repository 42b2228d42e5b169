package engine

import (
	"context"
	"iter"

	"github.com/floehq/floe/engine/omni"
)

// SubagentHandle runs a child session on behalf of a tool of the parent
// (ENGINE.md §15, E-15.4). One run at a time, like the child session
// itself: a second Start while a run is in flight returns ErrBusy.
type SubagentHandle struct {
	child *Session
}

// NewSubagent creates the child session; cfg.Meta should carry source
// "subagent". The child writes its own Trace (cfg.Trace).
func NewSubagent(cfg Config) (*SubagentHandle, error) {
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	return &SubagentHandle{child: s}, nil
}

// Session returns the child session.
func (h *SubagentHandle) Session() *Session { return h.child }

// Start runs the child with prompt. The Run yields, each with the child id
// prepended to origin (E-15.4): on the handle's first run the child's
// session_meta, then the prompt (sender "parent_agent"), then every message
// of the child's run. The child's approver prepends the child id to each
// tool call before asking approve (nil approve: the child denies all).
// ErrBusy while a run of the child is in flight, ErrClosed once the child
// session is closed; nothing is streamed or traced then.
func (h *SubagentHandle) Start(ctx context.Context, prompt string, approve Approver) (*Run, error) {
	c := h.child
	if err := c.reserve(ctx, true); err != nil {
		return nil, err
	}
	id := c.ID()
	var childApprove Approver
	if approve != nil {
		childApprove = func(ctx context.Context, tc omni.Message) (Decision, error) {
			return approve(ctx, tc.WithOrigin(id))
		}
	}
	rn := newRun(ctx, c, RunOptions{Approve: childApprove}, func(ctx context.Context, r *run) {
		if !c.announced {
			c.announced = true
			meta := c.cfg.Meta
			c.stampMsg(&meta)
			r.deliver(meta)
		}
		pm := omni.UserText(prompt)
		pm.Payload.Edit().Sender = omni.SenderParentAgent
		c.stampMsg(&pm)
		r.deliver(pm)
		// A consumer gone already aborted the run (E-3.3a): runLoop then
		// records the prompt and the abort and carries the prompt over
		// (E-3.6.3).
		r.runLoop(ctx, []omni.Message{pm})
	})
	rn.r.origin = id
	return rn, nil
}

// Run is Start followed by Run.All; an error of Start is reported as a
// DiagSubagent diagnostic and gives an empty sequence. Breaking out of the
// loop aborts the child's run.
func (h *SubagentHandle) Run(ctx context.Context, prompt string, approve Approver) iter.Seq[omni.Message] {
	return func(yield func(omni.Message) bool) {
		rn, err := h.Start(ctx, prompt, approve)
		if err != nil {
			if h.child != nil { // nil: a handle NewSubagent did not make
				h.child.diag(DiagSubagent, err)
			}
			return
		}
		for m := range rn.All() {
			if !yield(m) {
				return
			}
		}
	}
}
