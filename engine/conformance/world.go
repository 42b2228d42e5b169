package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// errStopped is returned by waits once the scenario was given up (safety
// timeout or cancellation).
var errStopped = errors.New("scenario stopped")

// world is the state one scenario run shares between the consumer and the
// scripted callbacks. Every field after mu is guarded by mu. Waiters block
// on changed, which is closed and replaced each time the consumer receives
// a message (a broadcast); no wait polls.
type world struct {
	s     *spec
	opts  Options
	clock *clock
	env   engine.Environment
	dead  chan struct{} // closed when the scenario is given up

	handleMu sync.Mutex                        // serializes subagent creation
	handles  map[string]*engine.SubagentHandle // guarded by handleMu

	mu            sync.Mutex
	changed       chan struct{}
	stopped       bool
	run           int     // 1-based current run; 0 before the first
	streams       [][]any // what the consumer received, per run
	hooks         []*liveHook
	cancelRun     context.CancelFunc
	consumer      string // what the consumer is doing, for timeout reports
	top           *engine.Session
	sessions      map[string]*sessionState
	toolRuns      map[string]int
	toolOrder     []string
	approverCalls []string
	sleeps        []int64
	backoffs      int
	busy          map[int]string // callbacks blocked in a wait, emit or subagent
	nextBusy      int
	failures      []string
	given         map[string]bool           // timestamps the runner stamped: messages it handed to the engine
	toolOutputs   map[string][]omni.Message // complete outputs each scripted tool emitted, by call id
}

// sessionState is what the runner records for one session id.
type sessionState struct {
	calls     int // StreamGenerate calls, every context object included
	contexts  int // context objects handed out (1 + NewLLM calls)
	inputs    []llmInput
	newTokens []omni.TokenCounts
	sink      engine.TraceSink
	raw       []*llmCall // the calls in order, for the resume check

	compactionPrompt *string // the configured compaction prompt; nil: no compaction
}

// liveHook is a hook of the current run.
type liveHook struct {
	run, index int // 1-based
	h          *hook
	fired      bool
}

func newWorld(s *spec, opts Options) *world {
	w := &world{
		s:           s,
		opts:        opts,
		dead:        make(chan struct{}),
		changed:     make(chan struct{}),
		sessions:    map[string]*sessionState{},
		handles:     map[string]*engine.SubagentHandle{},
		toolRuns:    map[string]int{},
		busy:        map[int]string{},
		given:       map[string]bool{},
		toolOutputs: map[string][]omni.Message{},
	}
	w.clock = &clock{w: w}
	w.env = engine.EnvironmentFunc(w.executeTool)
	return w
}

// fail records one scenario failure.
func (w *world) fail(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.failures = append(w.failures, fmt.Sprintf(format, args...))
}

// enter marks a callback as blocked in what; the returned func clears it.
func (w *world) enter(what string) func() {
	w.mu.Lock()
	id := w.nextBusy
	w.nextBusy++
	w.busy[id] = what
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		delete(w.busy, id)
		w.mu.Unlock()
	}
}

// wait blocks until c holds for the callback whose abort signal is ctx.
func (w *world) wait(ctx context.Context, c *condition, where string) error {
	defer w.enter(where + ": wait " + c.text)()
	var abort <-chan struct{}
	if c.usesAbort() {
		abort = ctx.Done()
	}
	for {
		w.mu.Lock()
		ok := c.holds(w.currentLocked(), ctx.Err() != nil)
		changed := w.changed
		w.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-changed:
		case <-abort:
		case <-w.dead:
			return errStopped
		}
	}
}

func (w *world) currentLocked() []any {
	if len(w.streams) == 0 {
		return nil
	}
	return w.streams[len(w.streams)-1]
}

// beginRun installs run n's hooks and abort before Start is called.
func (w *world) beginRun(n int, rs *runSpec, cancel context.CancelFunc) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.run = n
	w.streams = append(w.streams, []any{})
	w.cancelRun = cancel
	w.hooks = nil
	for i, h := range rs.hooks {
		w.hooks = append(w.hooks, &liveHook{run: n, index: i + 1, h: h})
	}
}

// endRun fails every hook of the run that never fired and uninstalls them.
func (w *world) endRun() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, lh := range w.hooks {
		if !lh.fired {
			w.failures = append(w.failures, fmt.Sprintf("run %d hook %d (on %s) never fired", lh.run, lh.index, lh.h.on.text))
		}
	}
	w.hooks = nil
	w.cancelRun = nil
}

