//go:build js && wasm

package jsbridge

import (
	"context"
	"errors"
	"strconv"
	"syscall/js"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/trace"
)

// The persisted sessions: the exports behind Floe.listSessions,
// resumeSession, exportSession, importSession and deleteSession
// (floe.d.ts), and the store of createSession. Each returns a Promise; the
// store is the shim's normalized option (see traceStore): a session's
// records reach the store at the latest when its run ends. What a session
// list holds, how a Trace resumes, exports and imports is package trace's.

// attachStore persists a new session in the store v names, if any:
// cfg.Trace also writes to it (ENGINE.md §16).
func (b *Bridge) attachStore(cfg *engine.Config, v js.Value, fn string) (*trace.Batcher, error) {
	store, err := b.traceStore(v, fn+": store")
	if store == nil || err != nil {
		return nil, err
	}
	bat := batcher(cfg, store, true)
	teeTrace(cfg, trace.NewWriter(bat, cfg.Meta.Payload.SessionID(), 1))
	return bat, nil
}

// storeArg reads the store argument of a store export; it must name one.
func (b *Bridge) storeArg(v js.Value, fn string) (trace.Store, error) {
	store, err := b.traceStore(v, fn+": store")
	if err == nil && store == nil {
		err = badArg(fn+": store", "want a store, got "+typeName(v))
	}
	return store, err
}

// idArg reads a session id argument.
func idArg(v js.Value, fn string) (string, error) {
	id, err := wantString(v, fn+": id")
	if err != nil {
		return "", err
	}
	if err := trace.ValidateID(id); err != nil {
		return "", badArg(fn+": id", err.Error())
	}
	return id, nil
}

// listSessions is the export listSessions(store) → Promise<[id,
// firstPrompt, lastActivity, size, files][]>, newest first (trace.List);
// the shim makes the SessionSummary objects. Rows are arrays: a Go map
// would give their keys in random order.
func (b *Bridge) listSessions(args []js.Value) (any, error) {
	store, err := b.storeArg(arg(args, 0), "listSessions")
	if err != nil {
		return nil, err
	}
	return b.async("listSessions", func() (any, error) {
		ctx := context.Background()
		list, err := trace.List(ctx, store)
		if err != nil {
			return nil, storeErr("listSessions", err)
		}
		out := make([]any, len(list))
		for i, s := range list {
			out[i] = []any{s.ID, s.FirstPrompt, isoTime(s.LastActivity), s.Size, s.Files, s.Source}
		}
		return out, nil
	}), nil
}

// exportSession is the export exportSession(id, store) →
// Promise<[name, text][]> (trace.ExportTree: its subagents' sessions too; dates in local time, as the
// reference names its directories); the shim makes the TraceFile objects.
func (b *Bridge) exportSession(args []js.Value) (any, error) {
	id, store, err := b.idStore(args, "exportSession")
	if err != nil {
		return nil, err
	}
	return b.async("exportSession", func() (any, error) {
		ctx := context.Background()
		files, err := trace.ExportTree(ctx, store, id, time.Local)
		if err != nil {
			return nil, storeErr("exportSession", err)
		}
		out := make([]any, len(files))
		for i, f := range files {
			out[i] = []any{f.Name, string(f.Data)}
		}
		return out, nil
	}), nil
}

// idStore reads the arguments (id, store) of a store function named fn.
func (b *Bridge) idStore(args []js.Value, fn string) (string, trace.Store, error) {
	id, err := idArg(arg(args, 0), fn)
	if err != nil {
		return "", nil, err
	}
	store, err := b.storeArg(arg(args, 1), fn)
	return id, store, err
}

