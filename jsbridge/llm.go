//go:build js && wasm

package jsbridge

import (
	"context"
	"runtime"
	"syscall/js"
	"time"
	"unsafe"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// jsLLM adapts the shim's model object (made from the user's
// llm.streamGenerate and llm.loadHistory) to [engine.LLM] and
// [engine.HistoryLoader].
//
// Shim shape: start(pumpID, newMessagesPtr, newMessagesLen, thinkingLevel,
// toolsJSON, systemPrompt) creates the request's pump (the new messages are
// records in the module's memory, or a JSON array: appendInput; read during
// the call, see Bridge.text);
// loadHistory(waiterID, historyJSON) settles through Bridge.settle.
// toolsJSON is the tool_list_ready message of the session's tool list (""
// when it has none), encoded once per model context.
type jsLLM struct {
	b     *Bridge
	host  js.Value
	tools *omni.ToolDefinition // the list tjson encodes (its first element)
	ntool int
	tjson js.Value // "" or the JSON of the list
	sys   string   // the system prompt sysJS holds
	sysJS js.Value
	in    []byte         // the new messages' records, reused
	batch []omni.Message // the messages of a batch for GenerateParams.EmitBatch, reused
	clock *sessionClock
}

// toolsJSON returns the tool list as a tool_list_ready message's JSON; the
// list is the same on every request of a session, so it is encoded once.
func (l *jsLLM) toolsJSON(tools []omni.ToolDefinition) js.Value {
	if len(tools) == 0 {
		if l.tools != nil || l.tjson.IsUndefined() { // "" made once too
			l.tools, l.ntool, l.tjson = nil, 0, js.ValueOf("")
		}
		return l.tjson
	}
	if &tools[0] != l.tools || len(tools) != l.ntool {
		l.tools, l.ntool = &tools[0], len(tools)
		l.tjson = js.ValueOf(encodeOne(omni.ToolListReadyMsg(tools)))
	}
	return l.tjson
}

// systemPrompt returns p as a JavaScript string, made once while it stays
// the same.
func (l *jsLLM) systemPrompt(p string) js.Value {
	if l.sysJS.IsUndefined() || p != l.sys {
		l.sys, l.sysJS = p, js.ValueOf(p)
	}
	return l.sysJS
}

// StreamGenerate implements [engine.LLM]. A callback that throws, rejects
// or returns no async iterator is a failed outcome (ENGINE.md E-1.2); a
// yielded value that is not an OmniMessage ends the request as malformed.
func (l *jsLLM) StreamGenerate(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) (out engine.Outcome) {
	defer guard("llm.streamGenerate", func(err error) {
		out = engine.Outcome{Status: omni.StatusFailed, ErrorMessage: err.Error()}
	})
	l.in = appendInput(l.in[:0], p.NewMessages)
	if cap(l.in) > 1<<20 {
		defer func() { l.in = nil }()
	}
	tools, sys := l.toolsJSON(p.Tools), l.systemPrompt(p.SystemPrompt)
	thinking := js.Undefined()
	if p.ThinkingLevel != "" {
		thinking = js.ValueOf(p.ThinkingLevel)
	}
	end, v, msg, err := l.b.produce(ctx, "llm.streamGenerate", p.Abandoned, l.clock, func(id int) {
		ptr, n := bytesArg(l.in)
		l.host.Call("start", id, ptr, n, thinking, tools, sys)
		runtime.KeepAlive(l.in)
	}, emit, p.EmitBatch, &l.batch)
	switch {
	case err != nil:
		return engine.Outcome{Status: omni.StatusAborted, ErrorMessage: err.Error()}
	case end == endDone:
		return outcomeOf(v)
	case end == endThrew:
		return engine.Outcome{Status: omni.StatusFailed, ErrorMessage: msg}
	}
	return engine.Outcome{Status: omni.StatusMalformed, ErrorMessage: "llm.streamGenerate " + msg}
}

// outcomeOf converts the iterator's return value. undefined (a generator
// that ends without return) is {status:"completed"}. The status is passed
// on as it is: what an unknown one means is the engine's (E-1.2).
func outcomeOf(v js.Value) engine.Outcome {
	if v.IsUndefined() {
		return engine.Outcome{Status: omni.StatusCompleted}
	}
	var o engine.Outcome
	why := ""
	if v.Type() != js.TypeObject {
		why = "want {status, errorMessage?, permanent?}, got " + typeName(v)
	} else if st := v.Get("status"); st.Type() != js.TypeString {
		why = "status: want a string, got " + typeName(st)
	} else {
		o.Status = engine.Status(st.String())
		if em := v.Get("errorMessage"); absent(em) {
		} else if em.Type() == js.TypeString {
			o.ErrorMessage = em.String()
		} else {
			why = "errorMessage: want a string, got " + typeName(em)
		}
		if pm := v.Get("permanent"); absent(pm) {
		} else if pm.Type() == js.TypeBoolean {
			o.Permanent = pm.Bool()
		} else {
			why = "permanent: want a boolean, got " + typeName(pm)
		}
		// floe.mjs checked it and bounded it (provider.MaxRetryAfter).
		if ra := v.Get("retryAfterMs"); ra.Type() == js.TypeNumber && ra.Float() > 0 {
			o.RetryAfter = time.Duration(min(ra.Float(), 12e4)) * time.Millisecond
		}
	}
	if why != "" {
		return engine.Outcome{Status: omni.StatusFailed, ErrorMessage: "llm.streamGenerate: outcome: " + why}
	}
	return o
}

// jsHistoryLLM is a jsLLM whose user object has loadHistory. resumed is
// the session totals its Trace held, for a resumed session's: handed to
// loadHistory, so that the model's token_usage counts on from them
// (E-17.5), as a built-in model's does.
type jsHistoryLLM struct {
	*jsLLM
	resumed *omni.TokenCounts
}

// LoadHistory implements [engine.HistoryLoader].
func (l *jsHistoryLLM) LoadHistory(ctx context.Context, history []omni.Message) (err error) {
	defer guard("llm.loadHistory", func(e error) { err = e })
	n := 2 // about its JSON's size: appended to from nil, a long history's grew a quarter at a time
	for i := range history {
		p := &history[i].Payload
		n += 160 + len(p.Text) + len(p.Thinking) + len(p.Arguments) + len(p.Output)
	}
	b := appendArray(make([]byte, 0, n), history)
	in := unsafe.String(unsafe.SliceData(b), len(b)) // not copied: b is not written again
	var totals omni.TokenCounts
	if l.resumed != nil {
		totals = *l.resumed
	}
	_, err = l.b.await(ctx, "llm.loadHistory", func(id int) js.Value {
		return l.host.Call("loadHistory", id, in, tokensJSON(totals))
	})
	return err
}

// newLLM wraps a shim model object, with or without loadHistory.
func (b *Bridge) newLLM(host js.Value, clock *sessionClock) engine.LLM {
	l := &jsLLM{b: b, host: host, clock: clock}
	if host.Get("loadHistory").Type() == js.TypeFunction {
		return &jsHistoryLLM{jsLLM: l}
	}
	return l
}

// failingLLM fails every request with msg (a factory that could not make a
// model context).
type failingLLM string

func (f failingLLM) StreamGenerate(context.Context, engine.GenerateParams, func(omni.Message)) engine.Outcome {
	return engine.Outcome{Status: omni.StatusFailed, ErrorMessage: string(f)}
}
