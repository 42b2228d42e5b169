package engine_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/enginetest"
	"github.com/floehq/floe/engine/omni"
)

// A service's session goes through many runs that end every way a run
// ends; once the session is closed and each run has ended as the README
// says a service ends it (ranged to its end or broken out of, read to its
// end or closed), no goroutine of the engine's is left. Each case runs in
// a synctest bubble, which fails when a goroutine of it is left blocked
// after the case returns; its timers (the abort grace, the backoff) run on
// the bubble's clock.
func TestNoGoroutineLeftAfterClose(t *testing.T) {
	for _, c := range lifecycleCases() {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := newLifecycle(t)
				c.f(t, l)
				l.s.Close()
				l.release() // callbacks that ignore their context return now
				if _, err := l.s.Start(context.Background(), prompt("again"), engine.RunOptions{}); !errors.Is(err, engine.ErrClosed) {
					t.Fatalf("Start after Close: %v, want ErrClosed", err)
				}
			})
		})
	}
}

// lifecycle is one case's session: an LLM that, per request, streams a
// reply, calls a tool, fails, or hangs (honouring its context or not); a
// tool that answers or hangs likewise.
type lifecycle struct {
	s       *engine.Session
	mode    chan string   // the next request's behaviour; "" = reply
	started chan struct{} // a hanging callback has started
	gate    chan struct{} // closed by release: a callback that ignores ctx returns
	once    sync.Once
}

func (l *lifecycle) release() { l.once.Do(func() { close(l.gate) }) }

func newLifecycle(t *testing.T) *lifecycle {
	l := &lifecycle{mode: make(chan string, 16), started: make(chan struct{}, 16), gate: make(chan struct{})}
	hang := func(ctx context.Context, honour bool) {
		l.started <- struct{}{}
		if honour {
			<-ctx.Done()
			return
		}
		<-l.gate
	}
	llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		mode := ""
		select {
		case mode = <-l.mode:
		default:
		}
		emit(omni.Partial(omni.PartialText, omni.EventStart, "", "", "", omni.StatusCompleted))
		emit(omni.Partial(omni.PartialText, omni.EventDelta, "a", "", "", omni.StatusCompleted))
		switch mode {
		case "fail":
			return engine.Outcome{Status: omni.StatusFailed, ErrorMessage: "connection reset"}
		case "hang":
			hang(ctx, true)
			return engine.Outcome{Status: omni.StatusAborted}
		case "hang-deaf":
			hang(ctx, false)
			return engine.Outcome{Status: omni.StatusAborted}
		}
		emit(omni.Partial(omni.PartialText, omni.EventStop, "", "", "", omni.StatusCompleted))
		emit(omni.AssistantText("a", omni.StatusCompleted))
		if mode == "tool" || mode == "tool-hang" || mode == "tool-hang-deaf" {
			emit(omni.ToolCallMsg("call-"+mode, mode, `{}`))
		}
		emit(enginetest.Usage(10))
		return engine.Outcome{Status: omni.StatusCompleted}
	})
	tools := engine.EnvironmentFunc(func(ctx context.Context, req engine.ToolRequest, emit func(omni.Message)) error {
		switch req.ToolCall.Payload.Name {
		case "tool-hang":
			hang(ctx, true)
			return ctx.Err()
		case "tool-hang-deaf":
			hang(ctx, false)
			return nil
		}
		emit(omni.ToolOutput(req.ToolCall.Payload.ToolCallID, "ok", omni.StatusCompleted))
		return nil
	})
	s, err := engine.New(engine.Config{
		Meta: enginetest.Meta("lifecycle"), LLM: llm, Environment: tools, Trace: &enginetest.Sink{},
		NewLLM:     func(omni.TokenCounts) engine.LLM { return llm },
		Compaction: &engine.Compaction{Mode: omni.ModeSummarize},
		MaxTurns:   3, MaxReconnects: 2, ReconnectBackoffMs: 10,
	})
	if err != nil {
		t.Fatal(err)
	}
	l.s = s
	return l
}

func prompt(text string) []omni.Message { return []omni.Message{omni.UserText(text)} }

// drain reads r to its end and returns the abort's reason, "" if none.
func drain(r *engine.Run) string {
	reason := ""
	for m, ok := r.Next(); ok; m, ok = r.Next() {
		if m.IsEvent(omni.Abort) {
			reason = m.Payload.Reason()
		}
	}
	return reason
}

