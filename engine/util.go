package engine

import (
	"context"
	"errors"
	"github.com/floehq/floe/internal/errf"
	"github.com/floehq/floe/internal/lock"
	"math"
	"runtime"
	"strconv"
	"time"

	"github.com/floehq/floe/engine/omni"
)

// stamper stamps messages (P-1). Not safe for concurrent use: one per
// producer.
type stamper struct {
	_ [0]func() // not comparable: no equality code in floe.wasm
	omni.Stamper
}

func (st *stamper) stamp(c Clock, m *omni.Message) {
	if m.Timestamp != "" {
		return
	}
	st.stampAt(c.Now(), m)
}

// stampAt stamps m with t (a batch of messages entering the stream at one
// instant shares one clock read).
func (st *stamper) stampAt(t time.Time, m *omni.Message) { m.Timestamp = st.Format(t) }

// stampMsg stamps a message on the run goroutine.
func (s *Session) stampMsg(m *omni.Message) { s.stamp.stamp(s.clock, m) }

// diag reports a diagnostic, if anyone listens.
func (s *Session) diag(kind DiagnosticKind, err error) {
	s.report(Diagnostic{Kind: kind, Err: err})
}

// report calls OnDiagnostic. A panic in it is dropped: there is nowhere
// left to report it, and it may come inside recoverTo, on a goroutine of
// the engine's, where it would end the program.
func (s *Session) report(d Diagnostic) {
	f := s.cfg.OnDiagnostic
	if f == nil {
		return
	}
	defer func() { _ = recover() }()
	f(d)
}

// recoverTo is the one recover helper, deferred at goroutine roots and
// callback boundaries: a panic is reported as a "panic" diagnostic with its
// stack, then handed to onPanic to become a protocol answer.
func recoverTo(s *Session, where string, onPanic func(any)) {
	v := recover()
	if v == nil {
		return
	}
	if s.cfg.OnDiagnostic != nil {
		s.report(Diagnostic{Kind: DiagPanic, Err: errf.Errorf("%s: panic: %s", where, panicText(v)), Stack: stack()})
	}
	onPanic(v)
}

func panicText(v any) string { return errf.Sprintf("%v", v) }

// traceWrite writes one record, performing a pending rotation first
// (E-13.11). Failures are diagnostics only (E-16.7).
func (s *Session) traceWrite(ctx context.Context, m omni.Message) {
	if s.rotatePending {
		s.rotatePending = false
		if s.cfg.Trace != nil {
			if err := s.sink("rotate", func() error { return s.cfg.Trace.Rotate() }); err != nil {
				s.diag(DiagTrace, errf.Errorf("trace: rotate: %w", err))
			}
		}
		meta := s.cfg.Meta
		s.stampMsg(&meta)
		s.write(ctx, meta)
		if s.cfg.ToolList != nil {
			tl := omni.ToolListReadyMsg(s.cfg.ToolList)
			s.stampMsg(&tl)
			s.write(ctx, tl)
		}
	}
	s.write(ctx, m)
}

func (s *Session) write(ctx context.Context, m omni.Message) {
	if s.cfg.Trace == nil {
		return
	}
	// Every record is written, those that end an aborted run too, so the
	// sink never sees the run's cancellation: checking ctx.Err() here and
	// passing the run's context on while it was live let an abort that
	// landed during the sink's Write drop a record streamed before it.
	if err := s.sink("write", func() error { return s.cfg.Trace.Write(context.WithoutCancel(ctx), m) }); err != nil {
		s.diag(DiagTrace, errf.Errorf("trace: write %s: %w", describe(&m), err))
	}
}

// sink calls the TraceSink: a panic in it (a nil *trace.Writer in the
// interface, say) is the write's error, a diagnostic as a failed write is
// (E-16.7). Recovered only at the goroutine's root, it came back when the
// run's recovery wrote its abort to the same sink, into the caller's loop.
func (s *Session) sink(op string, f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = errf.Errorf("the sink's %s panicked: %s", op, panicText(v))
		}
	}()
	return f()
}

