package playground

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// ErrRunning is returned by [Runner.Start] while a run is in flight.
var ErrRunning = errors.New("playground: a run is already in flight")

// ErrClosed is returned by [Runner.Start] and [Runner.StartCompact] once
// the runner is closed.
var ErrClosed = errors.New("playground: the session is closed")

// Runner drives one engine session for a user interface: one run at a time,
// stopped by a cancel, steered while in flight. It is safe for concurrent
// use.
type Runner struct {
	sess *engine.Session

	mu       sync.Mutex
	thinking string             // every run's thinking level
	cancel   context.CancelFunc // non-nil while a run is in flight
	done     chan struct{}      // closed once the run in flight has ended (after its end callback)
	closed   bool
}

// NewRunner returns a Runner for sess.
func NewRunner(sess *engine.Session) *Runner { return &Runner{sess: sess} }

// SetThinkingLevel sets the thinking level of the runs started from now
// on ("" = none named; compactions never name one).
func (r *Runner) SetThinkingLevel(level string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.thinking = level
}

// Session returns the runner's session.
func (r *Runner) Session() *engine.Session { return r.sess }

// Start begins a run of prompt and its images (data: URLs; see
// [PromptInput]). deliver receives every message of the
// stream, in order, from one goroutine; end is called once after the last
// one, with nil or the failure that ended the consumer (a recovered panic).
// Start returns an error, and calls neither, when the run cannot start.
func (r *Runner) Start(prompt string, images []string, approve engine.Approver, deliver func(omni.Message), end func(error)) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	if r.cancel != nil {
		return ErrRunning
	}
	ctx, cancel := context.WithCancel(context.Background())
	run, err := r.sess.Start(ctx, PromptInput(prompt, images), engine.RunOptions{Approve: approve, ThinkingLevel: r.thinking})
	if err != nil {
		cancel()
		return fmt.Errorf("start run: %w", err)
	}
	r.cancel, r.done = cancel, make(chan struct{})
	go r.consume(run, cancel, r.done, deliver, end)
	return nil
}

// StartCompact begins a manual compaction (ENGINE.md E-13.13), delivered
// like a run's stream; Stop aborts it.
func (r *Runner) StartCompact(deliver func(omni.Message), end func(error)) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	if r.cancel != nil {
		return ErrRunning
	}
	ctx, cancel := context.WithCancel(context.Background())
	run, err := r.sess.Compact(ctx)
	if err != nil {
		cancel()
		return fmt.Errorf("compact: %w", err)
	}
	r.cancel, r.done = cancel, make(chan struct{})
	go r.consume(run, cancel, r.done, deliver, end)
	return nil
}

// SkipReconnectWait ends the reconnect backoff in progress (ENGINE.md
// §10); false when none is.
func (r *Runner) SkipReconnectWait() bool { return r.sess.SkipReconnectWait() }

func (r *Runner) consume(run *engine.Run, cancel context.CancelFunc, done chan struct{}, deliver func(omni.Message), end func(error)) {
	var err error
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("playground: panic: %v\n%s", p, debug.Stack())
		}
		run.Close()
		cancel()
		r.mu.Lock()
		r.cancel = nil
		r.mu.Unlock()
		defer close(done)
		end(err)
	}()
	for {
		m, ok := run.Next()
		if !ok {
			return
		}
		deliver(m)
	}
}

// Running reports whether a run is in flight.
func (r *Runner) Running() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cancel != nil
}

// Stop aborts the run in flight (ENGINE.md §9); false when there is none.
// The stream goes on to its abort message and then ends.
func (r *Runner) Stop() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel == nil {
		return false
	}
	r.cancel()
	return true
}

// Close stops the run in flight, if any, and waits until it has ended (its
// end callback has returned), or until ctx is done; then no other run
// starts: [Runner.Start] and [Runner.StartCompact] return [ErrClosed].
// Once Close returns nil, the session writes nothing more to its Trace
// through this runner.
func (r *Runner) Close(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	cancel, done := r.cancel, r.done // done stays set after the run: it may still be ending
	r.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Steer queues text and images (data: URLs, as [PromptInput] takes them)
// for the run in flight (ENGINE.md §11): the engine delivers them as one
// steering message, its text in a [user_steering] block, then one
// image_url message per image. False when no run is in flight, or when
// there is neither a non-blank text nor an image.
func (r *Runner) Steer(text string, images []string) bool {
	in := PromptInput(text, images)
	if len(in) == 0 {
		return false
	}
	ok, err := r.sess.Steer(in)
	return ok && err == nil
}

// AskApprover returns an [engine.Approver] that hands each tool call to ask
// and waits for the decision that ask's answer function delivers — later,
// from any goroutine, at most once (extra answers are dropped). When the run
// is aborted first, it stops waiting (ENGINE.md E-5.5).
func AskApprover(ask func(call omni.Message, answer func(decision string))) engine.Approver {
	return func(ctx context.Context, call omni.Message) (engine.Decision, error) {
		reply := make(chan string, 1)
		ask(call, func(d string) {
			select {
			case reply <- d:
			default:
			}
		})
		select {
		case d := <-reply:
			return engine.Decision(d), nil
		case <-ctx.Done():
			return omni.DecisionDeny, ctx.Err()
		}
	}
}
