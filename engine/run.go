package engine

import (
	"context"
	"iter"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/internal/lock"
)

// Run is one run's output stream (ENGINE.md §3). The run makes progress only
// while its consumer asks for messages: every run-level step (the next
// request, steering, compaction, the end) happens after the consumer has
// taken every earlier message (E-3.2). Next and NextBatch must be
// called from one goroutine at a time; Close may be called from any
// goroutine at any time (it waits for a Next in flight), but not from the
// run's own callbacks, which it waits for.
type Run struct {
	r    *run
	body func(yield func(omni.Message) bool) // the run as a push sequence; ranged once

	pull    lock.Mutex   // held while the engine works for Next, NextBatch or NextEach, and by Close
	last    omni.Message // the message NextEach hands over last, under pull
	mu      lock.Mutex   // guards the fields below
	pulling bool
	direct  bool // ranged by All without a coroutine
	next    func() (omni.Message, bool)
	stop    func()
	ended   bool
}

// run is the state of one run, owned by the goroutine executing body. The
// run's context is passed down the calls, never stored.
type run struct {
	s      *Session
	cancel context.CancelFunc
	opts   RunOptions
	origin string // a subagent run: prepended to the origin of every streamed message

	yield func(omni.Message) bool
	gone  bool // the consumer left early (E-3.3a)

	// visit, while NextEach waits, is handed the already produced
	// messages in place, without a coroutine switch or a copy per
	// message; up to batchMax in all (visited so far).
	visit    func(*omni.Message)
	batching bool
	batchMax int
	visited  int

	spare [2][]item // merge-queue buffers kept between attempts (attempt.go)

	tasks chan task     // idle workers of the run wait here (spawn)
	quit  chan struct{} // closed when the run has ended: idle workers exit

	// done is the run's context's Done: a callback whose context has it is
	// watched for the abort grace by graces (util.go), which the run's one
	// context.AfterFunc arms. Only compared, never waited on.
	done   <-chan struct{}
	graces graces
}

// spawn runs f on an idle worker goroutine of the run, or on a new one.
// A request's driver and a tool call each need a goroutine (E-6.1); a
// new goroutine starts with a small stack that their calls grow, copying
// it several times, which was a quarter of a short request's time. A
// worker keeps its grown stack for the run's next request or call. The
// workers exit when the run has ended; one busy then (an abandoned tool)
// exits when its task returns.
func (r *run) spawn(f task) {
	select {
	case r.tasks <- f:
	default:
		go r.work(f)
	}
}

// A task is what a worker runs: a driver or a tool run, which carry what
// they need, so that starting one allocates no closure; or a funcTask.
type task interface{ runTask() }

// funcTask is a task of a function.
type funcTask func()

func (f funcTask) runTask() { f() }

func (r *run) work(f task) {
	growStack(0)
	for {
		f.runTask()
		f = nil // hold nothing of the last task while idle
		select {
		case f = <-r.tasks:
		case <-r.quit:
			return
		}
	}
}

func newRun(ctx context.Context, s *Session, opts RunOptions, body func(context.Context, *run)) *Run {
	rctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	s.abortRun = cancel
	if s.closed { // Close came after reserve, before it could abort the run
		cancel()
	}
	s.mu.Unlock()
	r := &run{s: s, cancel: cancel, opts: opts, tasks: make(chan task), quit: make(chan struct{})}
	return &Run{r: r, body: func(yield func(omni.Message) bool) { r.seq(rctx, yield, body) }}
}

// seq runs body as a push sequence; it may be ranged once.
func (r *run) seq(ctx context.Context, yield func(omni.Message) bool, body func(context.Context, *run)) {
	growStack(0)
	r.yield = yield
	r.done = ctx.Done()
	context.AfterFunc(ctx, r.graces.fire) // fires at the latest when the run ends (r.cancel)
	defer close(r.quit)
	if poolSpares { // natively, the queue's buffers of a finished run (attempt.go)
		r.spare = takeSpares()
		defer putSpares(&r.spare)
	}
	defer r.s.release()
	defer r.cancel()
	defer recoverTo(r.s, "run", func(p any) {
		// A panic in the engine itself: report it as an abort so the
		// stream ends with a protocol message rather than a dead runtime.
		r.emit(ctx, omni.AbortMsg(ReasonEngineFailurePrefix+panicText(p)))
	})
	body(ctx, r)
}

// runStack is the stack a run's goroutine is grown to at its start.
const runStack = 32 << 10

// growStack grows the calling goroutine's stack at once to hold runStack
// bytes more, while it holds few frames. A run pulled through Next or
// NextBatch runs on a new goroutine (iter.Pull), and so does a worker of
// the run, whose small stacks their calls would otherwise grow by copying
// them several times, each time with every frame on them: on WebAssembly
// that was an eighth of a one-request run. i is 0; it keeps the buffer
// from being optimized away.
//
//go:noinline
func growStack(i int) byte {
	var buf [runStack]byte
	return buf[i]
}

// Next returns the next message; false when the run has ended.
func (rn *Run) Next() (omni.Message, bool) {
	rn.pull.Lock()
	defer rn.pull.Unlock()
	return rn.nextLocked()
}

// nextLocked is Next with rn.pull held.
func (rn *Run) nextLocked() (omni.Message, bool) {
	rn.mu.Lock()
	if rn.ended {
		rn.mu.Unlock()
		return omni.Message{}, false
	}
	if !rn.pulling {
		rn.pulling = true
		rn.next, rn.stop = iter.Pull(rn.body)
	}
	next := rn.next
	rn.mu.Unlock()
	m, ok := next()
	if !ok {
		rn.mu.Lock()
		rn.ended = true
		rn.mu.Unlock()
	}
	return m, ok
}

