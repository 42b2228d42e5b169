//go:build js && wasm

package jsbridge

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"syscall/js"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// jsApprover adapts the shim's approve function — (waiterID, toolCallPtr,
// toolCallLen) with the tool call's records (appendCall) in the module's
// memory, read during the call, settling through Bridge.settle, or returning the
// decision when the user's approve gave it at once — to [engine.Approver]. A rejection, a
// throw or a value that is not a string is returned as an error; the
// engine turns it into "deny" (E-5.4). When ctx is done first the approver
// is no longer waited for (E-5.5).
func (b *Bridge) jsApprover(host js.Value) engine.Approver {
	return func(ctx context.Context, toolCall omni.Message) (decision engine.Decision, err error) {
		defer guard("approve", func(p error) { decision, err = "", p })
		tc := appendCall(make([]byte, 0, callBuf), &toolCall)
		r, err := b.await(ctx, "approve", func(id int) js.Value {
			ptr, n := bytesArg(tc)
			r := host.Invoke(id, ptr, n)
			runtime.KeepAlive(tc)
			return r
		})
		if err != nil {
			return "", err
		}
		v, ok := r.str()
		if !ok {
			return "", badArg("approve", "resolved to "+typeName(r.value)+`, want "allow", "deny" or "forbidden"`)
		}
		return engine.Decision(v), nil
	}
}

// approvals maps the pump ids of running tool executions to their
// approver.
type approvals struct {
	mu sync.Mutex
	m  map[int]toolApproval
}

func (a *approvals) put(id int, t toolApproval) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = map[int]toolApproval{}
	}
	a.m[id] = t
}

func (a *approvals) get(id int) (toolApproval, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t, ok := a.m[id]
	return t, ok
}

func (a *approvals) remove(id int) {
	a.mu.Lock()
	delete(a.m, id)
	a.mu.Unlock()
}

// approve is the export behind the approve(toolCall) a tool receives:
// approve(pumpID, toolCallJSON) → Promise<decision>. It asks the run's
// approver of that tool execution, under the tool's context.
func (b *Bridge) approve(args []js.Value) (any, error) {
	id, err := wantInt(arg(args, 0), "approve: id")
	if err != nil {
		return nil, err
	}
	data, err := wantString(arg(args, 1), "approve: toolCall")
	if err != nil {
		return nil, err
	}
	return b.async("approve", func() (any, error) {
		t, ok := b.approvals.get(id)
		if !ok {
			return nil, closedErr("the tool execution of this approve")
		}
		tc, err := omni.Decode([]byte(data))
		if err != nil {
			return nil, badArg("approve: toolCall", err.Error())
		}
		if tc.Type != omni.TypeModelMsg || tc.Payload.Type != omni.ToolCall {
			// The run's approver decides tool calls: an event or a text
			// reached it as one.
			return nil, badArg("approve: toolCall", "want a model_msg tool_call, got "+tc.Type+" "+tc.Payload.Type)
		}
		d, err := t.ask(tc)
		if err != nil && t.ctx.Err() != nil {
			// The run's abort: the approver was not asked, or is no
			// longer waited for (E-5.5). Not "internal: context canceled".
			return nil, &Error{Code: CodeClosed, Msg: "approve: the run was aborted: no decision"}
		}
		// An approver that fails or answers no decision denies, as the
		// engine treats it (E-5.4): it rejected as an internal error, and
		// another word was handed to the tool as a decision.
		why := ""
		if err != nil {
			why = err.Error()
		} else if d != omni.DecisionAllow && d != omni.DecisionDeny && d != omni.DecisionForbidden {
			why = `returned "` + string(d) + `", not allow|deny|forbidden` // not strconv.Quote: its tables cost 6 kB
		}
		if why != "" {
			diagFunc(t.diag)(engine.DiagApprover, errors.New("approver for "+tc.Payload.ToolCallID+": "+why+" (treated as deny)"))
			d = omni.DecisionDeny
		}
		return string(d), nil
	}), nil
}
