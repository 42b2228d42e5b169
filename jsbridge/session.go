//go:build js && wasm

package jsbridge

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"syscall/js"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

// session is a session handed to JavaScript.
type session struct {
	s      *engine.Session
	trace  *trace.Batcher          // the persisted Trace, nil = none (store.go)
	onDiag func(engine.Diagnostic) // the session's OnDiagnostic
	mu     sync.Mutex
	active int // the stream id of the run or compaction in flight, 0 = none
}

// createSession is the export createSession(spec) → sessionRef behind
// Floe.createSession (floe.d.ts); spec: see sessionSpec.
func (b *Bridge) createSession(args []js.Value) (any, error) {
	sp, err := readSpec(arg(args, 0), "createSession")
	if err != nil {
		return nil, err
	}
	cfg, err := b.sessionConfig("createSession", &sp)
	if err != nil {
		return nil, err
	}
	bat, err := b.attachStore(&cfg, sp[specStore], "createSession")
	if err != nil {
		return nil, err
	}
	s, err := engine.New(cfg)
	if err != nil {
		return nil, badArg("createSession", err.Error())
	}
	h := b.sessions.add(&session{s: s, trace: bat, onDiag: cfg.OnDiagnostic})
	return sessionRef(h, s.ID()), nil
}

// sessionRef is what createSession, createSubagent and resumeSession return:
// "<handle> <id>", one string, where an object of the two costs four more
// JavaScript calls and two more finalizers.
func sessionRef(h int, id string) string { return strconv.Itoa(h) + " " + id }

func (b *Bridge) session(v js.Value, fn string) (*session, error) {
	h, err := wantInt(v, fn+": handle")
	if err != nil {
		return nil, err
	}
	s, ok := b.sessions.get(h)
	if !ok {
		return nil, closedErr("the session")
	}
	return s, nil
}

// decodeInput reads a run input: a string becomes one user text; otherwise
// a JSON array of OmniMessages.
func decodeInput(kind, v js.Value, name string) ([]omni.Message, error) {
	text, err := wantString(v, name)
	if err != nil {
		return nil, err
	}
	if kind.Type() == js.TypeString && kind.String() == "text" {
		return []omni.Message{omni.UserText(text)}, nil
	}
	msgs, err := omni.DecodeArray([]byte(text))
	if err != nil {
		return nil, badArg(name, err.Error())
	}
	return msgs, nil
}

// startErr maps an engine error of Start or Compact.
func startErr(err error, fn string) error {
	switch {
	case errors.Is(err, engine.ErrBusy):
		return &Error{Code: CodeSessionBusy, Msg: fn + ": the session is busy: a run or compaction is already in flight"}
	case errors.Is(err, engine.ErrClosed):
		return closedErr("the session")
	}
	return badArg(fn, err.Error()) // the engine refuses the input
}

// start is the export behind Session.run (floe.d.ts): start(handle, kind "text"|"json", input, approve?,
// signal?, thinkingLevel?) → streamID. approve is the shim's
// (waiterID, toolCallJSON) function. It returns at once: the run proceeds
// as JavaScript pulls.
func (b *Bridge) start(args []js.Value) (any, error) {
	s, err := b.session(arg(args, 0), "run")
	if err != nil {
		return nil, err
	}
	input, err := decodeInput(arg(args, 1), arg(args, 2), "run: prompt")
	if err != nil {
		return nil, err
	}
	var opts engine.RunOptions
	if a := arg(args, 3); !absent(a) {
		if err := wantFunc(a, "run: approve"); err != nil {
			return nil, err
		}
		opts.Approve, opts.ApproveHonorsCancel = b.jsApprover(a), true
	}
	if t := arg(args, 5); !absent(t) {
		if opts.ThinkingLevel, err = wantString(t, "run: thinkingLevel"); err != nil {
			return nil, err
		}
	}
	return b.startStream(s, arg(args, 4), "run", func(ctx context.Context) (*engine.Run, error) {
		return s.s.Start(ctx, input, opts)
	})
}

// compact is the export behind Session.compact: compact(handle, signal?)
// → streamID (E-13.13).
func (b *Bridge) compact(args []js.Value) (any, error) {
	s, err := b.session(arg(args, 0), "compact")
	if err != nil {
		return nil, err
	}
	return b.startStream(s, arg(args, 1), "compact", s.s.Compact)
}