// NextBatch appends to dst the next message and every message already
// produced after it, max in all (max < 1 means 1), and reports false, with
// dst unchanged, at the end of the run. Like Next, it waits only for the
// first message, and it never performs a run-level step: those happen only
// when the consumer asks again (E-3.2). It is Next followed by Next for
// every message already produced, without a coroutine switch per message.
func (rn *Run) NextBatch(dst []omni.Message, max int) ([]omni.Message, bool) {
	out := dst
	ok := rn.NextEach(max, func(m *omni.Message) { out = append(out, *m) })
	if !ok {
		return dst, false
	}
	return out, true
}

// NextEach is NextBatch without the copies: it calls f with the next
// message and every message already produced after it, in order, max in
// all (max < 1 means 1), where they lie in the engine's buffers, and
// reports false at the end of the run, when it did not call f. The
// message is f's only during the call: f copies what it keeps, and does
// not modify it. f runs while NextEach waits, on the run's goroutine, and
// must not call the Run.
func (rn *Run) NextEach(max int, f func(m *omni.Message)) bool {
	rn.pull.Lock()
	defer rn.pull.Unlock()
	rn.mu.Lock()
	ended := rn.ended
	rn.mu.Unlock()
	if ended {
		return false
	}
	r := rn.r
	r.visit, r.batching, r.batchMax, r.visited = f, true, max, 0
	var ok bool
	rn.last, ok = rn.nextLocked()
	visited := r.visited
	r.visit, r.batching = nil, false
	if ok {
		f(&rn.last) // not a local's address: f would move it to the heap
		rn.last = omni.Message{}
	}
	return ok || visited > 0
}

// All returns the remaining stream as a sequence, to be ranged once.
// Breaking out of the loop is a user abort (E-3.3a): the run finishes (tools
// are waited for, carry-over is built, abort is traced) before the range
// statement ends. While a run that was never pulled is ranged by All, Close
// from another goroutine aborts it and returns at once; the range statement
// ends once the engine has finished.
func (rn *Run) All() iter.Seq[omni.Message] {
	return func(yield func(omni.Message) bool) {
		rn.mu.Lock()
		if rn.ended {
			rn.mu.Unlock()
			return
		}
		if !rn.pulling {
			rn.ended, rn.direct = true, true // ranged directly: no coroutine needed
			rn.mu.Unlock()
			rn.body(yield)
			return
		}
		rn.mu.Unlock()
		for {
			m, ok := rn.Next()
			if !ok {
				return
			}
			if !yield(m) {
				rn.Close()
				return
			}
		}
	}
}

// Close abandons the run: if it has not ended it is aborted as if the
// consumer had left (E-3.3a), and Close returns once the engine has
// finished. Called while another goroutine is in Next or NextBatch, it
// aborts the run, waits for that call to return, then finishes the run.
// Safe to call more than once, and after the end.
func (rn *Run) Close() {
	rn.r.cancel()
	rn.mu.Lock()
	direct := rn.direct
	rn.mu.Unlock()
	if direct {
		return // the range statement of All finishes the run
	}
	rn.pull.Lock()
	defer rn.pull.Unlock()
	rn.mu.Lock()
	if rn.ended {
		rn.mu.Unlock()
		return
	}
	rn.ended = true
	pulling, stop := rn.pulling, rn.stop
	rn.mu.Unlock()
	if !pulling {
		// Never started: run it to its end with nobody reading.
		rn.body(func(omni.Message) bool { return false })
		return
	}
	stop()
}

// aborted reports whether the run's abort has fired.
func aborted(ctx context.Context) bool { return ctx.Err() != nil }

// emit stamps m, writes it to the Trace if it is recordable and delivers it
// to the consumer (E-16.2: one critical section, the consumer's goroutine).
func (r *run) emit(ctx context.Context, m omni.Message) {
	r.s.stampMsg(&m)
	if m.Recordable() {
		r.s.traceWrite(ctx, m)
	}
	r.deliver(m)
}

// emitStreamOnly delivers m without writing it to the Trace.
func (r *run) emitStreamOnly(m omni.Message) {
	r.s.stampMsg(&m)
	r.deliver(m)
}

func (r *run) deliver(m omni.Message) {
	if r.gone {
		return
	}
	if r.origin != "" {
		m = m.WithOrigin(r.origin)
	}
	if !r.yield(m) {
		r.gone = true
		r.cancel()
	}
}

// deliverQueued delivers a message taken from the merge queue; more says
// whether another produced message follows without waiting, fragment that
// m is one a Trace never records (unrecorded).
func (r *run) deliverQueued(ctx context.Context, m *omni.Message, more, fragment bool) {
	if r.s.cfg.Trace != nil && !fragment && m.Recordable() { // without a Trace, traceWrite writes nothing
		r.s.traceWrite(ctx, *m)
	}
	if r.gone {
		return
	}
	if r.origin != "" {
		o := m.WithOrigin(r.origin)
		m = &o
	}
	if more && r.batching && r.visited+1 < r.batchMax {
		r.visited++
		r.visit(m) // the consumer's, with the next one it takes
		return
	}
	if !r.yield(*m) {
		r.gone = true
		r.cancel()
	}
}