// readSession is the export readSession(id, store) → Promise<string>: the
// session's records with its subagents' (trace.History) as one JSON array,
// which the shim parses. A child session that does not read is left out
// and said on the console, as a session without onDiagnostic says its
// diagnostics.
func (b *Bridge) readSession(args []js.Value) (any, error) {
	id, store, err := b.idStore(args, "readSession")
	if err != nil {
		return nil, err
	}
	return b.async("readSession", func() (any, error) {
		recs, err := trace.History(context.Background(), store, id)
		if err != nil && recs == nil {
			return nil, storeErr("readSession", err)
		}
		if err != nil {
			js.Global().Get("console").Call("warn", "floe: storage: readSession: "+err.Error())
		}
		out := append(make([]byte, 0, 128*len(recs)+2), '[')
		for i := range recs {
			if i > 0 {
				out = append(out, ',')
			}
			out = recs[i].AppendJSON(out)
		}
		return string(append(out, ']')), nil
	}), nil
}

// importSession is the export importSession(files, store, ids) → Promise<string>:
// files is an array of {name, text} ("" name: one JSONL text), a session's
// with its subagents' sessions' (trace.ImportTree). With ids true it
// stores nothing and returns the ids of the sessions it would store
// (trace.ImportIDs), each ended by a newline, whose locks the shim takes
// before it imports.
func (b *Bridge) importSession(args []js.Value) (any, error) {
	v := arg(args, 0)
	if v.Type() != js.TypeObject || v.Length() == 0 {
		return nil, badArg("importSession: files", "want a non-empty array of {name, text} or a JSONL string, got "+typeName(v))
	}
	files := make([]trace.File, v.Length())
	for i := range files {
		name := "importSession: files[" + strconv.Itoa(i) + "]"
		f := v.Index(i)
		if err := wantObject(f, name); err != nil {
			return nil, err
		}
		n, err := wantString(f.Get("name"), name+".name")
		if err != nil {
			return nil, err
		}
		text, err := wantString(f.Get("text"), name+".text")
		if err != nil {
			return nil, err
		}
		files[i] = trace.File{Name: n, Data: []byte(text)}
	}
	store, err := b.storeArg(arg(args, 1), "importSession")
	if err != nil {
		return nil, err
	}
	if arg(args, 2).Truthy() {
		return lines(trace.ImportIDs(files)), nil
	}
	return b.async("importSession", func() (any, error) {
		id, err := trace.ImportTree(context.Background(), store, files)
		if err != nil {
			return nil, storeErr("importSession", err)
		}
		return id, nil
	}), nil
}

// deleteSession is the export deleteSession(id, store, children) →
// Promise<void>: the session with its subagents' sessions
// (trace.DeleteTree). With children true it deletes nothing and resolves
// to the ids of those child sessions, and of those its pointers name that
// are not stored yet (trace.ChildrenUnstored), each ended by a newline,
// whose locks the shim takes before it deletes.
func (b *Bridge) deleteSession(args []js.Value) (any, error) {
	id, store, err := b.idStore(args, "deleteSession")
	if err != nil {
		return nil, err
	}
	list := arg(args, 2).Truthy()
	return b.async("deleteSession", func() (any, error) {
		ctx := context.Background()
		children, unstored, _ := trace.ChildrenUnstored(ctx, store, id)
		if list { // none for a session not stored: the delete says so
			return lines(append(children, unstored...)), nil
		}
		// A session or subagent object of this program still open on it
		// stores no more: its next run would write a Trace without its
		// session_meta, listed and never resumable (a child not stored
		// yet, one its parent no longer names).
		for _, sid := range append(append(children, unstored...), id) {
			b.dropTraces(ctx, sid, true)
		}
		if err := trace.DeleteTree(ctx, store, id); err != nil {
			return nil, storeErr("deleteSession", err)
		}
		return nil, nil
	}), nil
}

