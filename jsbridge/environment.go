//go:build js && wasm

package jsbridge

import (
	"context"
	"errors"
	"runtime"
	"syscall/js"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/internal/lock"
)

// jsEnvironment adapts the shim's environment object (made from the user's
// environment.executeTool) to [engine.Environment].
//
// Shim shape: start(pumpID, toolCallPtr, toolCallLen, hasApprover) creates
// the execution's pump (the tool call is records in the module's memory,
// appendCall, read during the call). The tool's approve(toolCall) calls back into
// Bridge.approve with the pump id.
type jsEnvironment struct {
	b     *Bridge
	host  js.Value
	clock *sessionClock
	diag  func(engine.Diagnostic) // the session's OnDiagnostic, for approve (nil: none)

	mu   lock.Mutex
	bufs [][]omni.Message // the batch buffers of tool calls that ended (takeBuf)
}

// maxToolBufs is the most batch buffers a session keeps between tool
// calls: one for each call that runs at once, up to this many (2 kB each
// for a tool that hands over a few messages at a time, 15 kB at most).
const maxToolBufs = 16

// takeBuf returns a batch buffer that an ended tool call left, or nil.
func (e *jsEnvironment) takeBuf() []omni.Message {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := len(e.bufs)
	if n == 0 {
		return nil
	}
	buf := e.bufs[n-1]
	e.bufs[n-1] = nil
	e.bufs = e.bufs[:n-1]
	return buf
}

// putBuf keeps a tool call's batch buffer (cleared by its pump) for the
// next call.
func (e *jsEnvironment) putBuf(buf []omni.Message) {
	if cap(buf) == 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.bufs) < maxToolBufs {
		e.bufs = append(e.bufs, buf[:0])
	}
}

// toolApproval is the run's approver handed to one tool execution, for
// tools that start subagents (ToolRequest.Approve), and the tool's
// context, which ask calls it under. (A closure over the request here
// moved the whole request to the heap for every tool call.)
type toolApproval struct {
	approve engine.Approver
	ctx     context.Context
	diag    func(engine.Diagnostic)
}

// ask calls the approver under the tool's context.
func (t toolApproval) ask(toolCall omni.Message) (engine.Decision, error) {
	return t.approve(t.ctx, toolCall)
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
	tc := appendCall(make([]byte, 0, callBuf), &req.ToolCall)
	buf := e.takeBuf()
	defer func() { e.putBuf(buf) }()
	end, _, msg, err := e.b.produce(ctx, "environment.executeTool", req.Abandoned, e.clock, func(id int) {
		if req.Approve != nil {
			approval = id
			e.b.approvals.put(id, toolApproval{req.Approve, ctx, e.diag})
		}
		ptr, n := bytesArg(tc)
		e.host.Call("start", id, ptr, n, req.Approve != nil)
		runtime.KeepAlive(tc)
	}, emit, req.EmitBatch, &buf)
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
