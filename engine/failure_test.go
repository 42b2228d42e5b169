package engine_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"weak"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/enginetest"
	"github.com/floehq/floe/engine/omni"
)

// collect runs one run to its end and returns the stream.
func collect(t *testing.T, s *engine.Session, opts engine.RunOptions, input ...omni.Message) []omni.Message {
	t.Helper()
	return collectCtx(t, context.Background(), s, opts, input...)
}

// collectCtx is collect under ctx.
func collectCtx(t *testing.T, ctx context.Context, s *engine.Session, opts engine.RunOptions, input ...omni.Message) []omni.Message {
	t.Helper()
	seq, err := s.Run(ctx, input, opts)
	if err != nil {
		t.Fatal(err)
	}
	var got []omni.Message
	for m := range seq {
		got = append(got, m)
	}
	return got
}

type diags struct {
	mu sync.Mutex
	ds []engine.Diagnostic
}

func (d *diags) add(x engine.Diagnostic) { d.mu.Lock(); d.ds = append(d.ds, x); d.mu.Unlock() }

func (d *diags) kinds() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var ks []string
	for _, x := range d.ds {
		ks = append(ks, string(x.Kind))
	}
	return strings.Join(ks, ",")
}

// Panics in every callback become protocol answers and a "panic"
// diagnostic; the session keeps working.
func TestCallbackPanicsBecomeAnswers(t *testing.T) {
	calls := 0
	llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		calls++
		switch calls {
		case 1:
			panic("model exploded")
		case 2:
			emit(omni.ToolCallMsg("A", "boom", `{}`))
			emit(omni.ToolCallMsg("B", "echo", `{}`))
			emit(enginetest.Usage(5))
		default:
			emit(omni.AssistantText("ok", omni.StatusCompleted))
			emit(enginetest.Usage(9))
		}
		return engine.Outcome{Status: omni.StatusCompleted}
	})
	tools := enginetest.Tools{
		"boom": func(ctx context.Context, c omni.Message, emit func(omni.Message)) error { panic("tool exploded") },
		"echo": func(ctx context.Context, c omni.Message, emit func(omni.Message)) error { return nil },
	}
	var d diags
	s, err := engine.New(engine.Config{Meta: enginetest.Meta("p"), LLM: llm, Environment: tools, Clock: enginetest.NewClock(t0), OnDiagnostic: d.add})
	if err != nil {
		t.Fatal(err)
	}
	approve := func(ctx context.Context, tc omni.Message) (engine.Decision, error) {
		if tc.Payload.ToolCallID == "B" {
			panic("approver exploded")
		}
		return omni.DecisionAllow, nil
	}
	got := collect(t, s, engine.RunOptions{Approve: approve}, omni.UserText("go"))
	var ends, outputs []string
	for _, m := range got {
		if m.IsEvent(omni.RequestEnd) {
			ends = append(ends, m.Payload.Status()+":"+m.Payload.ErrorMessage())
		}
		if m.IsModel(omni.ToolCallOutput) {
			outputs = append(outputs, m.Payload.ToolCallID+"="+m.Payload.Output+"/"+m.Payload.StopReason)
		}
	}
	if len(ends) != 3 || !strings.HasPrefix(ends[0], "failed:llm callback panicked: model exploded") {
		t.Fatalf("request ends: %q", ends)
	}
	want := map[string]bool{"A=[tool error] tool panicked: tool exploded/failed": true, "B=Tool call denied by user./aborted": true}
	if len(outputs) != 2 || !want[outputs[0]] || !want[outputs[1]] {
		t.Fatalf("outputs: %q", outputs)
	}
	if k := d.kinds(); strings.Count(k, "panic") != 3 {
		t.Fatalf("diagnostics: %s", k)
	}
}

