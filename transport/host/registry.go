package host

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/transport"
)

// Wiring is what a model factory gives one session.
type Wiring struct {
	LLM    engine.LLM
	NewLLM engine.LLMFactory // for compaction; nil = none
	// Resume, when set, makes the model context of a resumed session in
	// LLM's place, starting from the session totals its Trace holds
	// (ENGINE.md E-17.5: a provider adapter's SessionTokens); from LLM,
	// a fresh context, every resumed run's token_usage restarted at zero.
	Resume      engine.LLMFactory
	Environment engine.Environment
	Tools       []omni.ToolDefinition
	Compaction  *engine.Compaction
	MaxTurns    int
}

// Config configures a Registry.
type Config struct {
	// Store is required: every session's Trace. A store with a method
	// Lock(id string) (release func(), err error) (trace.FileStore) holds
	// each session across processes around its create, resume, run,
	// compaction and delete: a Lock error wrapping trace.ErrBusy is
	// session_busy (409), any other store_failed (500, a lock file that
	// cannot be made or read: trace.ErrLockFile), and one wrapping
	// trace.ErrLockLost lets the engine kept warm go, so that the next run
	// resumes from the Trace.
	Store trace.Store
	Hub   *transport.Hub // required: the channels
	// Wire returns a fresh model context and tools for a session (created
	// or resumed). Required.
	Wire func(meta omni.Message) (Wiring, error)
	// NewMeta returns the session_meta of a new session at now; id is ""
	// unless the client chose one. Required.
	NewMeta func(id string, now time.Time) omni.Message
	// ReadOnly reports whether a tool only reads (read-only mode allows
	// it without asking).
	ReadOnly func(tool string) bool
	Mode     string       // default approval mode; "" = ask
	Clock    engine.Clock // nil = the system clock
	// User is the per-user channel's key suffix ("user:<User>"); "" = "local".
	User string
	// OnDiagnostic receives the sessions' diagnostics, and one of kind
	// DiagTask for each queued task that could not start.
	OnDiagnostic func(engine.Diagnostic)
	// KeepWarm is how many idle sessions keep their engine and model
	// context (the history the model was handed) between runs; past it,
	// the one idle the longest lets them go and resumes from its Trace at
	// its next run or compaction, as after a restart. 0 = DefaultKeepWarm;
	// < 0 = none.
	KeepWarm int
	// KeepWarmBytes bounds the idle sessions kept warm by size as well:
	// past it, summed over their Traces' current files (the bytes written
	// since their last compaction, of which a provider's model keeps its
	// own copy), the one idle the longest lets its engine go, as
	// past KeepWarm. A session whose own file is larger lets it go as soon
	// as it is idle, and the others stay. 0 = no bound.
	KeepWarmBytes int64
	// Metrics, when set, counts the runs, model requests, tool calls,
	// pending approvals and Trace writes of the sessions (nil: none).
	Metrics *transport.Metrics
	// OnRunEnd, when set, is told of each run or compaction that ended,
	// on the run's goroutine, after its session is idle again.
	OnRunEnd func(RunEnd)
}

// RunEnd describes a run or compaction that ended (Config.OnRunEnd).
type RunEnd struct {
	SessionID  string
	Compaction bool
	// Status is the run's: "aborted" after an abort, else its last
	// request's or compaction's status ("completed" when it made none).
	Status   string
	Duration time.Duration
}

// DefaultKeepWarm is Config.KeepWarm's default.
const DefaultKeepWarm = 8

// Registry is the set of sessions a server hosts.
type Registry struct {
	cfg Config

	// mu guards hosts and opening, and is never held across a store
	// read: a session being opened or created is in opening until it is
	// in hosts (or is not), and whoever asks for it meanwhile waits for
	// that one open, not for the registry.
	mu      sync.Mutex
	hosts   map[string]*Host
	opening map[string]*opening
	// down: Shutdown was called, and no run or compaction starts.
	down atomic.Bool

	// warm holds the idle hosts that keep an engine, each with the order
	// it went idle in and the bytes of its Trace's current file, summed in
	// warmBytes; a leaf lock, taken with a host's mu held.
	warmMu    sync.Mutex
	warmSeq   uint64
	warm      map[*Host]warmth
	warmBytes int64
}