func describe(m *omni.Message) string {
	if m.Payload.Type == "" {
		return m.Type
	}
	return m.Payload.Type
}

// ensureMeta writes the session_meta once (E-3.6.1, E-14.1).
func (s *Session) ensureMeta(ctx context.Context) {
	if s.metaWritten {
		return
	}
	s.metaWritten = true
	meta := s.cfg.Meta
	s.stampMsg(&meta)
	s.traceWrite(ctx, meta)
}

// injectHistory hands a resumed history to the LLM before its first
// request, once, and only when non-empty (E-17.6). A load the run's abort
// cut short is not a failure: the next request hands it again.
func (s *Session) injectHistory(ctx context.Context) {
	h := s.history
	if len(h) == 0 {
		return
	}
	s.history = nil
	if l, ok := s.llm.(HistoryLoader); ok {
		if err := l.LoadHistory(ctx, h); err != nil {
			if ctx.Err() != nil {
				s.history = h
				return
			}
			s.diag(DiagLLM, errf.Errorf("load history: %w", err))
		}
		return
	}
	// A model that cannot load it continues without the conversation:
	// said, not silent (E-17.5).
	s.diag(DiagLLM, errf.Errorf("llm: the resumed history (%d messages) is not handed to the model: it has no LoadHistory (loadHistory in JavaScript); it continues without it", len(h)))
}

func (s *Session) maxReconnects() int { return orDefault(s.cfg.MaxReconnects, 5) }

func (s *Session) compactionMaxReconnects() int {
	if s.cfg.CompactionMaxReconnects == 0 {
		return s.maxReconnects()
	}
	return orDefault(s.cfg.CompactionMaxReconnects, 5)
}

