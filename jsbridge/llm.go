//go:build js && wasm

package jsbridge

import (
	"context"
	"strconv"
	"syscall/js"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// jsLLM adapts the shim's model object (made from the user's
// llm.streamGenerate and llm.loadHistory) to [engine.LLM] and
// [engine.HistoryLoader].
//
// Shim shape: start(pumpID, newMessagesJSON, thinkingLevel) → pump;
// loadHistory(waiterID, historyJSON) settles through Bridge.settle.
type jsLLM struct {
	b     *Bridge
	host  js.Value
	grace time.Duration
}

// StreamGenerate implements [engine.LLM]. A callback that throws, rejects
// or returns no async iterator is a failed outcome (ENGINE.md E-1.2); a
// yielded value that is not an OmniMessage ends the request as malformed.
func (l *jsLLM) StreamGenerate(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) (out engine.Outcome) {
	defer guard("llm.streamGenerate", func(err error) {
		out = engine.Outcome{Status: omni.StatusFailed, ErrorMessage: err.Error()}
	})
	var pm *pump
	defer func() { pm.stop() }()
	in := string(appendArray(nil, p.NewMessages))
	pm = l.b.newPump("llm.streamGenerate", l.grace, func(id int) js.Value {
		return l.host.Call("start", id, in, p.ThinkingLevel)
	})
	for {
		r, err := pm.next(ctx)
		if err != nil {
			return engine.Outcome{Status: omni.StatusAborted, ErrorMessage: err.Error()}
		}
		if r.json != "" {
			if err := eachMessage([]byte(r.json), emit); err != nil {
				return engine.Outcome{Status: omni.StatusMalformed, ErrorMessage: "llm.streamGenerate yielded an invalid message: " + err.Error()}
			}
		}
		switch r.end {
		case endDone:
			return outcomeOf(r.value)
		case endThrew:
			return engine.Outcome{Status: omni.StatusFailed, ErrorMessage: endMessage(r)}
		case endBad:
			return engine.Outcome{Status: omni.StatusMalformed, ErrorMessage: "llm.streamGenerate " + endMessage(r)}
		}
	}
}

// outcomeOf converts the iterator's return value. undefined (a generator
// that ends without return) is {status:"completed"}.
func outcomeOf(v js.Value) engine.Outcome {
	if v.IsUndefined() {
		return engine.Outcome{Status: omni.StatusCompleted}
	}
	bad := func(msg string) engine.Outcome {
		return engine.Outcome{Status: omni.StatusFailed, ErrorMessage: "llm.streamGenerate: outcome: " + msg}
	}
	if v.Type() != js.TypeObject {
		return bad("want {status, errorMessage?, permanent?}, got " + typeName(v))
	}
	st := v.Get("status")
	if st.Type() != js.TypeString {
		return bad("status: want a string, got " + typeName(st))
	}
	o := engine.Outcome{Status: st.String()}
	switch o.Status {
	case omni.StatusCompleted, omni.StatusFailed, omni.StatusAborted, omni.StatusTimeout, omni.StatusMalformed, omni.StatusAuth:
	default:
		return bad("status: " + strconv.Quote(o.Status) + " is not one of completed|failed|aborted|timeout|malformed|auth")
	}
	if em := v.Get("errorMessage"); !absent(em) {
		if em.Type() != js.TypeString {
			return bad("errorMessage: want a string, got " + typeName(em))
		}
		o.ErrorMessage = em.String()
	}
	if pm := v.Get("permanent"); !absent(pm) {
		if pm.Type() != js.TypeBoolean {
			return bad("permanent: want a boolean, got " + typeName(pm))
		}
		o.Permanent = pm.Bool()
	}
	return o
}

// jsHistoryLLM is a jsLLM whose user object has loadHistory.
type jsHistoryLLM struct{ *jsLLM }

// LoadHistory implements [engine.HistoryLoader].
func (l jsHistoryLLM) LoadHistory(ctx context.Context, history []omni.Message) (err error) {
	defer guard("llm.loadHistory", func(e error) { err = e })
	in := string(appendArray(nil, history))
	_, err = l.b.await(ctx, "llm.loadHistory", func(id int) js.Value {
		return l.host.Call("loadHistory", id, in)
	})
	return err
}

// newLLM wraps a shim model object, with or without loadHistory.
func (b *Bridge) newLLM(host js.Value, grace time.Duration) engine.LLM {
	l := &jsLLM{b: b, host: host, grace: grace}
	if host.Get("loadHistory").Type() == js.TypeFunction {
		return jsHistoryLLM{l}
	}
	return l
}

// failingLLM fails every request with msg (a factory that could not make a
// model context).
type failingLLM string

func (f failingLLM) StreamGenerate(context.Context, engine.GenerateParams, func(omni.Message)) engine.Outcome {
	return engine.Outcome{Status: omni.StatusFailed, ErrorMessage: string(f)}
}