// receive is the consumer's step after taking m from the stream: record it,
// run the seen hooks it triggers, then wake the waiters.
func (w *world) receive(m omni.Message) {
	v := valueOf(m)
	w.mu.Lock()
	last := len(w.streams) - 1
	w.streams[last] = append(w.streams[last], v)
	stream := w.streams[last]
	fire := w.takeHooksLocked(func(t *trigger) bool {
		return t.kind == onSeen && matches(t.seen, v) && countMatches(t.seen, stream) == t.nth
	})
	w.mu.Unlock()
	w.act(fire)
	w.mu.Lock()
	close(w.changed)
	w.changed = make(chan struct{})
	w.mu.Unlock()
}

// takeHooksLocked marks as fired, and returns, the unfired hooks of the
// current run whose trigger satisfies pred.
func (w *world) takeHooksLocked(pred func(*trigger) bool) []*liveHook {
	var out []*liveHook
	for _, lh := range w.hooks {
		if !lh.fired && pred(lh.h.on) {
			lh.fired = true
			out = append(out, lh)
		}
	}
	return out
}

// fireHooks takes and runs the hooks selected by pred.
func (w *world) fireHooks(pred func(*trigger) bool) {
	w.mu.Lock()
	fire := w.takeHooksLocked(pred)
	w.mu.Unlock()
	w.act(fire)
}

// act performs the actions of fired hooks, in order.
func (w *world) act(hooks []*liveHook) {
	for _, lh := range hooks {
		for j, a := range lh.h.do {
			switch {
			case a.abort:
				w.mu.Lock()
				cancel := w.cancelRun
				w.mu.Unlock()
				if cancel != nil {
					cancel()
				}
			case a.steer != nil:
				w.mu.Lock()
				top := w.top
				w.mu.Unlock()
				if top == nil {
					w.fail("run %d hook %d action %d (steer): no session to steer", lh.run, lh.index, j+1)
				} else if got, err := top.Steer(w.stampAll(a.steer)); err != nil {
					w.fail("run %d hook %d action %d (steer): Steer: %v", lh.run, lh.index, j+1, err)
				} else if got != a.expect {
					w.fail("run %d hook %d action %d (steer): Steer returned %t, expected %t", lh.run, lh.index, j+1, got, a.expect)
				}
			}
		}
	}
}

// setConsumer records what the consumer is doing.
func (w *world) setConsumer(what string) {
	w.mu.Lock()
	w.consumer = what
	w.mu.Unlock()
}

// stop gives the scenario up: it describes what was still blocked, releases
// every wait and aborts the run in flight.
func (w *world) stop(reason string) string {
	w.mu.Lock()
	ids := make([]int, 0, len(w.busy))
	for id := range w.busy {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var parts []string
	for _, id := range ids {
		parts = append(parts, w.busy[id])
	}
	if w.consumer != "" {
		parts = append(parts, "consumer: "+w.consumer)
	}
	cancel := w.cancelRun
	if !w.stopped {
		w.stopped = true
		close(w.dead)
	}
	w.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if len(parts) == 0 {
		return reason + "; nothing was waiting in the runner"
	}
	return reason + "; still waiting: " + strings.Join(parts, "; ")
}

// isStopped reports whether stop was called.
func (w *world) isStopped() bool {
	select {
	case <-w.dead:
		return true
	default:
		return false
	}
}

// session returns the state of a session id, creating it (and its trace
// sink) on first use.
func (w *world) session(id string) *sessionState {
	w.mu.Lock()
	defer w.mu.Unlock()
	st, ok := w.sessions[id]
	if !ok {
		st = &sessionState{contexts: 1, sink: w.opts.TraceFor(id)}
		w.sessions[id] = st
	}
	return st
}

// stamp gives m the injected clock's current time.
func (w *world) stamp(m omni.Message) omni.Message {
	m.Timestamp = w.clock.Now().UTC().Format(omni.TimestampLayout)
	w.mu.Lock()
	w.given[m.Timestamp] = true
	w.mu.Unlock()
	return m
}

// stampAll returns stamped copies of msgs.
func (w *world) stampAll(msgs []omni.Message) []omni.Message {
	out := make([]omni.Message, len(msgs))
	for i, m := range msgs {
		out[i] = w.stamp(m)
	}
	return out
}

// diagnostic receives the engine's diagnostics: a recovered panic fails the
// scenario, every other kind is expected behaviour of some scenarios.
func (w *world) diagnostic(d engine.Diagnostic) {
	if d.Kind != "panic" {
		return
	}
	w.fail("engine diagnostic panic: %v%s", d.Err, panicSite(d.Stack))
}

// panicSite names the function and line that panicked, from a stack as
// runtime/debug.Stack writes it: the frame right after the panic call.
func panicSite(stack []byte) string {
	lines := strings.Split(string(stack), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "panic(") && i+3 < len(lines) {
			return " at " + strings.TrimSpace(lines[i+2]) + " " + strings.TrimSpace(lines[i+3])
		}
	}
	return ""
}