// orDefault maps 0 to def and negatives to 0.
func orDefault(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// delayMs is min(base × 2^(n−1), max) for the n-th retry (§2).
func (s *Session) delayMs(n int) int {
	base := orDefault(s.cfg.ReconnectBackoffMs, 2000)
	ceil := orDefault(s.cfg.ReconnectBackoffMaxMs, 30000)
	d := base
	for i := 1; i < n && d < ceil; i++ {
		if d > ceil/2 { // d*2 passes the ceiling, or would overflow
			return ceil
		}
		d *= 2
	}
	return min(d, ceil)
}

// retryDelayMs is delayMs(n), or the wait o's provider asked for when
// it is longer (Outcome.RetryAfter).
func (s *Session) retryDelayMs(n int, o Outcome) int {
	return int(max(int64(s.delayMs(n)), min(o.RetryAfter.Milliseconds(), math.MaxInt32)))
}

// delay is retryDelayMs as a duration, up to the longest whole milliseconds
// one holds.
func (s *Session) delay(n int, o Outcome) time.Duration {
	return time.Duration(min(int64(s.retryDelayMs(n, o)), math.MaxInt64/int64(time.Millisecond))) * time.Millisecond
}

func itoa(n int) string { return strconv.Itoa(n) }

func contextWithCancel(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithCancel(ctx)
}

// DefaultAbortGrace is Config.AbortGrace's default.
const DefaultAbortGrace = time.Second

func (s *Session) abortGrace() time.Duration {
	if g := s.cfg.AbortGrace; g != 0 {
		return g
	}
	return DefaultAbortGrace
}

// graceMessage is the failure of a callback abandoned after its abort.
func graceMessage(what string, grace time.Duration) string {
	return what + " did not finish within " + strconv.FormatInt(grace.Milliseconds(), 10) + " ms of the abort"
}

// systemTimer is the default Timer.
type systemTimer struct{}

func (systemTimer) AfterFunc(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }

// neverTimer is the Timer of a negative AbortGrace: nothing is abandoned.
type neverTimer struct{}

func (neverTimer) AfterFunc(time.Duration, func()) func() bool { return func() bool { return true } }

// grace watches one callback (a request's LLM call or a tool execution)
// for the abort grace: once the callback's context is done it arms a timer
// of AbortGrace on the session's Timer; if the timer fires before stop,
// gone is closed and abandon runs. One value per callback holds what the
// watch needs.
type grace struct {
	s         *Session
	gone      chan struct{} // the callback's Abandoned
	abandon   abandoner
	mu        lock.Mutex
	armed     bool        // arm ran (it arms once)
	returned  bool        // stop was called
	stopTimer func() bool // set once the timer is armed
	stopWatch func() bool // a context.AfterFunc's stop, when not in a run's graces

	reg        *graces // the run's registry watching it, set before the callback starts
	in         *graces // reg while g is linked in it; guarded by reg.mu
	prev, next *grace  // guarded by reg.mu
}

// graces is a run's registry of the watches whose callback's context is
// the run's own: the run's single context.AfterFunc arms them all. One
// context.AfterFunc a callback cost two allocations, and the parent
// context's map of children on every request and tool call.
type graces struct {
	_     [0]func() // not comparable: no equality code in floe.wasm
	mu    lock.Mutex
	fired bool   // the run's context is done
	head  *grace // the live watches
}

// add registers g, or arms it at once when the run's context is done.
func (gs *graces) add(g *grace) {
	gs.mu.Lock()
	if gs.fired {
		gs.mu.Unlock()
		g.arm()
		return
	}
	g.in, g.next = gs, gs.head
	if gs.head != nil {
		gs.head.prev = g
	}
	gs.head = g
	gs.mu.Unlock()
}

// remove forgets g (stop).
func (gs *graces) remove(g *grace) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if g.in != gs {
		return
	}
	if g.prev != nil {
		g.prev.next = g.next
	} else {
		gs.head = g.next
	}
	if g.next != nil {
		g.next.prev = g.prev
	}
	g.in, g.prev, g.next = nil, nil, nil
}

// fire arms every watch: the run's context is done. The run's
// context.AfterFunc calls it.
func (gs *graces) fire() {
	gs.mu.Lock()
	gs.fired = true
	var live []*grace
	for g := gs.head; g != nil; g = g.next {
		live = append(live, g)
	}
	gs.mu.Unlock()
	for _, g := range live {
		g.arm() // a watch stopped meanwhile has returned: arm does nothing
	}
}

// An abandoner is what a grace abandons: a driver or a tool run (no
// closure to allocate for each), or an abandonFunc.
type abandoner interface{ abandon() }

// abandonFunc is an abandoner of a function.
type abandonFunc func()

func (f abandonFunc) abandon() { f() }

// watchGrace starts watching ctx for one callback; abandon runs (after gone
// is closed) when the callback is abandoned. The callback's Abandoned is
// g.gone. When ctx is the run's own context (its Done is the run's) the
// run's registry watches it; otherwise a context.AfterFunc does. After
// g.stop returns no timer is pending.
func (r *run) watchGrace(ctx context.Context, abandon abandoner) *grace {
	return r.watchGraceIn(ctx, new(grace), abandon)
}

// watchGraceIn is watchGrace with the watch in g, a zero grace the caller
// holds (a tool call's, in its toolRun: one allocation fewer a call).
func (r *run) watchGraceIn(ctx context.Context, g *grace, abandon abandoner) *grace {
	g.s, g.gone, g.abandon = r.s, make(chan struct{}), abandon
	if r.done != nil && ctx.Done() == r.done {
		g.reg = &r.graces
		r.graces.add(g)
	} else {
		g.stopWatch = context.AfterFunc(ctx, g.arm)
	}
	return g
}

// arm starts the grace timer once, unless the callback has returned.
func (g *grace) arm() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.returned && !g.armed {
		g.armed = true
		g.stopTimer = g.s.timer.AfterFunc(g.s.abortGrace(), g.expire)
	}
}