// A protocol-breaking LLM message ends the attempt as malformed (and is
// retried); the bad message never reaches the stream.
func TestInvalidLLMMessageIsMalformed(t *testing.T) {
	llm := enginetest.NewLLM(
		enginetest.Reply{Emit: []omni.Message{omni.Partial(omni.PartialText, omni.EventDelta, "x", "", "", omni.StatusCompleted), {Type: "bogus"}}},
		enginetest.Reply{Emit: enginetest.TextReply(3, "fine")},
	)
	clk := enginetest.NewClock(t0)
	s, err := engine.New(engine.Config{Meta: enginetest.Meta("m"), LLM: llm, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, s, engine.RunOptions{}, omni.UserText("go"))
	var first omni.Message
	for _, m := range got {
		if m.Type == "bogus" {
			t.Fatal("invalid message reached the stream")
		}
		if m.IsEvent(omni.RequestEnd) && first.Type == "" {
			first = m
		}
	}
	if first.Payload.Status() != omni.StatusMalformed || !strings.Contains(first.Payload.ErrorMessage(), "invalid message from llm") || first.Payload.RetryInMs() == nil {
		t.Fatalf("first request_end: %+v", first.Payload)
	}
	if len(clk.Sleeps()) != 1 {
		t.Fatalf("sleeps %v", clk.Sleeps())
	}
}

// blockingClock's Sleep waits until ctx is done, so SkipReconnectWait and
// abort are the only ways out.
type blockingClock struct{ sleeping chan struct{} }

func (c blockingClock) Now() time.Time { return t0 }
func (c blockingClock) Sleep(ctx context.Context, d time.Duration) bool {
	c.sleeping <- struct{}{}
	<-ctx.Done()
	return false
}

func TestSkipReconnectWait(t *testing.T) {
	llm := enginetest.NewLLM(
		enginetest.Reply{Outcome: engine.Outcome{Status: omni.StatusTimeout}},
		enginetest.Reply{Emit: enginetest.TextReply(3, "back")},
	)
	clk := blockingClock{sleeping: make(chan struct{})}
	s, err := engine.New(engine.Config{Meta: enginetest.Meta("k"), LLM: llm, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if s.SkipReconnectWait() {
		t.Fatal("SkipReconnectWait with no wait pending reported true")
	}
	done := make(chan []omni.Message)
	go func() { done <- collect(t, s, engine.RunOptions{}, omni.UserText("go")) }()
	<-clk.sleeping
	for !s.SkipReconnectWait() { // the wait registers just before Sleep is called
	}
	got := <-done
	last := got[len(got)-1]
	if !last.IsEvent(omni.RequestEnd) || last.Payload.Status() != omni.StatusCompleted || last.Payload.Attempt() != 2 {
		t.Fatalf("last message %+v", last.Payload)
	}
}

func TestUnsteerAndSteerOutsideRun(t *testing.T) {
	var s *engine.Session
	var kept, dropped []omni.Message
	llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		if len(p.NewMessages) == 1 && p.NewMessages[0].Payload.Text == "go" {
			kept = []omni.Message{omni.UserText("keep")}
			dropped = []omni.Message{omni.UserText("drop")}
			if !steer(s, kept) || !steer(s, dropped) || !steer(s, []omni.Message{omni.UserText("  ")}) {
				panic("Steer during a run reported false")
			}
			if !s.Unsteer(dropped) || s.Unsteer(dropped) {
				panic("Unsteer")
			}
		}
		emit(enginetest.Usage(1))
		return engine.Outcome{Status: omni.StatusCompleted}
	})
	var err error
	s, err = engine.New(engine.Config{Meta: enginetest.Meta("u"), LLM: llm, Clock: enginetest.NewClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	if steer(s, []omni.Message{omni.UserText("x")}) {
		t.Fatal("Steer outside a run reported true")
	}
	got := collect(t, s, engine.RunOptions{}, omni.UserText("go"))
	var steered []string
	for _, m := range got {
		if m.IsModel(omni.Text) && m.Payload.Role == omni.RoleUser {
			steered = append(steered, m.Payload.Text)
		}
	}
	if len(steered) != 1 || steered[0] != "[user_steering]\nkeep\n[/user_steering]" {
		t.Fatalf("steering delivered: %q", steered)
	}
}

// steer is Session.Steer for valid input.
func steer(s *engine.Session, input []omni.Message) bool {
	ok, err := s.Steer(input)
	if err != nil {
		panic(err)
	}
	return ok
}

type failingSink struct{ n int }

func (f *failingSink) Write(context.Context, omni.Message) error {
	f.n++
	return errors.New("disk full")
}
func (f *failingSink) Rotate() error { return errors.New("disk full") }

// Trace failures are diagnostics; the run is not disturbed (E-16.7).
func TestTraceErrorsAreDiagnostics(t *testing.T) {
	var d diags
	sink := &failingSink{}
	s, err := engine.New(engine.Config{Meta: enginetest.Meta("t"), LLM: enginetest.NewLLM(enginetest.Reply{Emit: enginetest.TextReply(3, "hi")}), Trace: sink, Clock: enginetest.NewClock(t0), OnDiagnostic: d.add})
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, s, engine.RunOptions{}, omni.UserText("go"))
	if last := got[len(got)-1]; !last.IsEvent(omni.RequestEnd) || last.Payload.Status() != omni.StatusCompleted {
		t.Fatalf("run disturbed: %+v", last.Payload)
	}
	if sink.n == 0 || !strings.Contains(d.kinds(), "trace") {
		t.Fatalf("writes %d, diagnostics %s", sink.n, d.kinds())
	}
}

// A resumed session hands its history to the LLM once, before the first
// request, and starts from the snapshot's carry-over and counters.
func TestResumeSnapshot(t *testing.T) {
	llm := enginetest.NewLLM(enginetest.Reply{Emit: enginetest.TextReply(7, "again")})
	hist := []omni.Message{omni.UserText("earlier"), omni.AssistantText("answer", omni.StatusCompleted)}
	carry := []omni.Message{omni.ToolOutput("X", "late", omni.StatusCompleted)}
	s, err := engine.New(engine.Config{Meta: enginetest.Meta("r"), LLM: llm, Clock: enginetest.NewClock(t0), Resume: &engine.Snapshot{
		History: hist, CarryOver: carry, SessionTurns: 2, SessionTokens: omni.TokenCounts{Total: 40}, LastRequestTotal: 20, MetaWritten: true,
	}})
	if err != nil {
		t.Fatal(err)
	}
	collect(t, s, engine.RunOptions{}, omni.UserText("Continue."))
	if h := llm.History(); len(h) != 2 {
		t.Fatalf("history injected: %v", h)
	}
	if c := llm.Calls(); len(c) != 1 || kinds(c[0]) != "tool_call_output@X text" {
		t.Fatalf("first request: %s", kinds(c[0]))
	}
	if snap := s.Snapshot(); snap.SessionTurns != 3 || snap.LastRequestTotal != 7 {
		t.Fatalf("counters after: %+v", snap)
	}
}

// A resumed session whose model cannot load a history (no LoadHistory:
// in JavaScript, a model object without loadHistory) says so once: the
// model answered without the conversation, and nothing said why.
func TestResumeHistoryWithoutLoader(t *testing.T) {
	llm := enginetest.NewLLM(enginetest.Reply{Emit: enginetest.TextReply(7, "again")}, enginetest.Reply{Emit: enginetest.TextReply(7, "more")})
	hist := []omni.Message{omni.UserText("earlier"), omni.AssistantText("answer", omni.StatusCompleted)}
	var d diags
	s, err := engine.New(engine.Config{Meta: enginetest.Meta("r"), LLM: engine.LLMFunc(llm.StreamGenerate), Clock: enginetest.NewClock(t0), OnDiagnostic: d.add, Resume: &engine.Snapshot{History: hist, MetaWritten: true}})
	if err != nil {
		t.Fatal(err)
	}
	collect(t, s, engine.RunOptions{}, omni.UserText("one"))
	collect(t, s, engine.RunOptions{}, omni.UserText("two"))
	if k := d.kinds(); k != "llm" {
		t.Fatalf("diagnostics %q, want one llm", k)
	}
	if msg := d.ds[0].Err.Error(); !strings.Contains(msg, "resumed history (2 messages) is not handed to the model: it has no LoadHistory (loadHistory in JavaScript)") {
		t.Fatalf("diagnostic %q", msg)
	}
}

// loadingLLM's first LoadHistory waits for the run's abort; the others
// take the history.
type loadingLLM struct {
	*enginetest.LLM
	entered chan struct{}
	loads   [][]omni.Message
}

func (l *loadingLLM) LoadHistory(ctx context.Context, h []omni.Message) error {
	l.loads = append(l.loads, h)
	if len(l.loads) == 1 {
		close(l.entered)
		<-ctx.Done()
		return ctx.Err()
	}
	return l.LLM.LoadHistory(ctx, h)
}

// A run aborted while its model loads the resumed history leaves the
// history to the next request, with no diagnostic: it was dropped, and the
// model answered every later run without it.
func TestResumeLoadCutByAbort(t *testing.T) {
	llm := &loadingLLM{LLM: enginetest.NewLLM(enginetest.Reply{Emit: enginetest.TextReply(7, "again")}), entered: make(chan struct{})}
	hist := []omni.Message{omni.UserText("earlier"), omni.AssistantText("answer", omni.StatusCompleted)}
	var d diags
	s, err := engine.New(engine.Config{Meta: enginetest.Meta("r"), LLM: llm, Clock: enginetest.NewClock(t0), OnDiagnostic: d.add, Resume: &engine.Snapshot{History: hist, MetaWritten: true}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-llm.entered
		cancel()
	}()
	got := collectCtx(t, ctx, s, engine.RunOptions{}, omni.UserText("one"))
	if last := got[len(got)-1]; last.Payload.Type != omni.Abort {
		t.Fatalf("the aborted run ended with %+v", last.Payload)
	}
	collect(t, s, engine.RunOptions{}, omni.UserText("two"))
	if len(llm.loads) != 2 || len(llm.loads[1]) != 2 || len(llm.History()) != 2 {
		t.Fatalf("loads %v, history taken %v", llm.loads, llm.History())
	}
	if k := d.kinds(); k != "" {
		t.Errorf("diagnostics %s", k)
	}
}

// A session keeps neither the snapshot it was resumed from nor, once its
// model took it, the history: Config.Resume stayed in the session, and
// with it what it pointed into (a host's Resumed, which held every record
// of the Trace file) and the history the model had taken at the first
// request, for as long as the session lived.
func TestResumedSessionKeepsNoSnapshot(t *testing.T) {
	type resumed struct { // a host's result of a resume, the snapshot inside
		records []omni.Message
		snap    engine.Snapshot
	}
	r := &resumed{records: make([]omni.Message, 100), snap: engine.Snapshot{History: []omni.Message{omni.UserText("earlier"), omni.AssistantText("answer", omni.StatusCompleted)}}}
	host, history := weak.Make(r), weak.Make(&r.snap.History[0])
	llm := enginetest.NewLLM(enginetest.Reply{Emit: enginetest.TextReply(7, "again")})
	s, err := engine.New(engine.Config{Meta: enginetest.Meta("r"), LLM: llm, Clock: enginetest.NewClock(t0), Resume: &r.snap})
	if err != nil {
		t.Fatal(err)
	}
	r = nil
	runtime.GC()
	if host.Value() != nil {
		t.Error("the session keeps what its Config.Resume points into")
	}
	if history.Value() == nil {
		t.Fatal("the history is gone before the model took it")
	}
	collect(t, s, engine.RunOptions{}, omni.UserText("Continue."))
	runtime.GC()
	if history.Value() != nil {
		t.Error("the session keeps the history its model took")
	}
	if len(llm.History()) != 2 {
		t.Errorf("history loaded: %v", llm.History())
	}
	runtime.KeepAlive(s)
}

func TestNewRejectsBadConfig(t *testing.T) {
	for name, cfg := range map[string]engine.Config{
		"no meta":  {LLM: enginetest.NewLLM()},
		"no id":    {Meta: omni.Message{Type: omni.TypeSessionMeta}, LLM: enginetest.NewLLM()},
		"no llm":   {Meta: enginetest.Meta("x")},
		"bad mode": {Meta: enginetest.Meta("x"), LLM: enginetest.NewLLM(), Compaction: &engine.Compaction{Mode: "squash"}},
	} {
		if _, err := engine.New(cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// A tool list that could only break the stream and the Trace (invalid
	// JSON in tool_list_ready), or that a provider would send as a tool of
	// no parameters, is refused, naming the tool.
	for want, tool := range map[string]omni.ToolDefinition{
		`engine: Config.ToolList[0]: the name is empty`:                                       {Parameters: omni.RawJSON(`{}`)},
		`engine: Config.ToolList[0] ("t"): parameters: want a JSON Schema object, got "{bad"`: {Name: "t", Parameters: omni.RawJSON(`{bad`)},
		`engine: Config.ToolList[0] ("t"): parameters: want a JSON Schema object, got "[1]"`:  {Name: "t", Parameters: omni.RawJSON(`[1]`)},
	} {
		_, err := engine.New(engine.Config{Meta: enginetest.Meta("x"), LLM: enginetest.NewLLM(), ToolList: []omni.ToolDefinition{tool}})
		if err == nil || err.Error() != want {
			t.Errorf("ToolList %+v: %v, want %s", tool, err, want)
		}
	}
	// Two tools of one name, which the JavaScript API refuses: a call of
	// that name could mean either, and a model API refuses such a list
	// (Anthropic's: tool names must be unique) at every request.
	tools := []omni.ToolDefinition{{Name: "read"}, {Name: "write"}, {Name: "read", Description: "again"}}
	_, err := engine.New(engine.Config{Meta: enginetest.Meta("x"), LLM: enginetest.NewLLM(), ToolList: tools})
	if want := `engine: Config.ToolList[2] ("read"): ToolList[0] has that name too`; err == nil || err.Error() != want {
		t.Errorf("a name twice: %v, want %s", err, want)
	}
}

// A tool call the model closes "aborted" because the run was aborted is no
// failure: no diagnostic (one came at every Stop during a streamed call).
func TestAbortedCallAtStopIsNoDiagnostic(t *testing.T) {
	var d diags
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	llm := engine.LLMFunc(func(c context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		emit(omni.Partial(omni.PartialToolCall, omni.EventStart, "", "a", "f", ""))
		cancel()
		<-c.Done()
		emit(omni.Partial(omni.PartialToolCall, omni.EventStop, "", "a", "f", omni.StatusAborted))
		call := omni.ToolCallMsg("a", "f", "")
		call.Payload.StopReason = omni.StatusAborted
		emit(call)
		return engine.Outcome{Status: omni.StatusAborted}
	})
	s, err := engine.New(engine.Config{Meta: enginetest.Meta("d"), LLM: llm, Clock: enginetest.NewClock(t0), OnDiagnostic: d.add})
	if err != nil {
		t.Fatal(err)
	}
	collectCtx(t, ctx, s, engine.RunOptions{}, omni.UserText("go"))
	if k := d.kinds(); strings.Contains(k, string(engine.DiagLLM)) {
		t.Errorf("diagnostics %s, want no llm one", k)
	}
}

func TestCloseAbortsAndRefuses(t *testing.T) {
	var s *engine.Session
	llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		s.Close()
		<-ctx.Done()
		return engine.Outcome{Status: omni.StatusAborted}
	})
	var err error
	s, err = engine.New(engine.Config{Meta: enginetest.Meta("c"), LLM: llm, Clock: enginetest.NewClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, s, engine.RunOptions{}, omni.UserText("go"))
	if last := got[len(got)-1]; !last.IsEvent(omni.Abort) || last.Payload.Reason() != engine.ReasonUser {
		t.Fatalf("last message %+v", last.Payload)
	}
	if _, err := s.Start(context.Background(), nil, engine.RunOptions{}); !errors.Is(err, engine.ErrClosed) {
		t.Fatalf("Start after Close: %v", err)
	}
	if _, err := s.Compact(context.Background()); !errors.Is(err, engine.ErrClosed) {
		t.Fatalf("Compact after Close: %v", err)
	}
}

// Snapshot and Compactability may be called while a run is in flight (the
// JS bridge does); they report the state as of the last run's end.
func TestSnapshotDuringRun(t *testing.T) {
	var s *engine.Session
	inside := make(chan engine.Snapshot, 1)
	llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		done := make(chan struct{})
		go func() { inside <- s.Snapshot(); _ = s.Compactability(); close(done) }()
		<-done
		emit(enginetest.Usage(11))
		return engine.Outcome{Status: omni.StatusCompleted}
	})
	var err error
	s, err = engine.New(engine.Config{Meta: enginetest.Meta("d"), LLM: llm, Clock: enginetest.NewClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	collect(t, s, engine.RunOptions{}, omni.UserText("go"))
	if got := <-inside; got.SessionTurns != 0 {
		t.Fatalf("snapshot during the first run: %+v", got)
	}
	if got := s.Snapshot(); got.SessionTurns != 1 || got.LastRequestTotal != 11 {
		t.Fatalf("snapshot after the run: %+v", got)
	}
}

// NextBatch and NextEach return the same stream as Next, in order, with
// several messages per call when they are already produced.
func TestNextBatch(t *testing.T) {
	each := func(r *engine.Run, max int) ([]omni.Message, bool) {
		var got []omni.Message
		ok := r.NextEach(max, func(m *omni.Message) { got = append(got, *m) })
		if ok != (len(got) > 0) {
			t.Fatalf("NextEach reported %v after %d messages", ok, len(got))
		}
		return got, ok
	}
	t.Run("NextBatch", func(t *testing.T) {
		testNextBatch(t, func(r *engine.Run, max int) ([]omni.Message, bool) { return r.NextBatch(nil, max) })
	})
	t.Run("NextEach", func(t *testing.T) { testNextBatch(t, each) })
}

func testNextBatch(t *testing.T, next func(r *engine.Run, max int) ([]omni.Message, bool)) {
	// The LLM emits 103 messages (fewer than the queue holds, so it never
	// waits), then reports that it did. The first batch is request_begin
	// (the LLM starts once it is taken); the consumer asks for its third
	// batch only when the LLM is done, so at least 39 messages are already
	// produced then.
	emitted := make(chan struct{}, 2)
	mk := func() *engine.Session {
		llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
			for _, m := range enginetest.TextReply(5, strings.Split(strings.Repeat("ab", 50), "")...) {
				emit(m)
			}
			emitted <- struct{}{}
			return engine.Outcome{Status: omni.StatusCompleted}
		})
		s, err := engine.New(engine.Config{Meta: enginetest.Meta("b"), LLM: llm, Clock: enginetest.NewClock(t0)})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	want := kinds(collect(t, mk(), engine.RunOptions{}, omni.UserText("go")))
	<-emitted
	r, err := mk().Start(context.Background(), []omni.Message{omni.UserText("go")}, engine.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []omni.Message
	calls, biggest := 0, 0
	for {
		batch, ok := next(r, 64)
		if !ok {
			break
		}
		calls++
		if calls == 2 {
			<-emitted // every message of the LLM is produced now
		}
		biggest = max(biggest, len(batch))
		if len(batch) > 64 {
			t.Fatalf("batch of %d over its max", len(batch))
		}
		got = append(got, batch...)
	}
	if kinds(got) != want {
		t.Fatalf("the stream differs from Next's:\n got %s\nwant %s", kinds(got), want)
	}
	if _, ok := next(r, 8); ok {
		t.Fatal("a message after the end")
	}
	if biggest < 39 {
		t.Fatalf("largest batch %d: the messages already produced were not taken", biggest)
	}
	t.Logf("%d messages in %d batches (largest %d)", len(got), calls, biggest)
}

// permanent stops a failed request only (E-10.1): a timeout or malformed
// outcome marked permanent is retried, and its request_end announces the
// wait (README, Decisions). A permanent failure is not retried.
func TestPermanentStopsFailedOnly(t *testing.T) {
	for _, tc := range []struct {
		status  engine.Status
		retried bool
	}{{omni.StatusTimeout, true}, {omni.StatusMalformed, true}, {omni.StatusFailed, false}} {
		llm := enginetest.NewLLM(
			enginetest.Reply{Outcome: engine.Outcome{Status: tc.status, Permanent: true, ErrorMessage: "x"}},
			enginetest.Reply{Emit: enginetest.TextReply(3, "back")},
		)
		s, err := engine.New(engine.Config{Meta: enginetest.Meta("p"), LLM: llm, Clock: enginetest.NewClock(t0)})
		if err != nil {
			t.Fatal(err)
		}
		var ends []omni.Message
		for _, m := range collect(t, s, engine.RunOptions{}, omni.UserText("go")) {
			if m.IsEvent(omni.RequestEnd) {
				ends = append(ends, m)
			}
		}
		if tc.retried != (len(ends) == 2) || (ends[0].Payload.RetryInMs() != nil) != tc.retried {
			t.Errorf("%s, permanent: %d requests, retry_in_ms %v; want retried %v", tc.status, len(ends), ends[0].Payload.RetryInMs(), tc.retried)
		}
	}
}

// A reply the provider cut short (Outcome.Cut) completes as it went, and a
// DiagLLM diagnostic names why: PROTOCOL.md has no stop reason for it, and
// without a word a user saw an answer end mid-sentence.
func TestCutReplyDiagnostic(t *testing.T) {
	llm := enginetest.NewLLM(
		enginetest.Reply{Emit: enginetest.TextReply(5, "Half a sen"), Outcome: engine.Outcome{Status: omni.StatusCompleted, Cut: `finish_reason "length"`}},
		enginetest.Reply{Emit: enginetest.TextReply(9, "Whole.")},
	)
	var d diags
	s, err := engine.New(engine.Config{Meta: enginetest.Meta("cut"), LLM: llm, Clock: enginetest.NewClock(t0), OnDiagnostic: d.add})
	if err != nil {
		t.Fatal(err)
	}
	var ends []string
	for _, prompt := range []string{"one", "two"} {
		for _, m := range collect(t, s, engine.RunOptions{}, omni.UserText(prompt)) {
			if m.Payload.Type == omni.RequestEnd {
				ends = append(ends, m.Payload.Status())
			}
		}
	}
	if strings.Join(ends, " ") != "completed completed" {
		t.Errorf("request_end statuses %v", ends)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.ds) != 1 || d.ds[0].Kind != engine.DiagLLM || !errors.Is(d.ds[0].Err, engine.ErrReplyCut) || !strings.Contains(d.ds[0].Err.Error(), `the provider cut the reply short (finish_reason "length")`) {
		t.Errorf("diagnostics %+v, want one llm diagnostic naming the cut", d.ds)
	}
}

// An onDiagnostic that closes the session, or steers it, on a cut reply's
// diagnostic goes through: it is called before request_end goes out, under
// the driver's lock, which Close and Steer do not take.
func TestCutReplyDiagnosticCallsBack(t *testing.T) {
	llm := enginetest.NewLLM(enginetest.Reply{Emit: enginetest.TextReply(5, "Half a sen"), Outcome: engine.Outcome{Status: omni.StatusCompleted, Cut: `stop_reason "max_tokens"`}})
	var s *engine.Session
	called := make(chan bool, 1)
	s, err := engine.New(engine.Config{Meta: enginetest.Meta("cut-back"), LLM: llm, Clock: enginetest.NewClock(t0), OnDiagnostic: func(d engine.Diagnostic) {
		if errors.Is(d.Err, engine.ErrReplyCut) {
			s.Steer([]omni.Message{omni.UserText("go on")})
			s.Close()
			called <- true
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	collect(t, s, engine.RunOptions{}, omni.UserText("one"))
	select {
	case <-called:
	default:
		t.Fatal("onDiagnostic was not called")
	}
}

// A failed run's abort reason is one of the exported prefixes and its
// detail, as ENGINE.md §18 writes it: Go code reads it with them rather
// than with literals of its own.
func TestAbortReasonPrefixes(t *testing.T) {
	for _, tc := range []struct {
		out  engine.Outcome
		want string
	}{
		{engine.Outcome{Status: omni.StatusAuth, ErrorMessage: "bad key"}, engine.ReasonLLMErrorPrefix + "bad key"},
		{engine.Outcome{Status: omni.StatusFailed, Permanent: true}, engine.ReasonLLMErrorPrefix + "unknown"},
		{engine.Outcome{Status: omni.StatusTimeout}, engine.ReasonReconnectFailedPrefix + "0 retries"},
		{engine.Outcome{Status: omni.StatusMalformed}, engine.ReasonMalformedPrefix + "0 retries"},
		{engine.Outcome{Status: omni.StatusFailed, ErrorMessage: "boom"}, engine.ReasonRequestFailedPrefix + "0 retries: boom"},
	} {
		llm := enginetest.NewLLM(enginetest.Reply{Outcome: tc.out})
		s, err := engine.New(engine.Config{Meta: enginetest.Meta("a"), LLM: llm, Clock: enginetest.NewClock(t0), MaxReconnects: -1})
		if err != nil {
			t.Fatal(err)
		}
		got := collect(t, s, engine.RunOptions{}, omni.UserText("go"))
		if last := got[len(got)-1]; last.Payload.Type != omni.Abort || last.Payload.Reason() != tc.want {
			t.Errorf("%s: ended with %+v, want the abort %q", tc.out.Status, last.Payload, tc.want)
		}
	}
}

// The cut reply's diagnostic says what cut it, by the reason the provider
// gave: it said "at its output-token limit … or stopped by its filter"
// of every cut, a pause of Anthropic's server tools and a refusal too.
func TestCutReplyCauseNamed(t *testing.T) {
	for cut, want := range map[string]string{
		`finish_reason "length"`:                      `(finish_reason "length"): a reply at its output-token limit (raise the adapter's MaxTokens); it completed as far as it went`,
		`stop_reason "max_tokens"`:                    `: a reply at its output-token limit (raise the adapter's MaxTokens);`,
		`incomplete: "max_output_tokens"`:             `: a reply at its output-token limit (raise the adapter's MaxTokens);`,
		`stop_reason "model_context_window_exceeded"`: `: a reply that filled the model's context window;`,
		`finish_reason "model_length"`:                `: a reply that filled the model's context window;`,
		`finish_reason "content_filter"`:              `: a reply stopped by the provider's content filter;`,
		`incomplete: "content_filter"`:                `: a reply stopped by the provider's content filter;`,
		`finish_reason "sensitive"`:                   `: a reply stopped by the provider's content filter;`,
		`stop_reason "refusal": the "policy" said no`: `(stop_reason "refusal": the "policy" said no): a reply the model refused to go on with;`,
		`stop_reason "pause_turn"`:                    `(stop_reason "pause_turn"): a turn the provider's own tools (web search) paused, which is not continued;`,
		`finish_reason "other"`:                       `(finish_reason "other"); it completed as far as it went`,
		`length`:                                      `(length): a reply at its output-token limit`,
	} {
		llm := enginetest.NewLLM(enginetest.Reply{Emit: enginetest.TextReply(5, "Half"), Outcome: engine.Outcome{Status: omni.StatusCompleted, Cut: cut}})
		var d diags
		s, err := engine.New(engine.Config{Meta: enginetest.Meta("cut-cause"), LLM: llm, Clock: enginetest.NewClock(t0), OnDiagnostic: d.add})
		if err != nil {
			t.Fatal(err)
		}
		collect(t, s, engine.RunOptions{}, omni.UserText("one"))
		d.mu.Lock()
		if len(d.ds) != 1 || !errors.Is(d.ds[0].Err, engine.ErrReplyCut) || !strings.Contains(d.ds[0].Err.Error(), want) || strings.Contains(d.ds[0].Err.Error(), " or ") {
			t.Errorf("cut %s: diagnostics %v, want one naming %q", cut, d.ds, want)
		}
		d.mu.Unlock()
	}
}

// A failure whose provider asked for a wait (Outcome.RetryAfter: an HTTP
// Retry-After) is retried after that wait when it is longer than the
// backoff's, announced as retry_in_ms; a shorter one leaves the backoff's.
// The retries of a compaction wait it too. Before, the backoff alone
// decided, and a rate-limited request was retried before the server
// took it again.
func TestRetryAfterWaited(t *testing.T) {
	llm := enginetest.NewLLM(
		enginetest.Reply{Outcome: engine.Outcome{Status: omni.StatusTimeout, ErrorMessage: "HTTP 429", RetryAfter: 20 * time.Second}},
		enginetest.Reply{Outcome: engine.Outcome{Status: omni.StatusTimeout, ErrorMessage: "HTTP 429", RetryAfter: time.Second}},
		enginetest.Reply{Outcome: engine.Outcome{Status: omni.StatusFailed, ErrorMessage: "HTTP 429", RetryAfter: 90 * time.Second}},
		enginetest.Reply{Emit: enginetest.TextReply(5, "Done.")},
	)
	clock := enginetest.NewClock(t0)
	s, err := engine.New(engine.Config{Meta: enginetest.Meta("retry-after"), LLM: llm, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	var announced []string
	for _, m := range collect(t, s, engine.RunOptions{}, omni.UserText("go")) {
		if m.IsEvent(omni.RequestEnd) {
			if r := m.Payload.RetryInMs(); r != nil {
				announced = append(announced, strconv.Itoa(*r))
			}
		}
	}
	if got, want := strings.Join(announced, " "), "20000 4000 90000"; got != want {
		t.Errorf("retry_in_ms %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(clock.Sleeps()), "[20s 4s 1m30s]"; got != want {
		t.Errorf("waits %s, want %s", got, want)
	}
}
