//go:build js && wasm

package jsbridge

import (
	"syscall/js"

	"github.com/floehq/floe/engine"
)

// createSubagent is the export behind Floe.createSubagent (floe.d.ts):
// createSubagent(spec) → sessionRef, a child
// session for a tool (ENGINE.md E-15.4).
func (b *Bridge) createSubagent(args []js.Value) (any, error) {
	s, err := readSpec(arg(args, 0), "createSubagent")
	if err != nil {
		return nil, err
	}
	cfg, err := b.sessionConfig("createSubagent", &s)
	if err != nil {
		return nil, err
	}
	bat, err := b.attachStore(&cfg, s[specStore], "createSubagent")
	if err != nil {
		return nil, err
	}
	h, err := engine.NewSubagent(cfg)
	if err != nil {
		return nil, badArg("createSubagent", err.Error())
	}
	sub := &subagent{h: h, s: session{s: h.Session(), trace: bat, onDiag: cfg.OnDiagnostic}}
	return sessionRef(b.subagents.add(sub), h.Session().ID()), nil
}

// subagent is a child session of a tool's and, with a store, its Trace
// (ENGINE.md E-15.6: the child writes its own Trace).
type subagent struct {
	h      *engine.SubagentHandle
	s      session
	closed bool // closeSubagent ran; under s.mu, as s.active (1 while a run is in flight)
}

// release tells a {dir} store that the closed subagent's Trace is written
// no more, once its run's records are stored (s.active 0), as a closed
// session's is (closeSession).
func (b *Bridge) release(sub *subagent) {
	sub.s.mu.Lock()
	idle := sub.closed && sub.s.active == 0
	sub.s.mu.Unlock()
	if id := sub.s.s.ID(); idle && sub.s.trace != nil && !b.writes(id) {
		sub.s.trace.Forget(id)
	}
}

// subagentRun is the export behind Subagent.run: subagentRun(handle, prompt, approve?, toolID?,
// signal?) → streamID. approve is the shim's (waiterID, toolCallJSON)
// function; toolID, when non-zero, names the tool execution whose approver
// to use directly (the approve a tool received).
func (b *Bridge) subagentRun(args []js.Value) (any, error) {
	hid, err := wantInt(arg(args, 0), "subagent.run: handle")
	if err != nil {
		return nil, err
	}
	sub, ok := b.subagents.get(hid)
	if !ok {
		return nil, closedErr("the subagent")
	}
	h := sub.h
	prompt, err := wantString(arg(args, 1), "subagent.run: prompt")
	if err != nil {
		return nil, err
	}
	var approve engine.Approver
	if t := arg(args, 3); !absent(t) {
		tid, err := wantInt(t, "subagent.run: approve")
		if err != nil {
			return nil, err
		}
		ta, ok := b.approvals.get(tid)
		if !ok {
			return nil, closedErr("the tool execution of this approve")
		}
		approve = ta.approve
	} else if a := arg(args, 2); !absent(a) {
		if err := wantFunc(a, "subagent.run: approve"); err != nil {
			return nil, err
		}
		approve = b.jsApprover(a)
	}
	ctx, cancel, stop, err := signalContext(arg(args, 4), "subagent.run: signal")
	if err != nil {
		return nil, err
	}
	r, err := h.Start(ctx, prompt, approve)
	if err != nil {
		stop()
		cancel(nil)
		return nil, startErr(err, "subagent.run")
	}
	st := runStream(r)
	st.cancel, st.stop = cancel, stop
	sub.s.mu.Lock()
	sub.s.active = 1
	sub.s.mu.Unlock()
	st.onEnd = func() {
		sub.s.flushTrace() // the child's records are stored before its stream ends
		sub.s.mu.Lock()
		sub.s.active = 0
		sub.s.mu.Unlock()
		b.release(sub)
	}
	return b.streams.add(st), nil
}

// closeSubagent is the export behind Subagent.close: abort the run in
// flight, forget the handle and, once that run has ended, tell its store
// (release, on a worker).
func (b *Bridge) closeSubagent(args []js.Value) (any, error) {
	hid, err := wantInt(arg(args, 0), "subagent.close: handle")
	if err != nil {
		return nil, err
	}
	sub, ok := b.subagents.get(hid)
	if !ok {
		return nil, nil
	}
	b.subagents.remove(hid)
	sub.s.s.Close() // a run in flight is aborted, as a session's close() aborts its run
	sub.s.mu.Lock()
	sub.closed = true
	sub.s.mu.Unlock()
	// Off JavaScript's call: a {dir} store's Forget waits for its lock,
	// which a write holds while the file system answers, and a call from
	// JavaScript must not wait for that (the module trapped).
	b.spawn(func() {
		defer guard("subagent.close", nil)
		b.release(sub)
	})
	return nil, nil
}
