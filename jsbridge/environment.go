//go:build js && wasm

package jsbridge

import (
	"context"
	"errors"
	"syscall/js"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// jsEnvironment adapts the shim's environment object (made from the user's
// environment.executeTool) to [engine.Environment].
//
// Shim shape: start(pumpID, toolCallJSON, hasApprover) → pump. The tool's
// approve(toolCall) calls back into Bridge.approve with the pump id.
type jsEnvironment struct {
	b     *Bridge
	host  js.Value
	grace time.Duration
}

// toolApproval is the run's approver handed to one tool execution, for
// tools that start subagents (ToolRequest.Approve).
type toolApproval struct {
	ctx     context.Context
	approve engine.Approver
}

// ExecuteTool implements [engine.Environment]. A tool that throws, rejects,
// returns no async iterator or yields a value that is not an OmniMessage
// returns an error; what that means is the engine's (E-6.5).
func (e *jsEnvironment) ExecuteTool(ctx context.Context, req engine.ToolRequest, emit func(omni.Message)) (err error) {
	defer guard("environment.executeTool", func(p error) { err = p })
	approval := 0 // the pump id under which the approver is registered
	defer func() {
		if approval != 0 {
			e.b.approvals.remove(approval)
		}
	}()
	tc := encodeOne(req.ToolCall)
	end, _, msg, err := e.b.produce(ctx, "environment.executeTool", e.grace, func(id int) js.Value {
		if req.Approve != nil {
			approval = id
			e.b.approvals.put(id, toolApproval{ctx, req.Approve})
		}
		return e.host.Call("start", id, tc, req.Approve != nil)
	}, emit)
	switch {
	case err != nil:
		return err
	case end == endDone:
		return nil
	case end == endThrew:
		return errors.New(msg)
	}
	return errors.New("environment.executeTool " + msg)
}