type lifecycleCase struct {
	name string
	f    func(t *testing.T, l *lifecycle)
}

func lifecycleCases() []lifecycleCase {
	return []lifecycleCase{
		{"completed", func(t *testing.T, l *lifecycle) {
			seq, err := l.s.Run(context.Background(), prompt("hi"), engine.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for range seq {
			}
		}},
		{"tools", func(t *testing.T, l *lifecycle) {
			l.mode <- "tool"
			r, _ := l.s.Start(context.Background(), prompt("hi"), engine.RunOptions{Approve: allow})
			if why := drain(r); why != "" {
				t.Fatalf("aborted: %s", why)
			}
		}},
		{"broken out of", func(t *testing.T, l *lifecycle) {
			seq, _ := l.s.Run(context.Background(), prompt("hi"), engine.RunOptions{})
			for range seq {
				break
			}
		}},
		{"closed mid-stream", func(t *testing.T, l *lifecycle) {
			r, _ := l.s.Start(context.Background(), prompt("hi"), engine.RunOptions{})
			r.Next()
			r.Close()
		}},
		{"never pulled", func(t *testing.T, l *lifecycle) {
			r, _ := l.s.Start(context.Background(), prompt("hi"), engine.RunOptions{})
			r.Close()
		}},
		{"never pulled, session closed", func(t *testing.T, l *lifecycle) {
			// No goroutine was started: a Run of Start that nobody pulls
			// holds none, and Session.Close aborts it.
			l.s.Start(context.Background(), prompt("hi"), engine.RunOptions{})
		}},
		{"context cancelled", func(t *testing.T, l *lifecycle) {
			l.mode <- "hang"
			ctx, cancel := context.WithCancel(context.Background())
			r, _ := l.s.Start(ctx, prompt("hi"), engine.RunOptions{})
			go func() { <-l.started; cancel() }()
			if why := drain(r); why != engine.ReasonUser {
				t.Fatalf("reason %q", why)
			}
		}},
		{"session closed mid-run", func(t *testing.T, l *lifecycle) {
			l.mode <- "hang"
			r, _ := l.s.Start(context.Background(), prompt("hi"), engine.RunOptions{})
			go func() { <-l.started; l.s.Close() }()
			if why := drain(r); why != engine.ReasonUser {
				t.Fatalf("reason %q", why)
			}
		}},
		{"provider hangs past the abort grace", func(t *testing.T, l *lifecycle) {
			l.mode <- "hang-deaf"
			ctx, cancel := context.WithCancel(context.Background())
			r, _ := l.s.Start(ctx, prompt("hi"), engine.RunOptions{})
			go func() { <-l.started; cancel() }()
			drain(r) // the grace abandons the LLM: the run ends while it hangs
		}},
		{"tool hangs past the abort grace", func(t *testing.T, l *lifecycle) {
			l.mode <- "tool-hang-deaf"
			ctx, cancel := context.WithCancel(context.Background())
			r, _ := l.s.Start(ctx, prompt("hi"), engine.RunOptions{Approve: allow})
			go func() { <-l.started; cancel() }()
			drain(r)
		}},
		{"tool aborted", func(t *testing.T, l *lifecycle) {
			l.mode <- "tool-hang"
			r, _ := l.s.Start(context.Background(), prompt("hi"), engine.RunOptions{Approve: allow})
			go func() { <-l.started; l.s.Close() }()
			drain(r)
		}},
		{"approval never answered", func(t *testing.T, l *lifecycle) {
			l.mode <- "tool"
			asked := make(chan struct{})
			approve := func(ctx context.Context, _ omni.Message) (engine.Decision, error) {
				close(asked)
				<-ctx.Done()
				return omni.DecisionDeny, ctx.Err()
			}
			r, _ := l.s.Start(context.Background(), prompt("hi"), engine.RunOptions{Approve: approve})
			go func() { <-asked; l.s.Close() }()
			drain(r)
		}},
		{"failed and retried", func(t *testing.T, l *lifecycle) {
			l.mode <- "fail"
			l.mode <- "fail"
			l.mode <- "fail"
			r, _ := l.s.Start(context.Background(), prompt("hi"), engine.RunOptions{})
			if why := drain(r); why == "" {
				t.Fatal("the run did not end on its failures")
			}
		}},
		{"closed in the backoff", func(t *testing.T, l *lifecycle) {
			l.mode <- "fail"
			r, _ := l.s.Start(context.Background(), prompt("hi"), engine.RunOptions{})
			for m, ok := r.Next(); ok; m, ok = r.Next() {
				if m.IsEvent(omni.RequestEnd) {
					l.s.Close() // the run waits its backoff
				}
			}
		}},
		{"compacted", func(t *testing.T, l *lifecycle) {
			seq, _ := l.s.Run(context.Background(), prompt("hi"), engine.RunOptions{})
			for range seq {
			}
			l.mode <- "hang"
			c, err := l.s.Compact(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			go func() { <-l.started; l.s.Close() }()
			drain(c)
		}},
		{"compacted to its end", func(t *testing.T, l *lifecycle) {
			for range mustRun(t, l.s) {
			}
			c, _ := l.s.Compact(context.Background())
			drain(c)
			if got := l.s.Compactability(); got != engine.CompactJustCompacted {
				t.Fatalf("compactability %s after a compaction", got)
			}
		}},
	}
}

// A session closed while Start is between taking the session and handing
// the run its abort: the run is aborted all the same. It ran on, its
// provider's hang never cut short by Close.
func TestCloseDuringStartAbortsTheRun(t *testing.T) {
	for _, compact := range []bool{false, true} {
		t.Run(fmt.Sprint("compact=", compact), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := newLifecycle(t)
				if compact {
					for range mustRun(t, l.s) {
					}
				}
				l.mode <- "hang"
				parent, cancel := context.WithCancel(context.Background())
				defer cancel()
				ctx := &closingCtx{Context: parent, s: l.s}
				var r *engine.Run
				var err error
				if compact {
					r, err = l.s.Compact(ctx)
				} else {
					r, err = l.s.Start(ctx, prompt("hi"), engine.RunOptions{})
				}
				if err != nil {
					t.Fatal(err)
				}
				if !ctx.closed {
					t.Fatal("the context was not asked for Done while the run was made")
				}
				done := make(chan struct{})
				go func() { drain(r); close(done) }()
				synctest.Wait()
				select {
				case <-done:
				default:
					cancel()
					<-done
					t.Fatal("the run of a session closed while it started was not aborted")
				}
			})
		})
	}
}