// opening is a session being opened (Get) or created (Create): done is
// closed once it is settled, in hosts or not; err is the answer of an open
// that failed, for those that waited on it (nil: they ask again).
type opening struct {
	done chan struct{}
	err  error
}

// wait waits for o to be settled, then returns true and o.err, or for
// ctx (false: ctx is done).
func (o *opening) wait(ctx context.Context) (settled bool, err error) {
	select {
	case <-o.done:
		return true, o.err
	case <-ctx.Done():
		return false, nil
	}
}

// waitErr is a caller's error when its ctx ended while it waited on
// another's opening of session id.
func waitErr(ctx context.Context, id string) error {
	return fmt.Errorf("session %s: waiting for it to open: %w", trace.QuoteID(id), ctx.Err())
}

// claim returns the session id's opening, made by this call (mine) or
// another's under way, unless id is in hosts; r.mu is held.
func (r *Registry) claim(id string) (h *Host, o *opening, mine bool) {
	if h := r.hosts[id]; h != nil {
		return h, nil, false
	}
	if o := r.opening[id]; o != nil {
		return nil, o, false
	}
	o = &opening{done: make(chan struct{})}
	r.opening[id] = o
	return nil, o, true
}

// settle ends the opening o of session id made by claim: h, when not nil,
// goes into hosts; err is told to those that waited when share is set.
func (r *Registry) settle(id string, o *opening, h *Host, err error, share bool) {
	r.mu.Lock()
	if h != nil {
		r.hosts[id] = h
	}
	delete(r.opening, id)
	if share {
		o.err = err
	}
	r.mu.Unlock()
	close(o.done)
}

type warmth struct {
	seq   uint64
	bytes int64
}

// NewRegistry returns an empty registry over cfg.Store; stored sessions are
// loaded on first use.
func NewRegistry(cfg Config) (*Registry, error) {
	if cfg.Store == nil || cfg.Hub == nil || cfg.Wire == nil || cfg.NewMeta == nil {
		return nil, errors.New("host: Config needs Store, Hub, Wire and NewMeta")
	}
	if cfg.Mode == "" {
		cfg.Mode = ModeAsk
	}
	if !ValidMode(cfg.Mode) {
		return nil, errors.New("host: Config.Mode: " + quote(cfg.Mode) + " is not an approval mode (ask, allow-all, deny-all or read-only)")
	}
	if cfg.User == "" {
		cfg.User = "local"
	}
	if cfg.KeepWarm == 0 {
		cfg.KeepWarm = DefaultKeepWarm
	}
	if cfg.KeepWarmBytes < 0 {
		return nil, errors.New("host: Config.KeepWarmBytes: want 0 (no bound) or more")
	}
	return &Registry{cfg: cfg, hosts: map[string]*Host{}, opening: map[string]*opening{}, warm: map[*Host]warmth{}}, nil
}

func (r *Registry) now() time.Time {
	if r.cfg.Clock != nil {
		return r.cfg.Clock.Now()
	}
	return time.Now()
}

// UserChannel returns the per-user channel (T-2).
func (r *Registry) UserChannel() *transport.Channel { return r.cfg.Hub.Channel("user:" + r.cfg.User) }

func (r *Registry) announceState(id, state string) {
	r.UserChannel().Publish(transport.SessionState(id, state, omni.FormatTimestamp(r.now()), true))
}

// Create makes a new session (its session_meta is written to the Trace at
// once, so it survives a restart) with the given approval mode ("" = the
// default).
func (r *Registry) Create(ctx context.Context, id, mode string) (*Host, error) {
	if mode == "" {
		mode = r.cfg.Mode
	}
	if !ValidMode(mode) {
		return nil, badRequest("approvalMode: " + quote(mode) + " is not one of ask, allow-all, deny-all, read-only")
	}
	if id != "" {
		if err := checkNewID(id); err != nil {
			return nil, err
		}
	}
	meta := r.cfg.NewMeta(id, r.now())
	id = meta.Payload.SessionID()
	for {
		r.mu.Lock()
		h, o, mine := r.claim(id)
		r.mu.Unlock()
		if h != nil {
			return nil, exists(id)
		}
		if mine {
			return r.create(ctx, id, mode, meta, o)
		}
		if settled, _ := o.wait(ctx); !settled {
			return nil, waitErr(ctx, id)
		}
	}
}

