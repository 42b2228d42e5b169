package engine

import (
	"context"
	"iter"

	"github.com/floehq/floe/engine/omni"
)

// SubagentHandle runs a child session on behalf of a tool of the parent
// (ENGINE.md §15, E-15.4). It is not safe for concurrent use: one run at a
// time, like the child session itself.
type SubagentHandle struct {
	child   *Session
	started bool
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

// Run runs the child with prompt and yields, each with the child id
// prepended to origin (E-15.4): on the handle's first run the child's
// session_meta, then the prompt (sender "parent_agent"), then every message
// of the child's run. The child's approver prepends the child id to each
// tool call before asking approve (nil approve: the child denies all).
// Breaking out of the loop aborts the child's run.
func (h *SubagentHandle) Run(ctx context.Context, prompt string, approve Approver) iter.Seq[omni.Message] {
	return func(yield func(omni.Message) bool) {
		c := h.child
		id := c.ID()
		if !h.started {
			h.started = true
			meta := c.cfg.Meta
			c.stampMsg(&meta)
			if !yield(meta.WithOrigin(id)) {
				return
			}
		}
		pm := omni.UserText(prompt)
		pm.Payload.Sender = omni.SenderParentAgent
		c.stampMsg(&pm)
		if !yield(pm.WithOrigin(id)) {
			return
		}
		var childApprove Approver
		if approve != nil {
			childApprove = func(ctx context.Context, tc omni.Message) (string, error) {
				return approve(ctx, tc.WithOrigin(id))
			}
		}
		seq, err := c.Run(ctx, []omni.Message{pm}, RunOptions{Approve: childApprove})
		if err != nil {
			c.diag("subagent", err)
			return
		}
		for m := range seq {
			if !yield(m.WithOrigin(id)) {
				return
			}
		}
	}
}