// resumeSession is the export resumeSession(id, spec, store) →
// Promise<sessionRef> behind Floe.resumeSession: spec is createSession's
// without meta and store (the Trace's session_meta is the configuration, E-17.1).
// trace.Resume replays the highest-index file (ENGINE.md §17); the engine
// starts from its Snapshot and continues the same file. Lines the reader
// skipped are diagnostics (P-12).
func (b *Bridge) resumeSession(args []js.Value) (any, error) {
	const fn = "resumeSession"
	id, err := idArg(arg(args, 0), fn)
	if err != nil {
		return nil, err
	}
	s, err := readSpec(arg(args, 1), fn)
	if err != nil {
		return nil, err
	}
	var cfg engine.Config
	if cfg.ToolList, err = readTools(s[specTools], fn+": tools"); err != nil {
		return nil, err
	}
	own, err := b.readCallbacks(&cfg, &s, fn)
	if err != nil {
		return nil, err
	}
	if err := readConfig(&cfg, s[specConfig], fn+": config"); err != nil {
		return nil, err
	}
	if err := needsNewLLM(&cfg, fn); err != nil {
		return nil, err
	}
	store, err := b.storeArg(arg(args, 2), fn)
	if err != nil {
		return nil, err
	}
	return b.async(fn, func() (any, error) {
		ctx := context.Background()
		// What another session object of this program holds after a failed
		// write is stored first, or dropped and reported: this one continues
		// the Trace.
		b.dropTraces(ctx, id, false)
		bat := batcher(&cfg, store, false)
		now := time.Now
		if cfg.Clock != nil {
			now = cfg.Clock.Now
		}
		res, err := trace.Resume(ctx, bat, id, now)
		if err != nil {
			return nil, storeErr(fn, err)
		}
		for _, sk := range res.Parsed.Skipped { // P-12: skipped with a diagnostic
			diagFunc(cfg.OnDiagnostic)(engine.DiagTrace, &trace.Error{Op: "resume", SessionID: id, Index: res.Index,
				Err: errors.New("line " + strconv.Itoa(sk.Line) + " skipped: " + sk.Err.Error())})
		}
		cfg.Meta, cfg.Resume = res.Meta, &res.Snapshot
		if own != nil {
			// A built-in model's context counts on from the session's
			// totals (E-17.5): from zero, every resumed run's
			// token_usage said the session had used one request's.
			cfg.LLM = own(res.Snapshot.SessionTokens)
		} else if h, ok := cfg.LLM.(*jsHistoryLLM); ok {
			t := res.Snapshot.SessionTokens // loadHistory's second argument
			h.resumed = &t
		}
		teeTrace(&cfg, res.Writer)
		s, err := engine.New(cfg)
		if err != nil {
			return nil, &Error{Code: CodeInvalidTrace, Msg: fn + ": " + err.Error()}
		}
		if err := bat.Flush(ctx); err != nil { // what Resume wrote (E-17.4)
			return nil, storeErr(fn, err)
		}
		h := b.sessions.add(&session{s: s, trace: bat, onDiag: cfg.OnDiagnostic})
		return sessionRef(h, s.ID()), nil
	}), nil
}

// dropTraces makes every session and subagent of this program that writes
// the Trace of session id write it no further (drop: a delete), once what
// it queued is stored, or write once more what it holds after a failed
// write (a resume: trace.Batcher.Retry).
func (b *Bridge) dropTraces(ctx context.Context, id string, drop bool) {
	bats := b.traces(id)
	for _, bat := range bats {
		if !drop {
			bat.Retry(id)
		}
		bat.Flush(ctx)
		if drop {
			bat.Drop(id)
		}
	}
}

// traces returns the trace batchers of the sessions and subagents of this
// program that write the Trace of session id.
func (b *Bridge) traces(id string) (bats []*trace.Batcher) {
	b.sessions.mu.Lock()
	for _, s := range b.sessions.m {
		if s.trace != nil && s.s.ID() == id {
			bats = append(bats, s.trace)
		}
	}
	b.sessions.mu.Unlock()
	b.subagents.mu.Lock()
	defer b.subagents.mu.Unlock()
	for _, s := range b.subagents.m {
		if s.s.trace != nil && s.s.s.ID() == id {
			bats = append(bats, s.s.trace)
		}
	}
	return bats
}

// lines joins ids, each ended by a newline.
func lines(ids []string) string {
	out := ""
	for _, id := range ids {
		out += id + "\n"
	}
	return out
}