// create is Create's work, with session id claimed (o); whoever waited on
// it asks again.
func (r *Registry) create(ctx context.Context, id, mode string, meta omni.Message, o *opening) (h *Host, err error) {
	defer func() { r.settle(id, o, h, nil, false) }()
	release, err := r.lock(id)
	if err != nil {
		return nil, err
	}
	defer release()
	if _, err := r.cfg.Store.Files(ctx, id); err == nil {
		return nil, exists(id)
	}
	w := trace.NewWriter(r.cfg.Store, id, 1)
	if err := w.Write(context.WithoutCancel(ctx), meta); err != nil {
		return nil, newErr(500, "store_failed", err.Error())
	}
	nh := r.newHost(id, mode)
	if err := nh.startEngine(meta, w, &engine.Snapshot{MetaWritten: true}); err != nil {
		return nil, err
	}
	r.UserChannel().Publish(transport.Simple("session_created", "projectId", "", "agentId", "", "sessionId", id, "source", "api"))
	return nh, nil
}

func (r *Registry) newHost(id, mode string) *Host {
	return &Host{reg: r, id: id, state: transport.StateIdle, mode: mode, deleting: make(chan struct{}, 1)}
}

// startEngine gives h an engine over w from snap; h.mu is held, or h is
// not shared yet.
func (h *Host) startEngine(meta omni.Message, w engine.TraceSink, snap *engine.Snapshot) error {
	r := h.reg
	wire, err := r.cfg.Wire(meta)
	if err != nil {
		return newErr(500, "model_failed", err.Error())
	}
	llm := wire.LLM
	if wire.Resume != nil && snap.SessionTokens != (omni.TokenCounts{}) {
		llm = wire.Resume(snap.SessionTokens)
	}
	sess, err := engine.New(engine.Config{
		Meta: meta, LLM: llm, NewLLM: wire.NewLLM, Environment: wire.Environment, ToolList: wire.Tools,
		Compaction: wire.Compaction, MaxTurns: wire.MaxTurns, Clock: r.cfg.Clock, Trace: sink{h, w}, Resume: snap,
		OnDiagnostic: r.cfg.OnDiagnostic,
	})
	if err != nil {
		return newErr(500, "engine_failed", err.Error())
	}
	h.sess = sess
	return nil
}

// resume gives h its engine, resumed from the Trace (ENGINE.md §17), when
// it has none: at its first run or compaction, not when it is opened, so
// that a session only looked at (its page, its stream, its history) holds
// none of its history in memory. h.mu and the session's lock are held (a
// resume may write, E-17.4).
func (h *Host) resume() error {
	if h.sess != nil {
		return nil
	}
	r := h.reg
	res, err := trace.Resume(context.Background(), r.cfg.Store, h.id, r.now)
	if errors.Is(err, trace.ErrNotFound) {
		return notFound(h.id)
	}
	if err != nil {
		return newErr(500, "resume_failed", err.Error())
	}
	if err := h.startEngine(res.Meta, res.Writer, &res.Snapshot); err != nil {
		return err
	}
	// The file the session goes on writing, which its history was read
	// from: its size weighs the session kept warm (Config.KeepWarmBytes).
	h.traceBytes = 0
	if files, err := r.cfg.Store.Files(context.Background(), h.id); err == nil && len(files) > 0 {
		h.traceBytes = files[len(files)-1].Size
	}
	return nil
}