// startStream maps the signal, starts the run and registers its stream.
// When the stream ends, the session's records are flushed to its store
// before the last pull settles (the shim's stream lets the session's lock
// go once it has settled, or once closeStream's Promise has).
func (b *Bridge) startStream(s *session, signal js.Value, fn string, start func(context.Context) (*engine.Run, error)) (any, error) {
	ctx, cancel, stop, err := signalContext(signal, fn+": signal")
	if err != nil {
		return nil, err
	}
	r, err := start(ctx)
	if err != nil {
		stop()
		cancel(nil)
		return nil, startErr(err, fn)
	}
	st := runStream(r)
	st.cancel, st.stop = cancel, stop
	id := b.streams.add(st)
	s.mu.Lock()
	s.active = id
	s.mu.Unlock()
	st.onEnd = func() {
		s.flushTrace()
		s.mu.Lock()
		if s.active == id {
			s.active = 0
		}
		s.mu.Unlock()
	}
	return id, nil
}

// steer is the export behind Session.steer: steer(handle, kind, input) →
// the entry's id (a number ≥ 1, for unsteer), or false when no run is in
// flight (E-11.1). Input the engine refuses is bad_argument.
func (b *Bridge) steer(args []js.Value) (any, error) {
	s, err := b.session(arg(args, 0), "steer")
	if err != nil {
		return nil, err
	}
	input, err := decodeInput(arg(args, 1), arg(args, 2), "steer: input")
	if err != nil {
		return nil, err
	}
	id, err := s.s.SteerWithID(input)
	if err != nil {
		return nil, badArg("steer: input", err.Error())
	}
	if id == 0 {
		return false, nil
	}
	return float64(id), nil
}

// unsteer is the export behind Session.unsteer: unsteer(handle, id) →
// whether the entry steer returned id for was still pending and is now
// withdrawn (E-11.2).
func (b *Bridge) unsteer(args []js.Value) (any, error) {
	s, err := b.session(arg(args, 0), "unsteer")
	if err != nil {
		return nil, err
	}
	id, err := wantInt(arg(args, 1), "unsteer: id")
	if err != nil {
		return nil, err
	}
	if id < 1 {
		return false, nil
	}
	return s.s.UnsteerID(engine.SteerID(id)), nil
}

// skipReconnectWait is the export behind Session.skipReconnectWait:
// skipReconnectWait(handle) → boolean (E-10.7).
func (b *Bridge) skipReconnectWait(args []js.Value) (any, error) {
	s, err := b.session(arg(args, 0), "skipReconnectWait")
	if err != nil {
		return nil, err
	}
	return s.s.SkipReconnectWait(), nil
}

// compactability is the export behind Session.compactability:
// compactability(handle) → string (E-13.13).
func (b *Bridge) compactability(args []js.Value) (any, error) {
	s, err := b.session(arg(args, 0), "compactability")
	if err != nil {
		return nil, err
	}
	return s.s.Compactability(), nil
}

// closeSession is the export behind Session.close: closeSession(handle,
// last?). The run or compaction in flight, if any, is aborted as by its
// signal (engine.Session.Close) and its consumer still receives the rest of
// its stream, ending with the abort (the shim drains it before close()
// resolves); later calls are refused. The shim calls it again with last
// once that stream has ended: the handle is forgotten, and the Promise it
// returns settles once the records held after a failed write (a full
// quota) were written once more, or their loss reported
// (trace.Batcher.Retry).
func (b *Bridge) closeSession(args []js.Value) (any, error) {
	h, err := wantInt(arg(args, 0), "close: handle")
	if err != nil {
		return nil, err
	}
	s, ok := b.sessions.get(h)
	if !ok {
		return nil, nil
	}
	s.s.Close()
	if absent(arg(args, 1)) {
		return nil, nil
	}
	b.sessions.remove(h)
	return b.async("close", func() (any, error) {
		if s.trace != nil {
			s.trace.Retry(s.s.ID())
		}
		s.flushTrace()
		if s.trace != nil && !b.writes(s.s.ID()) {
			s.trace.Forget(s.s.ID()) // a {dir} store kept each session it wrote
		}
		return nil, nil
	}), nil
}

// writes reports whether a session or subagent of this program still
// writes the Trace of session id.
func (b *Bridge) writes(id string) bool { return len(b.traces(id)) > 0 }