// expire abandons the callback: gone is closed, then abandon runs. The
// timer is armed once and fires at most once.
func (g *grace) expire() {
	close(g.gone)
	g.abandon.abandon()
}

// stop ends the watch: the callback returned.
func (g *grace) stop() {
	if g.stopWatch != nil {
		g.stopWatch()
	} else if g.reg != nil {
		g.reg.remove(g)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.returned = true
	if g.stopTimer != nil {
		g.stopTimer()
	}
}

// engineOnly reports whether only the engine may produce m (when it has no
// origin, i.e. is not forwarded subagent traffic): the run's events and the
// session's own session_meta.
func engineOnly(m *omni.Message) bool {
	if len(m.Origin) > 0 {
		return false
	}
	switch m.Type {
	case omni.TypeSessionMeta:
		return true
	case omni.TypeEventMsg:
		switch m.Payload.Type {
		case omni.RequestBegin, omni.RequestEnd, omni.ApprovalDecision, omni.Abort,
			omni.CompactionBegin, omni.CompactionEnd, omni.ToolListReady, omni.Subagent:
			return true
		}
	}
	return false
}

// dropForeign reports, with a diagnostic, a message that the LLM (fromTool
// false) or the tool of call id may not produce, which is dropped: a
// message only the engine produces (engineOnly), or, from the LLM, a tool
// output (only tools answer calls). partial is m.IsPartial(), which the
// caller needs too. It allocates nothing for a message it keeps.
func (s *Session) dropForeign(fromTool bool, id string, m *omni.Message, partial bool) bool {
	if partial && len(m.Origin) == 0 && (fromTool || m.Payload.Type != omni.PartialToolCallOutput) {
		return false // the bulk of a stream
	}
	why := " dropped: only the engine produces it"
	switch {
	case engineOnly(m):
	case !fromTool && len(m.Origin) == 0 && (m.IsModel(omni.ToolCallOutput) || m.IsModel(omni.PartialToolCallOutput)):
		why = " for " + errf.Quote(m.Payload.ToolCallID) + " dropped: only a tool answers a call"
	default:
		return false
	}
	kind, who := DiagLLM, "llm" // named only when dropping: a string made for every message was an allocation
	if fromTool {
		kind, who = DiagTool, "tool "+id
	}
	s.diag(kind, errors.New(who+": "+describe(m)+why))
	return true
}

// foldImages applies Config.FoldInputImages to one steering entry that
// holds an image (E-11.6).
func (s *Session) foldImages(ctx context.Context, in []omni.Message) (out []omni.Message) {
	f := s.cfg.FoldInputImages
	if f == nil || !hasImage(in) {
		return in
	}
	var err error
	func() {
		defer recoverTo(s, "foldInputImages", func(v any) { err = errors.New("panic: " + panicText(v)) })
		out, err = f(ctx, append([]omni.Message(nil), in...))
	}()
	if err == nil && hasImage(out) {
		err = errors.New("the result still holds an image_url")
	}
	if err == nil {
		return out
	}
	s.diag(DiagLLM, errors.New("foldInputImages: "+err.Error()+"; the steering entry's images are dropped"))
	out = out[:0:0]
	for _, m := range in {
		if !m.IsModel(omni.ImageURL) {
			out = append(out, m)
		}
	}
	return append(out, omni.UserText("[images not attached: "+err.Error()+"]"))
}
func hasImage(in []omni.Message) bool {
	for i := range in {
		if in[i].IsModel(omni.ImageURL) {
			return true
		}
	}
	return false
}

// stack is the calling goroutine's stack (runtime/debug.Stack without the
// os package it imports, which the WebAssembly build does without).
func stack() []byte {
	buf := make([]byte, 16<<10)
	return buf[:runtime.Stack(buf, false)]
}