func mustRun(t *testing.T, s *engine.Session) func(func(omni.Message) bool) {
	seq, err := s.Run(context.Background(), prompt("hi"), engine.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

// closingCtx closes its session the first time it is asked for Done: when
// Start makes the run's context, after it has taken the session.
type closingCtx struct {
	context.Context
	s      *engine.Session
	closed bool
}

func (c *closingCtx) Done() <-chan struct{} {
	if !c.closed {
		c.closed = true
		c.s.Close()
	}
	return c.Context.Done()
}

// Runs, steering, aborts, compactions and Close on one session from
// several goroutines at once: the race detector watches them, and every
// run ends. Many sessions do so at once.
func TestConcurrentSessionUse(t *testing.T) {
	const sessions, rounds = 4, 30
	before := runtime.NumGoroutine()
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hammer(t, i, rounds)
		}()
	}
	wg.Wait()
	waitGoroutines(t, before)
}

func hammer(t *testing.T, i, rounds int) {
	l := newLifecycle(t)
	defer l.release()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				switch (g + n) % 4 {
				case 0:
					l.s.Steer(prompt("more"))
				case 1:
					l.s.SkipReconnectWait()
				case 2:
					l.s.Snapshot()
					l.s.Compactability()
				case 3:
					runtime.Gosched()
				}
			}
		}()
	}
	for n := range rounds {
		ctx, cancel := context.WithCancel(context.Background())
		var r *engine.Run
		var err error
		if n%5 == 4 {
			r, err = l.s.Compact(ctx)
		} else {
			r, err = l.s.Start(ctx, prompt(fmt.Sprint("round ", n)), engine.RunOptions{Approve: allow})
		}
		if err != nil {
			cancel()
			t.Errorf("session %d round %d: %v", i, n, err)
			break
		}
		switch n % 3 {
		case 0:
			go cancel()
			drain(r)
		case 1:
			go r.Close()
			drain(r)
			r.Close()
		default:
			drain(r)
		}
		cancel()
	}
	r, err := l.s.Start(context.Background(), prompt("last"), engine.RunOptions{})
	if err == nil {
		go l.s.Close()
		drain(r)
	}
	l.s.Close()
	close(stop)
	wg.Wait()
}