// Get returns the host of id, opening it when it is not loaded (its engine
// is resumed from the Trace at its first run or compaction); ErrNotFound
// (naming id) when the store has no such session. Gets of a session being
// opened wait for that open and share its answer; one whose ctx ends
// meanwhile returns ctx's error.
func (r *Registry) Get(ctx context.Context, id string) (*Host, error) {
	if trace.ValidateID(id) != nil {
		return nil, notFound(id)
	}
	for {
		r.mu.Lock()
		h, o, mine := r.claim(id)
		r.mu.Unlock()
		if h != nil {
			return h, nil
		}
		if mine {
			return r.open(ctx, id, o)
		}
		settled, err := o.wait(ctx)
		if !settled {
			return nil, waitErr(ctx, id)
		}
		if err != nil {
			return nil, err
		}
	}
}

// open is Get's store read, with session id claimed (o); its answer is
// told to whoever waited on it, but for one cut short by this caller's ctx
// (they try again).
func (r *Registry) open(ctx context.Context, id string, o *opening) (h *Host, err error) {
	defer func() { r.settle(id, o, h, err, ctx.Err() == nil) }()
	files, err := r.cfg.Store.Files(ctx, id)
	if errors.Is(err, trace.ErrNotFound) || err == nil && len(files) == 0 {
		return nil, notFound(id)
	}
	if err != nil {
		return nil, newErr(500, "store_failed", err.Error())
	}
	return r.newHost(id, r.cfg.Mode), nil
}

// idle notes that h, which has an engine, went idle; it returns the hosts
// to cool (Config.KeepWarm, Config.KeepWarmBytes). h.mu is held.
func (r *Registry) idle(h *Host) []*Host {
	r.warmMu.Lock()
	defer r.warmMu.Unlock()
	r.warmSeq++
	r.unwarm(h)
	var out []*Host
	if r.cfg.KeepWarmBytes > 0 && h.traceBytes > r.cfg.KeepWarmBytes {
		// Past the bound alone, h lets its own engine go; the others,
		// within it, stay as they were.
		return append(out, h)
	}
	r.warm[h] = warmth{r.warmSeq, h.traceBytes}
	r.warmBytes += h.traceBytes
	for len(r.warm) > max(r.cfg.KeepWarm, 0) || r.cfg.KeepWarmBytes > 0 && r.warmBytes > r.cfg.KeepWarmBytes {
		var oldest *Host
		for c, w := range r.warm {
			if oldest == nil || w.seq < r.warm[oldest].seq {
				oldest = c
			}
		}
		out = append(out, oldest)
		r.unwarm(oldest)
	}
	return out
}

// unwarm takes h out of warm; r.warmMu is held.
func (r *Registry) unwarm(h *Host) {
	if w, ok := r.warm[h]; ok {
		r.warmBytes -= w.bytes
		delete(r.warm, h)
	}
}

// busy takes h out of the idle hosts; h.mu is held.
func (r *Registry) busy(h *Host) {
	r.warmMu.Lock()
	r.unwarm(h)
	r.warmMu.Unlock()
}

// rewarmed reports whether h went idle again after c was chosen.
func (r *Registry) rewarmed(h *Host) bool {
	r.warmMu.Lock()
	defer r.warmMu.Unlock()
	_, ok := r.warm[h]
	return ok
}

// cool lets the engine of each host go (see Config.KeepWarm) unless it
// went busy, or idle again, since it was chosen. No host's mu is held.
func cool(hosts []*Host) {
	for _, h := range hosts {
		h.mu.Lock()
		if h.sess != nil && h.state == transport.StateIdle && len(h.untraced) == 0 && !h.reg.rewarmed(h) {
			h.sess.Close()
			h.sess = nil
		}
		h.mu.Unlock()
	}
}

// locker is a Store that holds a session for one writer across processes
// (trace.FileStore: a lock file in its directory).
type locker interface {
	Lock(id string) (release func(), err error)
}

