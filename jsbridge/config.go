//go:build js && wasm

package jsbridge

import (
	"context"
	"github.com/floehq/floe/internal/errf"
	"syscall/js"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

// sessionSpec is what the shim hands to createSession, createSubagent and
// resumeSession (sessionSpec in floe.mjs): an array of the values below, in
// this order, without the absent ones at its end:
//
//	meta: string /* session_meta payload JSON */, llm: shimLLM,
//	environment?: shimEnvironment, store?: string /* traceStore */,
//	tools?: string /* ToolDefinition[] JSON */, config?: object,
//	newLLM?: (tokensJSON) => shimLLM | string, onDiagnostic?: (kind, message, stack) => void,
//	clock?: shimClock, trace?: shimTrace,
//	foldInputImages?: (waiterID, messagesJSON) => void /* settles with JSON */,
//	abortGraceMs?: number
//
// Each is read by index, once: an object's key read by name costs a
// JavaScript call, and the key's conversion, whether the key is there or
// not; the trimmed end costs nothing.
type sessionSpec [specLen]js.Value

// The indexes of a spec, the common ones first.
const (
	specMeta = iota
	specLLM
	specEnvironment
	specStore
	specTools
	specConfig
	specNewLLM
	specOnDiagnostic
	specClock
	specTrace
	specFoldInputImages
	specAbortGraceMs
	specLen
)

// readSpec reads the spec array v; a missing value is undefined (the zero
// js.Value).
func readSpec(v js.Value, fn string) (s sessionSpec, err error) {
	if err := wantObject(v, fn+": options"); err != nil {
		return s, err
	}
	n := min(v.Length(), len(s))
	for i := range n {
		s[i] = v.Index(i)
	}
	return s, nil
}

// sessionConfig reads a spec (see sessionSpec). config keys: maxTurns,
// maxReconnects, reconnectBackoffMs, reconnectBackoffMaxMs,
// compactionMaxReconnects, compaction {maxContextLength, maxSessionTurns,
// mode, prompt}. An absent key takes the engine's default (ENGINE.md §2);
// a present 0 means zero (no retries, no wait).
func (b *Bridge) sessionConfig(fn string, s *sessionSpec) (cfg engine.Config, err error) {
	if cfg.Meta, err = readMeta(s[specMeta], fn+": meta"); err != nil {
		return cfg, err
	}
	if cfg.ToolList, err = readTools(s[specTools], fn+": tools"); err != nil {
		return cfg, err
	}
	if _, err := b.readCallbacks(&cfg, s, fn); err != nil {
		return cfg, err
	}
	if err := readConfig(&cfg, s[specConfig], fn+": config"); err != nil {
		return cfg, err
	}
	return cfg, needsNewLLM(&cfg, fn)
}

// needsNewLLM refuses a compaction configured without the fresh model
// context it continues in: the engine would never compact (E-13.13,
// compactability "unsupported"), and no message would say why.
func needsNewLLM(cfg *engine.Config, fn string) error {
	if cfg.Compaction != nil && cfg.NewLLM == nil {
		return badArg(fn+": config.compaction", "needs newLLM (the fresh model context a compaction continues in), or a built-in model as llm, which is its own")
	}
	return nil
}

// readMeta decodes the session_meta payload JSON and checks it
// (trace.ParseMeta: PROTOCOL.md §2 and an id that can name Trace files);
// the error names the key.
func readMeta(v js.Value, name string) (omni.Message, error) {
	s, err := wantString(v, name)
	if err != nil {
		return omni.Message{}, err
	}
	m, err := trace.ParseMeta([]byte(s))
	if err != nil {
		me, _ := errf.As[*trace.MetaError](err)
		if me != nil && me.Key != "" {
			return m, badArg(name+"."+me.Key, me.Msg)
		} else if me != nil {
			return m, badArg(name, me.Msg)
		}
		return m, badArg(name, err.Error())
	}
	return m, nil
}

// readTools decodes the optional ToolDefinition[] JSON; present means
// non-nil (tool_list_ready is used, E-14.3).
func readTools(v js.Value, name string) ([]omni.ToolDefinition, error) {
	if absent(v) {
		return nil, nil
	}
	s, err := wantString(v, name)
	if err != nil {
		return nil, err
	}
	m, err := omni.Decode([]byte(`{"type":"event_msg","payload":{"type":"tool_list_ready","tools":` + s + `}}`))
	if err != nil {
		return nil, badArg(name, err.Error())
	}
	if m.Payload.Tools() == nil {
		return []omni.ToolDefinition{}, nil
	}
	return m.Payload.Tools(), nil
}

// readCallbacks wraps the shim's callback objects as engine adapters; own
// is the factory of a built-in llm's model (nil for a JavaScript model).
func (b *Bridge) readCallbacks(cfg *engine.Config, s *sessionSpec, fn string) (own engine.LLMFactory, err error) {
	clock := &sessionClock{now: time.Now} // the options' clock replaces it below
	if g := s[specAbortGraceMs]; !absent(g) {
		ms, err := wantInt(g, fn+": abortGraceMs")
		if err != nil {
			return nil, err
		}
		// The engine abandons the callback (Config.AbortGrace); 0 or less
		// abandons it at once.
		cfg.AbortGrace = max(time.Duration(ms)*time.Millisecond, time.Nanosecond)
	}
	l := s[specLLM]
	if err := wantObject(l, fn+": llm"); err != nil {
		return nil, err
	}
	if isModelSpec(l) {
		// A built-in adapter; without newLLM, compaction starts a fresh
		// context of the same model (provider.go).
		if cfg.LLM, cfg.NewLLM, err = b.providerLLM(l, fn+": llm"); err != nil {
			return nil, err
		}
		own = cfg.NewLLM
	} else {
		cfg.LLM = b.newLLM(l, clock)
	}
	if f := s[specNewLLM]; isModelSpec(f) {
		_, factory, err := b.providerLLM(f, fn+": newLLM")
		if err != nil {
			return nil, err
		}
		cfg.NewLLM = factory
	} else if err := optFunc(f, fn+": newLLM"); err != nil {
		return nil, err
	} else if !absent(f) {
		cfg.NewLLM = b.llmFactory(f, clock)
	}
	d := s[specOnDiagnostic]
	if err := optFunc(d, fn+": onDiagnostic"); err != nil {
		return nil, err
	}
	cfg.OnDiagnostic = diagnostics(d)
	for _, h := range [...]struct {
		i    int
		name string
	}{{specEnvironment, "environment"}, {specClock, "clock"}, {specTrace, "trace"}} {
		if !absent(s[h.i]) {
			if err := wantObject(s[h.i], fn+": "+h.name); err != nil {
				return nil, err
			}
		}
	}
	if e := s[specEnvironment]; !absent(e) {
		cfg.Environment = &jsEnvironment{b: b, host: e, clock: clock, diag: cfg.OnDiagnostic}
	}
	if c := s[specClock]; !absent(c) {
		cfg.Clock = &jsClock{b: b, host: c, diag: diagFunc(cfg.OnDiagnostic)}
		clock.now = cfg.Clock.Now
	}
	if t := s[specTrace]; !absent(t) {
		cfg.Trace = &jsTrace{host: t}
	}
	if f := s[specFoldInputImages]; !absent(f) {
		if err := wantFunc(f, fn+": foldInputImages"); err != nil {
			return nil, err
		}
		cfg.FoldInputImages = b.imageFold(f)
	}
	return own, nil
}

// imageFold adapts the shim's fold — (waiterID, messagesJSON), settling
// with the JSON of the folded messages — to engine.Config.FoldInputImages.
func (b *Bridge) imageFold(host js.Value) func(context.Context, []omni.Message) ([]omni.Message, error) {
	return func(ctx context.Context, in []omni.Message) (out []omni.Message, err error) {
		defer guard("foldInputImages", func(e error) { err = e })
		data := string(appendArray(nil, in))
		r, err := b.await(ctx, "foldInputImages", func(id int) js.Value { return host.Invoke(id, data) })
		if err != nil {
			return nil, err
		}
		s, ok := r.str()
		if !ok {
			return nil, badArg("foldInputImages: result", "want a string, got "+typeName(r.value))
		}
		return omni.DecodeArray([]byte(s))
	}
}

// diagFunc adapts an OnDiagnostic to a (kind, err) reporter; nil reports
// nothing.
func diagFunc(on func(engine.Diagnostic)) func(engine.DiagnosticKind, error) {
	return func(kind engine.DiagnosticKind, err error) {
		if on != nil {
			on(engine.Diagnostic{Kind: kind, Err: err})
		}
	}
}

// llmFactory adapts the shim's newLLM(tokensJSON) — returning a shim model
// object, or a string with the error of the user's newLLM — to
// [engine.LLMFactory]. A factory that fails gives a model whose every
// request fails with that message.
func (b *Bridge) llmFactory(f js.Value, clock *sessionClock) engine.LLMFactory {
	return func(tokens omni.TokenCounts) (l engine.LLM) {
		defer guard("newLLM", func(err error) { l = failingLLM("newLLM: " + err.Error()) })
		v := f.Invoke(tokensJSON(tokens))
		if v.Type() == js.TypeString {
			return failingLLM("newLLM: " + v.String())
		}
		if v.Type() != js.TypeObject {
			return failingLLM("newLLM: returned " + typeName(v) + ", want an llm object")
		}
		if isModelSpec(v) {
			s, err := b.readModelSpec(v, "newLLM() result")
			if err != nil {
				return failingLLM("newLLM: " + err.Error())
			}
			l, err := s.newContext(tokens)
			if err != nil {
				return failingLLM("newLLM: " + err.Error())
			}
			return l
		}
		return b.newLLM(v, clock)
	}
}

// readConfig reads the optional config object into cfg.
func readConfig(cfg *engine.Config, c js.Value, name string) error {
	if absent(c) {
		return nil
	}
	if err := wantObject(c, name); err != nil {
		return err
	}
	ints := []struct {
		key  string
		dst  *int
		zero int // what a present 0 becomes in engine.Config
	}{
		{"maxTurns", &cfg.MaxTurns, 0},
		{"maxReconnects", &cfg.MaxReconnects, -1},
		{"reconnectBackoffMs", &cfg.ReconnectBackoffMs, -1},
		{"reconnectBackoffMaxMs", &cfg.ReconnectBackoffMaxMs, -1},
		{"compactionMaxReconnects", &cfg.CompactionMaxReconnects, -1},
	}
	for _, f := range ints {
		v := c.Get(f.key)
		if absent(v) {
			continue
		}
		n, err := wantInt(v, name+"."+f.key)
		if err != nil {
			return err
		}
		if n == 0 {
			n = f.zero
		}
		*f.dst = n
	}
	cv := c.Get("compaction")
	if absent(cv) {
		return nil
	}
	if err := wantObject(cv, name+".compaction"); err != nil {
		return err
	}
	comp := &engine.Compaction{}
	for _, f := range []struct {
		key string
		dst *int64
	}{{"maxContextLength", &comp.MaxContextLength}, {"maxSessionTurns", &comp.MaxSessionTurns}} {
		if v := cv.Get(f.key); !absent(v) {
			n, err := wantInt(v, name+".compaction."+f.key)
			if err != nil {
				return err
			}
			*f.dst = int64(n)
		}
	}
	var err error
	if comp.Mode, err = wantString(cv.Get("mode"), name+".compaction.mode"); err != nil {
		return err
	}
	if p := cv.Get("prompt"); !absent(p) {
		if comp.Prompt, err = wantString(p, name+".compaction.prompt"); err != nil {
			return err
		}
	}
	cfg.Compaction = comp
	return nil
}
