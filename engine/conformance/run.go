package conformance

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/trace"
)

// DefaultTimeout is the safety timeout of one scenario.
const DefaultTimeout = 30 * time.Second

// Options configure [Run]. The zero value is ready to use.
type Options struct {
	// TraceFor returns the trace sink of a session id; it is called once per
	// session (the top-level one and each subagent) of one scenario run.
	// The sink must implement [TraceReader] for the trace expectation to be
	// checked. Default: a new [MemoryTrace] per session.
	TraceFor func(sessionID string) engine.TraceSink

	// Timeout gives up a scenario that has not finished; it is reported as
	// a failure naming what was still waiting. Default: [DefaultTimeout].
	Timeout time.Duration

	// Resume adds the resume check: after the last run, every session that
	// wrote a Trace is resumed from it (ENGINE.md §17) and the resumed
	// history, carry-over, pending summary and counters must equal what the
	// engine held, up to the documented differences (normalize.go). The
	// sinks must implement [TraceStorer]; when TraceFor is nil each session
	// gets a [StoreTrace] over one [trace.MemStore] per scenario run.
	Resume bool
}

func (o Options) withDefaults() Options {
	if o.TraceFor == nil && o.Resume {
		store := new(trace.MemStore)
		o.TraceFor = func(id string) engine.TraceSink { return NewStoreTrace(store, id) }
	}
	if o.TraceFor == nil {
		o.TraceFor = func(string) engine.TraceSink { return new(MemoryTrace) }
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return o
}

// Result is the outcome of one scenario.
type Result struct {
	ID, Name string
	Pass     bool
	// Diff is the first difference: where, expected, got; "" on a pass.
	Diff string
	// Problems lists every difference found, Diff first.
	Problems []string
	// ResumeRules counts, with Options.Resume, the normalization rules the
	// resume check applied to the engine's side (rule name → times).
	ResumeRules map[string]int
}

// Run runs one scenario against the engine and compares what it observed
// with the scenario's expectations. It never hangs: a scenario still running
// after the timeout (or when ctx is cancelled) fails, and Run returns
// without waiting for the engine to unwind. Run is safe for concurrent use.
func Run(ctx context.Context, s *Scenario, opts Options) Result {
	res := Result{ID: s.ID, Name: s.Name}
	switch {
	case s.Err != nil:
		return res.failed([]string{"load: " + s.Err.Error()})
	case s.spec == nil:
		return res.failed([]string{"load: scenario was not loaded with Load or LoadDir"})
	}
	opts = opts.withDefaults()
	w := newWorld(s.spec, opts)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				w.fail("runner panic: %v%s", p, panicSite(debug.Stack()))
			}
		}()
		w.drive(ctx)
	}()
	tctx, stop := context.WithTimeout(ctx, opts.Timeout)
	defer stop()
	select {
	case <-done:
	case <-tctx.Done():
		select {
		case <-done:
		default:
			reason := fmt.Sprintf("timeout after %v", opts.Timeout)
			if ctx.Err() != nil {
				reason = "cancelled: " + ctx.Err().Error()
			}
			return res.failed([]string{w.stop(reason)})
		}
	}
	if ctx.Err() != nil {
		return res.failed([]string{"cancelled: " + ctx.Err().Error()})
	}
	ps := w.problems()
	if opts.Resume {
		res.ResumeRules = map[string]int{}
		ps = append(ps, w.resumeProblems(ctx, res.ResumeRules)...)
	}
	if len(ps) > 0 {
		return res.failed(ps)
	}
	res.Pass = true
	return res
}

func (r Result) failed(problems []string) Result {
	r.Pass = false
	r.Problems = problems
	r.Diff = problems[0]
	return r
}

// drive builds the top-level session and consumes its runs in order, with
// synchronous delivery: each message's seen hooks run before the next Next.
func (w *world) drive(ctx context.Context) {
	sess, err := engine.New(w.config(w.s.session))
	if err != nil {
		w.fail("session: New: %v", err)
		return
	}
	w.mu.Lock()
	w.top = sess
	w.mu.Unlock()
	for i, rs := range w.s.runs {
		if w.isStopped() {
			return
		}
		if !w.consume(ctx, sess, i+1, rs) {
			return
		}
	}
	w.setConsumer("")
}

// consume performs run n; false if it could not be started.
func (w *world) consume(ctx context.Context, sess *engine.Session, n int, rs *runSpec) bool {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	w.beginRun(n, rs, cancel)
	defer w.endRun()
	if rs.preAborted {
		cancel()
	}
	opts := engine.RunOptions{}
	if !rs.noApprover {
		opts.Approve = w.approve
	}
	w.setConsumer(fmt.Sprintf("run %d: Start", n))
	r, err := sess.Start(runCtx, w.stampAll(rs.input), opts)
	if err != nil {
		w.fail("run %d: Start: %v", n, err)
		return false
	}
	defer r.Close()
	for k := 1; ; k++ {
		w.setConsumer(fmt.Sprintf("run %d: Next for message %d", n, k))
		m, ok := r.Next()
		if !ok {
			break
		}
		w.receive(m)
	}
	w.setConsumer(fmt.Sprintf("run %d: Close", n))
	return true
}