// lock holds session id against other processes on the same store while it
// is written: a create, a resume, a run or compaction, a delete.
// session_busy names the process that holds it (a Lock error wrapping
// trace.ErrBusy or trace.ErrLockLost); any other Lock error is
// store_failed, naming its cause.
func (r *Registry) lock(id string) (func(), error) {
	l, ok := r.cfg.Store.(locker)
	if !ok {
		return func() {}, nil
	}
	release, err := l.Lock(id)
	if err != nil {
		why := err
		var te *trace.Error
		if errors.As(err, &te) {
			why = te.Err
		}
		e := newErr(409, ErrBusy.Code, "session "+trace.QuoteID(id)+" is busy: "+strings.TrimPrefix(why.Error(), "session busy: "))
		if !errors.Is(err, trace.ErrBusy) && !errors.Is(err, trace.ErrLockLost) {
			// Not a holder: the lock itself failed (its file cannot be
			// made or read), which session_busy misnamed.
			e = newErr(500, "store_failed", "session "+trace.QuoteID(id)+" cannot be locked: "+why.Error())
		}
		e.cause = err
		return nil, e
	}
	return release, nil
}

// Info is one row of the session list.
type Info struct {
	ID           string
	FirstPrompt  string
	LastActivity time.Time
	State        string
}

// List returns every stored session, newest activity first.
func (r *Registry) List(ctx context.Context) ([]Info, error) {
	sums, err := trace.List(ctx, r.cfg.Store)
	if err != nil {
		return nil, newErr(500, "store_failed", err.Error())
	}
	out := make([]Info, 0, len(sums))
	for _, s := range sums {
		info := Info{ID: s.ID, FirstPrompt: s.FirstPrompt, LastActivity: s.LastActivity, State: transport.StateIdle}
		r.mu.Lock()
		h := r.hosts[s.ID]
		r.mu.Unlock()
		if h != nil { // asked with no lock of the registry's held
			info.State = h.State()
		}
		out = append(out, info)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].LastActivity.After(out[j].LastActivity) })
	return out, nil
}