// waitGoroutines waits, a bounded time, until no more goroutines run than
// before.
func waitGoroutines(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(time.Millisecond) // polls the count; orders nothing
	}
}

// Sessions created, run (a tool call, a reply), compacted and closed, one
// after another as a service does, hold no memory once closed: the heap
// in use after a collection stays within a bound however many cycles
// ran. Without -short it runs 20 times as many cycles.
func TestNoHeapGrowthOverSessions(t *testing.T) {
	cycles := 400
	if !testing.Short() {
		cycles *= 20
	}
	cycle := func() {
		l := newLifecycle(t)
		l.mode <- "tool"
		r, err := l.s.Start(context.Background(), prompt("hi"), engine.RunOptions{Approve: allow})
		if err != nil {
			t.Fatal(err)
		}
		drain(r)
		if c, err := l.s.Compact(context.Background()); err == nil {
			drain(c)
		}
		l.s.Close()
	}
	for range 50 {
		cycle()
	}
	before := heapInUse()
	for range cycles {
		cycle()
	}
	after := heapInUse()
	const bound = 512 << 10
	t.Logf("%d cycles: heap in use %d KB, %d KB before", cycles, after>>10, before>>10)
	if after > before+bound {
		t.Fatalf("%d cycles: heap in use %d KB, %d KB before: grows with the sessions", cycles, after>>10, before>>10)
	}
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC() // a second one empties the pools the first kept as victims
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// A Session not made by New (its zero value) and a nil context are
// misuse that Start, Run, Compact and a SubagentHandle's Start refuse
// with an error naming it: the zero Session's run panicked in the
// consumer's range (its clock is nil), a zero SubagentHandle's Start
// panicked at once, and a nil context panicked in context.WithCancel.
func TestMisuseIsAnErrorNotAPanic(t *testing.T) {
	newS := func() *engine.Session {
		s, err := engine.New(engine.Config{Meta: enginetest.Meta("s1"), LLM: enginetest.NewLLM()})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	bg := context.Background()
	var nilCtx context.Context
	cases := []struct {
		name, want string
		f          func() error
	}{
		{"zero Session Start", "engine.New", func() error { _, err := new(engine.Session).Start(bg, prompt("x"), engine.RunOptions{}); return err }},
		{"zero Session Run", "engine.New", func() error { _, err := new(engine.Session).Run(bg, prompt("x"), engine.RunOptions{}); return err }},
		{"zero Session Compact", "engine.New", func() error { _, err := new(engine.Session).Compact(bg); return err }},
		{"zero SubagentHandle Start", "engine.New", func() error { _, err := new(engine.SubagentHandle).Start(bg, "x", nil); return err }},
		{"zero SubagentHandle Run", "", func() error {
			for range new(engine.SubagentHandle).Run(bg, "x", nil) {
				return errors.New("a message")
			}
			return nil
		}},
		{"Start nil ctx", "nil context", func() error { _, err := newS().Start(nilCtx, prompt("x"), engine.RunOptions{}); return err }},
		{"Run nil ctx", "nil context", func() error { _, err := newS().Run(nilCtx, prompt("x"), engine.RunOptions{}); return err }},
		{"Compact nil ctx", "nil context", func() error { _, err := newS().Compact(nilCtx); return err }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("panic: %v", p)
					}
				}()
				err = c.f()
			}()
			if c.want == "" { // a sequence: it yields nothing
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one naming %q", err, c.want)
			}
		})
	}
	// A session that refused a nil context is not left busy.
	s := newS()
	if _, err := s.Start(nilCtx, prompt("x"), engine.RunOptions{}); err == nil {
		t.Fatal("Start(nil ctx) succeeded")
	}
	r, err := s.Start(bg, prompt("x"), engine.RunOptions{})
	if err != nil {
		t.Fatalf("Start after a refused nil context: %v", err)
	}
	r.Close()
}