// Shutdown stops the sessions of a server going down: from then on no run
// or compaction starts (ErrShuttingDown, for good: a Registry is not
// started again), and each one in flight is aborted, its pending approvals
// denied, as DELETE aborts it ("aborted by user": ENGINE.md §18 has no
// other reason for an abort from outside). It returns nil once they have
// ended, their Traces written and their sessions' locks released, or
// ctx's error when ctx is done first, a session whose Trace write hangs
// included (its abort waits for the write, on a goroutine of its own that
// ends with it). The rest still answers (Get, List,
// History, Delete), and the channels are left open: close the Hub
// (transport.Hub.Close) next, so that each stream gets its run's end,
// then ends, as server.Server.Shutdown does. It may be called more than
// once.
func (r *Registry) Shutdown(ctx context.Context) error {
	r.down.Store(true)
	r.mu.Lock()
	hosts := make([]*Host, 0, len(r.hosts))
	for _, h := range r.hosts {
		hosts = append(hosts, h)
	}
	r.mu.Unlock()
	// Each on its own goroutine: an Abort waits for a Trace write under
	// way, which may hang (a file system that stopped answering), and
	// neither the other sessions' aborts nor ctx's end wait for that one.
	// Such a goroutine ends when the write returns.
	ended := make(chan error, len(hosts))
	for _, h := range hosts {
		go func() {
			h.Abort()
			ended <- h.Wait(ctx)
		}()
	}
	for range hosts {
		select {
		case err := <-ended:
			if err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Counts are the sessions a Registry holds in memory as of one instant.
type Counts struct {
	Open    int // opened or created since the start (or since their delete)
	Running int // with a run or compaction in flight
	Warm    int // idle, keeping their model context (Config.KeepWarm)
}

// Counts counts the sessions in memory. It takes no session's lock, so a
// Trace write that hangs does not hold it.
func (r *Registry) Counts() Counts {
	r.mu.Lock()
	c := Counts{Open: len(r.hosts)}
	for _, h := range r.hosts {
		if h.State() != transport.StateIdle {
			c.Running++
		}
	}
	r.mu.Unlock()
	r.warmMu.Lock()
	c.Warm = len(r.warm)
	r.warmMu.Unlock()
	return c
}

// Down reports whether Shutdown or Drain was called.
func (r *Registry) Down() bool { return r.down.Load() }

// Drain refuses every run and compaction from now on (ErrShuttingDown),
// as Shutdown does, and lets those in flight go on: a server going down
// drains, then calls Shutdown to abort those left.
func (r *Registry) Drain() { r.down.Store(true) }

// Idle blocks until no run or compaction is in flight, or ctx is done
// (its error). Call it after Drain, so that none starts meanwhile.
func (r *Registry) Idle(ctx context.Context) error {
	r.mu.Lock()
	hosts := make([]*Host, 0, len(r.hosts))
	for _, h := range r.hosts {
		hosts = append(hosts, h)
	}
	r.mu.Unlock()
	for _, h := range hosts {
		if err := h.Wait(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Delete aborts the session's run, waits for it to end, closes its channel
// and removes its Trace; the user channel's session_state then says it has
// no Trace. The run ends as a user's abort does ("aborted by user": ENGINE.md
// §18 has no other reason for it). Deletes of one session go one at a time;
// one that finds it deleted says not found.
func (r *Registry) Delete(ctx context.Context, id string) error {
	h, err := r.Get(ctx, id)
	if err != nil {
		return err
	}
	select {
	case h.deleting <- struct{}{}:
	default: // another Delete is under way: wait for it
		select {
		case h.deleting <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	defer func() { <-h.deleting }()
	r.mu.Lock()
	gone := r.hosts[id] != h
	r.mu.Unlock()
	if gone {
		return notFound(id)
	}
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.Abort()
	var release func()
	err = h.Wait(ctx)
	if err == nil {
		release, err = r.lock(id)
	}
	if err != nil { // not deleted: the session goes on
		h.mu.Lock()
		h.closed = false
		h.lockLost(err) // as a run's take would: the loss is said once
		h.mu.Unlock()
		return err
	}
	defer release()
	h.mu.Lock()
	if h.sess != nil {
		h.sess.Close()
	}
	h.mu.Unlock()
	r.busy(h)
	// The Trace goes before the host: a Get in between would find the
	// Trace and make a new host, kept for a session that no longer is.
	err = r.cfg.Store.Delete(ctx, id)
	r.mu.Lock()
	delete(r.hosts, id)
	r.mu.Unlock()
	h.mu.Lock()
	h.deleted = true // no stream subscribes to its channel from now on
	h.mu.Unlock()
	r.cfg.Hub.Remove(id)
	if err != nil && !errors.Is(err, trace.ErrNotFound) {
		return newErr(500, "store_failed", err.Error())
	}
	r.UserChannel().Publish(transport.SessionState(id, transport.StateIdle, omni.FormatTimestamp(r.now()), false))
	return nil
}

// History returns the session's Trace records, every file in order
// (session_meta lines included), read tolerantly (P-12).
func (r *Registry) History(ctx context.Context, id string) ([]omni.Message, error) {
	out, _, err := r.history(ctx, id)
	return out, err
}

// history is History, and where the records of the last file start.
func (r *Registry) history(ctx context.Context, id string) (out []omni.Message, last int, err error) {
	files, err := r.cfg.Store.Files(ctx, id)
	if errors.Is(err, trace.ErrNotFound) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, newErr(500, "store_failed", err.Error())
	}
	for _, f := range files {
		data, err := r.cfg.Store.ReadFile(ctx, id, f.Index)
		if err != nil {
			return nil, 0, newErr(500, "store_failed", err.Error())
		}
		p, err := trace.ReadFile(data)
		if err != nil {
			return nil, 0, newErr(500, "store_failed", err.Error())
		}
		last = len(out)
		if out == nil {
			out = p.Records // one file, most sessions: not copied
		} else {
			out = append(out, p.Records...)
		}
	}
	return out, last, nil
}

// compactionOpen reports whether records (a Trace file's) end inside a
// compaction: one a crash cut off, which a resume closes (E-17.4).
func compactionOpen(records []omni.Message) bool {
	for i := len(records) - 1; i >= 0; i-- {
		switch m := &records[i]; {
		case m.IsEvent(omni.CompactionEnd):
			return false
		case m.IsEvent(omni.CompactionBegin):
			return true
		}
	}
	return false
}
