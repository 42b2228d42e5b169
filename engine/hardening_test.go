package engine_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/enginetest"
	"github.com/floehq/floe/engine/omni"
)

// checkDiscipline runs the stream's messages of every producer that streams
// fragments (the LLM and each tool call: they use different keys) through one
// checker; any open fragment at the end is a failure (PROTOCOL P-6).
func checkDiscipline(t *testing.T, got []omni.Message) {
	t.Helper()
	var d omni.Discipline
	for i, m := range got {
		if m.Type != omni.TypeModelMsg {
			continue
		}
		if err := d.Check(m); err != nil {
			t.Fatalf("message %d (%s): %v\n%s", i, m.Payload.Type, err, show(got))
		}
	}
	if err := d.End(); err != nil {
		t.Fatalf("%v\n%s", err, show(got))
	}
}

func show(ms []omni.Message) string {
	var b strings.Builder
	for _, m := range ms {
		b.Write(m.AppendJSON(nil))
		b.WriteByte('\n')
	}
	return b.String()
}

func requestEnds(ms []omni.Message) []omni.Payload {
	var out []omni.Payload
	for _, m := range ms {
		if m.IsEvent(omni.RequestEnd) {
			out = append(out, m.Payload)
		}
	}
	return out
}

func partial(typ, ev, body string) omni.Message {
	return omni.Partial(typ, ev, body, "", "", omni.StatusCompleted)
}

// When the engine ends an attempt itself, the fragment the LLM left open is
// closed: a stop, then the complete message with the deltas' body, both with
// the attempt's status (PROTOCOL P-6). A model that throws (here: returns
// failed after a panic-free failure) keeps its status and message.
func TestOpenModelFragmentIsClosed(t *testing.T) {
	cases := []struct {
		name    string
		emit    []omni.Message
		outcome engine.Outcome
		panics  bool
		status  string
		errText string
	}{
		{"failed mid-fragment", []omni.Message{partial(omni.PartialText, omni.EventStart, ""), partial(omni.PartialText, omni.EventDelta, "ab")},
			engine.Outcome{Status: engine.StatusFailed, ErrorMessage: "socket closed"}, false, omni.StatusFailed, "socket closed"},
		{"panics mid-fragment", []omni.Message{partial(omni.PartialThinking, omni.EventStart, ""), partial(omni.PartialThinking, omni.EventDelta, "ab")},
			engine.Outcome{}, true, omni.StatusFailed, "llm callback panicked: boom"},
		{"two starts", []omni.Message{partial(omni.PartialText, omni.EventStart, ""), partial(omni.PartialText, omni.EventDelta, "ab"), partial(omni.PartialText, omni.EventStart, ""), partial(omni.PartialText, omni.EventDelta, "zz")},
			engine.Outcome{Status: engine.StatusCompleted}, false, omni.StatusMalformed, "start of partial_text while it is open"},
		{"completed with a fragment open", []omni.Message{partial(omni.PartialText, omni.EventStart, ""), partial(omni.PartialText, omni.EventDelta, "ab")},
			engine.Outcome{Status: engine.StatusCompleted}, false, omni.StatusMalformed, "stream ended with partial_text open"},
		// Its end would follow token_usage, the model's last message (E-7.2).
		{"token_usage with a fragment open", []omni.Message{partial(omni.PartialText, omni.EventStart, ""), partial(omni.PartialText, omni.EventDelta, "ab"), enginetest.Usage(1)},
			engine.Outcome{Status: engine.StatusCompleted}, false, omni.StatusMalformed, "token_usage while partial_text is open"},
		{"stop without its complete message", []omni.Message{partial(omni.PartialText, omni.EventStart, ""), partial(omni.PartialText, omni.EventDelta, "ab"), partial(omni.PartialText, omni.EventStop, "")},
			engine.Outcome{Status: engine.StatusTimeout}, false, omni.StatusTimeout, ""},
		{"tool call fragment", []omni.Message{omni.Partial(omni.PartialToolCall, omni.EventStart, "", "A", "read", omni.StatusCompleted), omni.Partial(omni.PartialToolCall, omni.EventDelta, `{"p":`, "A", "", omni.StatusCompleted)},
			engine.Outcome{Status: engine.StatusFailed, ErrorMessage: "cut"}, false, omni.StatusFailed, "cut"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			first := true
			llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
				if !first {
					emit(enginetest.Usage(1))
					return engine.Outcome{Status: engine.StatusCompleted}
				}
				first = false
				for _, m := range tc.emit {
					emit(m)
				}
				if tc.panics {
					panic("boom")
				}
				return tc.outcome
			})
			tools := enginetest.Tools{"read": func(context.Context, omni.Message, func(omni.Message)) error { return nil }}
			s, err := engine.New(engine.Config{Meta: enginetest.Meta("f"), LLM: llm, Environment: tools, Clock: enginetest.NewClock(t0)})
			if err != nil {
				t.Fatal(err)
			}
			got := collect(t, s, engine.RunOptions{Approve: allow}, omni.UserText("go"))
			checkDiscipline(t, got)
			ends := requestEnds(got)
			if len(ends) == 0 || ends[0].Status() != tc.status || !strings.Contains(ends[0].ErrorMessage(), tc.errText) {
				t.Fatalf("first request_end %+v, want %s %q\n%s", ends, tc.status, tc.errText, show(got))
			}
			// The synthesized stop and complete message carry the status and
			// the deltas' body, right before request_end.
			var i int
			for i = range got {
				if got[i].IsEvent(omni.RequestEnd) {
					break
				}
			}
			stop, complete := got[i-2], got[i-1]
			if tc.emit[len(tc.emit)-1].Payload.EventType == omni.EventStop {
				stop.Payload.StopReason = tc.status // the LLM's own stop; only the complete message is synthesized
			}
			if stop.Payload.EventType != omni.EventStop || stop.Payload.StopReason != tc.status ||
				complete.IsPartial() || complete.Payload.StopReason != tc.status || complete.Payload.Body() != strings.TrimPrefix(tc.emit[1].Payload.Body(), "") {
				t.Fatalf("closing messages %+v / %+v\n%s", stop.Payload, complete.Payload, show(got))
			}
			for _, m := range got {
				if m.IsEvent(omni.ApprovalDecision) {
					t.Fatal("a closed tool_call fragment was dispatched")
				}
			}
		})
	}
}

// blockingLLM emits a fragment start and a delta, then ignores its context
// forever (until release): only the abort grace ends the request.
type blockingLLM struct {
	waiting   chan struct{}
	release   chan struct{}
	calls     int
	abandoned <-chan struct{} // the request's GenerateParams.Abandoned
	late      chan struct{}   // if not nil, closed once the late emit returned
}

func (b *blockingLLM) StreamGenerate(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
	b.calls++
	b.abandoned = p.Abandoned
	emit(partial(omni.PartialText, omni.EventStart, ""))
	emit(partial(omni.PartialText, omni.EventDelta, "half"))
	close(b.waiting)
	<-b.release
	emit(partial(omni.PartialText, omni.EventDelta, "late")) // dropped: the request already ended
	if b.late != nil {
		close(b.late)
	}
	return engine.Outcome{Status: engine.StatusCompleted}
}

// fireGrace waits for ready, runs then (an abort, or nothing), and fires
// the abort-grace timer once it is armed with the default grace, the
// README's 1 s (written out: DefaultAbortGrace would pass whatever it was).
func fireGrace(t *testing.T, timer *enginetest.Timer, ready <-chan struct{}, then func()) {
	<-ready
	then()
	if d := <-timer.Armed(); d != time.Second {
		t.Errorf("grace %v", d)
	}
	timer.Fire()
}

// An LLM that ignores its abort is abandoned once the abort grace elapses
// on the injected Timer (no real wait): the request ends aborted (not
// malformed), its fragment closed, and the run ends with abort.
func TestAbandonedLLMEndsAborted(t *testing.T) {
	llm := &blockingLLM{waiting: make(chan struct{}), release: make(chan struct{}), late: make(chan struct{})}
	timer := enginetest.NewTimer()
	s, err := engine.New(engine.Config{Meta: enginetest.Meta("g"), LLM: llm, Clock: enginetest.NewClock(t0), Timer: timer})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	seq, err := s.Run(ctx, []omni.Message{omni.UserText("go")}, engine.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	go fireGrace(t, timer, llm.waiting, cancel)
	got := slices.Collect(seq)
	checkDiscipline(t, got)
	ends := requestEnds(got)
	if len(ends) != 1 || ends[0].Status() != omni.StatusAborted || !strings.Contains(ends[0].ErrorMessage(), "did not finish within 1000 ms") {
		t.Fatalf("request_end %+v\n%s", ends, show(got))
	}
	if last := got[len(got)-1]; !last.IsEvent(omni.Abort) {
		t.Fatalf("last %+v", last.Payload)
	}
	for _, m := range got {
		if m.Payload.Text == "late" {
			t.Fatal("a message of the abandoned LLM reached the stream")
		}
	}
	select { // written before waiting was closed, which the Fire waited for
	case <-llm.abandoned:
	default:
		t.Fatal("the abandoned request's GenerateParams.Abandoned is not closed")
	}
	// The abandoned LLM's late fragment (one that emit's fast path would
	// take) is dropped at once: emit returns.
	close(llm.release)
	<-llm.late
}

// An LLM that breaks the protocol is cancelled (the attempt is malformed);
// one that ignores that cancel is abandoned once the abort grace elapses,
// though the run itself was never aborted: the request ends malformed and
// the run goes on without it.
func TestRefusedLLMIgnoringItsCancelIsAbandoned(t *testing.T) {
	waiting := make(chan struct{})
	release := make(chan struct{})
	defer close(release)
	var abandoned <-chan struct{}
	llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		abandoned = p.Abandoned
		emit(partial(omni.PartialText, omni.EventDelta, "no start")) // a delta without its start: malformed
		close(waiting)
		<-release // ignores ctx
		return engine.Outcome{Status: engine.StatusCompleted}
	})
	timer := enginetest.NewTimer()
	s, err := engine.New(engine.Config{Meta: enginetest.Meta("r"), LLM: llm, Clock: enginetest.NewClock(t0), Timer: timer, MaxReconnects: -1})
	if err != nil {
		t.Fatal(err)
	}
	seq, err := s.Run(context.Background(), []omni.Message{omni.UserText("go")}, engine.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	go fireGrace(t, timer, waiting, func() {})
	got := slices.Collect(seq)
	ends := requestEnds(got)
	if len(ends) != 1 || ends[0].Status() != omni.StatusMalformed {
		t.Fatalf("request_end %+v\n%s", ends, show(got))
	}
	select { // written before waiting was closed, which the Fire waited for
	case <-abandoned:
	default:
		t.Fatal("the refused request's GenerateParams.Abandoned is not closed")
	}
	if n := timer.Fire(); n != 0 {
		t.Fatalf("%d grace timers still pending", n)
	}
}

// A tool that ignores its abort is abandoned after the grace: its call gets
// the failed output of E-6.5 at once and the run ends; the tool's
// ToolRequest.Abandoned is closed.
func TestAbandonedToolFails(t *testing.T) {
	running := make(chan struct{})
	release := make(chan struct{})
	defer close(release)
	abandoned := make(chan struct{})
	env := engine.EnvironmentFunc(func(ctx context.Context, req engine.ToolRequest, emit func(omni.Message)) error {
		emit(omni.Partial(omni.PartialToolCallOutput, omni.EventStart, "", "A", "", omni.StatusCompleted))
		emit(omni.Partial(omni.PartialToolCallOutput, omni.EventDelta, "partial", "A", "", omni.StatusCompleted))
		close(running)
		<-req.Abandoned
		close(abandoned)
		<-release
		return nil
	})
	llm := enginetest.NewLLM(enginetest.Reply{Emit: []omni.Message{omni.ToolCallMsg("A", "hang", "{}"), enginetest.Usage(1)}})
	timer := enginetest.NewTimer()
	s, err := engine.New(engine.Config{Meta: enginetest.Meta("h"), LLM: llm, Environment: env, Clock: enginetest.NewClock(t0), Timer: timer, AbortGrace: 250 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	seq, _ := s.Run(ctx, []omni.Message{omni.UserText("go")}, engine.RunOptions{Approve: allow})
	go func() {
		<-running
		cancel()
		for {
			select {
			case <-timer.Armed():
				timer.Fire()
			case <-abandoned:
				return
			}
		}
	}()
	var got []omni.Message
	for m := range seq {
		got = append(got, m)
	}
	<-abandoned
	checkDiscipline(t, got)
	var outs []omni.Payload
	for _, m := range got {
		if m.IsModel(omni.ToolCallOutput) {
			outs = append(outs, m.Payload)
		}
	}
	if len(outs) != 1 || outs[0].StopReason != omni.StatusFailed || outs[0].Output != "partial\n[tool error] tool did not finish within 250 ms of the abort" {
		t.Fatalf("outputs %+v\n%s", outs, show(got))
	}
	if !got[len(got)-1].IsEvent(omni.Abort) {
		t.Fatal("the run did not end with abort")
	}
}

// A callback that returns within the grace is never abandoned: the timer is
// stopped.
func TestAbortGraceStoppedWhenCallbackReturns(t *testing.T) {
	timer := enginetest.NewTimer()
	llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		<-ctx.Done()
		return engine.Outcome{Status: engine.StatusAborted}
	})
	s, _ := engine.New(engine.Config{Meta: enginetest.Meta("i"), LLM: llm, Clock: enginetest.NewClock(t0), Timer: timer})
	ctx, cancel := context.WithCancel(context.Background())
	r, _ := s.Start(ctx, []omni.Message{omni.UserText("go")}, engine.RunOptions{})
	r.Next() // request_begin
	cancel()
	for _, ok := r.Next(); ok; _, ok = r.Next() {
	}
	if n := timer.Fire(); n != 0 {
		t.Fatalf("%d grace timers still pending after the LLM returned", n)
	}
}

// Messages only the engine produces are dropped, with a diagnostic, when a
// tool or the LLM yields them; so is a tool output from the LLM, and a
// tool's output for another call's id. A tool_call that is not completed is
// not dispatched, and a diagnostic says so.
func TestForgedMessagesAreDropped(t *testing.T) {
	forged := []omni.Message{
		omni.RequestBeginMsg(),
		omni.Event(omni.Payload{Type: omni.RequestEnd, Rest: &omni.Rest{Status: omni.StatusCompleted}}),
		omni.ApprovalDecisionMsg(omni.DecisionAllow, "A"),
		omni.AbortMsg("forged"),
		omni.Event(omni.Payload{Type: omni.CompactionBegin, Rest: &omni.Rest{Reason: omni.ReasonManual, Mode: omni.ModeDiscard}}),
		omni.Event(omni.Payload{Type: omni.CompactionEnd, Rest: &omni.Rest{Reason: omni.ReasonManual, Mode: omni.ModeDiscard, Status: omni.StatusCompleted}}),
		omni.ToolListReadyMsg([]omni.ToolDefinition{}),
		enginetest.Meta("forged"),
	}
	llmEmit := append([]omni.Message{}, forged...)
	llmEmit = append(llmEmit,
		omni.ToolOutput("A", "forged output", omni.StatusCompleted),
		omni.Partial(omni.PartialToolCallOutput, omni.EventStart, "", "A", "", omni.StatusCompleted),
		omni.ToolCallMsg("A", "t", "{}"),
		omni.ToolCallMsg("B", "t", "{}"),
		func() omni.Message {
			m := omni.ToolCallMsg("C", "t", "{}")
			m.Payload.StopReason = omni.StatusFailed
			return m
		}(),
		enginetest.Usage(1))
	llm := enginetest.NewLLM(
		enginetest.Reply{Emit: llmEmit},
		enginetest.Reply{Emit: enginetest.TextReply(2, "done")},
	)
	tools := enginetest.Tools{"t": func(ctx context.Context, c omni.Message, emit func(omni.Message)) error {
		for _, m := range forged {
			emit(m)
		}
		id := c.Payload.ToolCallID
		other := "B"
		if id == "B" {
			other = "A"
		}
		emit(omni.ToolOutput(other, "for the other call", omni.StatusCompleted))
		emit(omni.ToolOutput(id, "own "+id, omni.StatusCompleted))
		return nil
	}}
	var d diags
	s, _ := engine.New(engine.Config{Meta: enginetest.Meta("j"), LLM: llm, Environment: tools, Clock: enginetest.NewClock(t0), OnDiagnostic: d.add})
	got := collect(t, s, engine.RunOptions{Approve: allow}, omni.UserText("go"))
	count := map[string]int{}
	outputs := map[string][]string{}
	for _, m := range got {
		count[m.Type+"/"+m.Payload.Type]++
		if m.IsModel(omni.ToolCallOutput) {
			outputs[m.Payload.ToolCallID] = append(outputs[m.Payload.ToolCallID], m.Payload.Output)
		}
	}
	if count["event_msg/abort"] != 0 || count["session_meta/"] != 0 || count["event_msg/tool_list_ready"] != 0 ||
		count["event_msg/compaction_begin"] != 0 || count["event_msg/request_begin"] != 2 || count["event_msg/request_end"] != 2 ||
		count["event_msg/approval_decision"] != 2 || count["model_msg/partial_tool_call_output"] != 0 {
		t.Fatalf("counts %v\n%s", count, show(got))
	}
	if len(outputs) != 2 || len(outputs["A"]) != 1 || outputs["A"][0] != "own A" || len(outputs["B"]) != 1 || outputs["B"][0] != "own B" {
		t.Fatalf("outputs %v", outputs)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var msgs []string
	for _, x := range d.ds {
		msgs = append(msgs, string(x.Kind)+": "+x.Err.Error())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		"llm: abort dropped: only the engine produces it",
		"llm: session_meta dropped",
		"llm: tool_call_output for \"A\" dropped: only a tool answers a call",
		"llm: partial_tool_call_output for \"A\" dropped: only a tool answers a call",
		"tool A: abort dropped",
		"tool B: request_end dropped",
		`tool A: tool_call_output for tool_call_id "B", not its own call, dropped`,
		`llm: tool_call "C" has stop_reason "failed", not completed: it is not dispatched`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no diagnostic %q in\n%s", want, all)
		}
	}
}

// A tool_call_id repeated within one request makes the attempt malformed
// (the error names the id); the retry is clean, and the id got one approval
// and one execution.
func TestRepeatedToolCallIDIsMalformed(t *testing.T) {
	llm := enginetest.NewLLM(
		enginetest.Reply{Emit: []omni.Message{omni.ToolCallMsg("X", "t", "{}"), omni.ToolCallMsg("X", "t", `{"again":1}`), enginetest.Usage(1)}},
		enginetest.Reply{Emit: enginetest.TextReply(2, "ok")},
	)
	var mu sync.Mutex
	runs := 0
	tools := enginetest.Tools{"t": func(ctx context.Context, c omni.Message, emit func(omni.Message)) error {
		mu.Lock()
		runs++
		mu.Unlock()
		return nil
	}}
	s, _ := engine.New(engine.Config{Meta: enginetest.Meta("k"), LLM: llm, Environment: tools, Clock: enginetest.NewClock(t0)})
	got := collect(t, s, engine.RunOptions{Approve: allow}, omni.UserText("go"))
	ends := requestEnds(got)
	if len(ends) != 2 || ends[0].Status() != omni.StatusMalformed || !strings.Contains(ends[0].ErrorMessage(), `"X"`) || ends[0].RetryInMs() == nil || ends[1].Status() != omni.StatusCompleted {
		t.Fatalf("request_ends %+v", ends)
	}
	decisions := 0
	for _, m := range got {
		if m.IsEvent(omni.ApprovalDecision) {
			decisions++
		}
	}
	if decisions != 1 || runs != 1 {
		t.Fatalf("%d approvals, %d executions for one id", decisions, runs)
	}
}

// Run.Close may be called from another goroutine while Next waits (-race
// used to report iter.Pull): it aborts the run, waits for that Next, and
// finishes the run; the session is free again.
func TestRunCloseFromAnotherGoroutine(t *testing.T) {
	waiting := make(chan struct{})
	calls := 0
	llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		calls++
		if calls == 1 {
			emit(partial(omni.PartialText, omni.EventStart, ""))
			close(waiting)
			<-ctx.Done()
			emit(partial(omni.PartialText, omni.EventStop, ""))
			emit(omni.AssistantText("", omni.StatusAborted))
			return engine.Outcome{Status: engine.StatusAborted}
		}
		emit(enginetest.Usage(1))
		return engine.Outcome{Status: engine.StatusCompleted}
	})
	sink := &enginetest.Sink{}
	s, _ := engine.New(engine.Config{Meta: enginetest.Meta("l"), LLM: llm, Clock: enginetest.NewClock(t0), Trace: sink})
	r, err := s.Start(context.Background(), []omni.Message{omni.UserText("go")}, engine.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan []omni.Message)
	go func() {
		var got []omni.Message
		for m, ok := r.Next(); ok; m, ok = r.Next() {
			got = append(got, m)
		}
		done <- got
	}()
	<-waiting
	r.Close() // the consumer's Next is in flight, waiting for the LLM
	got := <-done
	if _, ok := r.Next(); ok {
		t.Fatal("Next after Close returned a message")
	}
	files := sink.Files()
	last := files[len(files)-1]
	if !last[len(last)-1].IsEvent(omni.Abort) {
		t.Fatalf("the Trace does not end with abort: %s", show(last))
	}
	_ = got
	if _, err := s.Start(context.Background(), []omni.Message{omni.UserText("again")}, engine.RunOptions{}); err != nil {
		t.Fatalf("the session is still busy after Close: %v", err)
	}
}

// Close before the first Next, twice, and after the end are all safe.
func TestRunCloseEdges(t *testing.T) {
	s, _ := engine.New(engine.Config{Meta: enginetest.Meta("m"), LLM: enginetest.NewLLM(enginetest.Reply{Emit: enginetest.TextReply(1, "a")}, enginetest.Reply{Emit: enginetest.TextReply(1, "b")}), Clock: enginetest.NewClock(t0)})
	r, _ := s.Start(context.Background(), []omni.Message{omni.UserText("go")}, engine.RunOptions{})
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() { defer wg.Done(); r.Close() }()
	}
	wg.Wait()
	if _, ok := r.Next(); ok {
		t.Fatal("Next after Close")
	}
	r2, err := s.Start(context.Background(), []omni.Message{omni.UserText("go")}, engine.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for range r2.All() {
	}
	r2.Close()
}

// Steer refuses an invalid message as Start does, with ErrInvalidInput, and
// queues nothing.
func TestSteerValidatesInput(t *testing.T) {
	var s *engine.Session
	var steerErr error
	var steerOK bool
	llm := enginetest.NewLLM(enginetest.Reply{Emit: enginetest.TextReply(1, "a")})
	wrapped := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		steerOK, steerErr = s.Steer([]omni.Message{{Type: "bogus"}, omni.UserText("x")})
		return llm.StreamGenerate(ctx, p, emit)
	})
	s, _ = engine.New(engine.Config{Meta: enginetest.Meta("n"), LLM: wrapped, Clock: enginetest.NewClock(t0)})
	got := collect(t, s, engine.RunOptions{}, omni.UserText("go"))
	if steerOK || !errors.Is(steerErr, engine.ErrInvalidInput) || !strings.Contains(steerErr.Error(), "input[0]") {
		t.Fatalf("Steer = %v, %v", steerOK, steerErr)
	}
	for _, m := range got {
		if m.Type == "bogus" || strings.Contains(m.Payload.Text, "user_steering") {
			t.Fatalf("refused steering reached the stream: %s", show(got))
		}
	}
	if _, err := s.Start(context.Background(), []omni.Message{{Type: "bogus"}}, engine.RunOptions{}); !errors.Is(err, engine.ErrInvalidInput) {
		t.Fatalf("Start: %v", err)
	}
}

// Start and Steer refuse what the Trace never keeps (E-16.4), naming the
// message: a partial_* or a message with origin reached the model, not
// the Trace, and a resumed session's model never saw it.
func TestInputTheTraceCannotKeep(t *testing.T) {
	tagged := omni.UserText("sub")
	tagged.Origin = []string{"child"}
	for _, c := range []struct {
		name string
		m    omni.Message
		want string
	}{
		{"origin", tagged, "origin"},
		{"partial", omni.Partial(omni.PartialText, omni.EventDelta, "x", "", "", ""), "partial_text"},
	} {
		llm := enginetest.NewLLM(enginetest.Reply{Emit: enginetest.TextReply(1, "a")})
		s, _ := engine.New(engine.Config{Meta: enginetest.Meta("n"), LLM: llm, Clock: enginetest.NewClock(t0)})
		_, err := s.Start(context.Background(), []omni.Message{omni.UserText("go"), c.m}, engine.RunOptions{})
		if !errors.Is(err, engine.ErrInvalidInput) || !strings.Contains(err.Error(), "input[1]") || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s: Start: %v", c.name, err)
		}
		if _, err := s.SteerWithID([]omni.Message{c.m}); !errors.Is(err, engine.ErrInvalidInput) {
			t.Fatalf("%s: SteerWithID: %v", c.name, err)
		}
	}
}

// Start and Steer refuse an image_url that is not a web URL or a data: URL
// (PROTOCOL.md §3), naming it: every adapter dropped an empty one without
// a word and sent any other to the provider, which refused it on every
// later request of the session.
func TestInputImageURL(t *testing.T) {
	img := func(u string) omni.Message {
		return omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.ImageURL, Role: omni.RoleUser, Rest: &omni.Rest{ImageURL: u}}}
	}
	long := "file:///" + strings.Repeat("é", 100)
	for u, want := range map[string]string{
		"not a url":             `"not a url" is not a web URL`,
		"/shots/a.png":          `"/shots/a.png" is not a web URL`,
		"https://":              `"https://" is not a web URL`,
		"http:///a.png":         `"http:///a.png" is not a web URL`,
		"https://x/a b.png":     `"https://x/a b.png" is not a web URL`,
		"data:image/png;base64": `"data:image/png;base64" is a data: URL without a comma before its data`,
		long:                    `"file:///` + strings.Repeat("é", 28) + `"… is not a web URL`,
		// Control bytes one bit off ":" and "/" are not them.
		"http\x1a//example.com/a.png": `"http\x1a//example.com/a.png" is not a web URL`,
		"https:\x0f\x0fexample.com":   `"https:\x0f\x0fexample.com" is not a web URL`,
		"data\x1a,x":                  `"data\x1a,x" is not a web URL`,
	} {
		llm := enginetest.NewLLM(enginetest.Reply{Emit: enginetest.TextReply(1, "a")})
		s, _ := engine.New(engine.Config{Meta: enginetest.Meta("n"), LLM: llm, Clock: enginetest.NewClock(t0)})
		_, err := s.Start(context.Background(), []omni.Message{omni.UserText("go"), img(u)}, engine.RunOptions{})
		if !errors.Is(err, engine.ErrInvalidInput) || !strings.Contains(err.Error(), "input[1].payload.image_url: "+want) {
			t.Errorf("%q: Start: %v", u, err)
		}
		if _, err := s.SteerWithID([]omni.Message{img(u)}); !errors.Is(err, engine.ErrInvalidInput) {
			t.Errorf("%q: SteerWithID: %v", u, err)
		}
	}
	for _, u := range []string{"https://example.com/a.png", "HTTP://x", "data:image/png;base64,iVBORw==", "DATA:,", "data:image/svg+xml,%3Csvg%3E"} {
		llm := enginetest.NewLLM(enginetest.Reply{Emit: enginetest.TextReply(1, "a")})
		s, _ := engine.New(engine.Config{Meta: enginetest.Meta("n"), LLM: llm, Clock: enginetest.NewClock(t0)})
		got := collect(t, s, engine.RunOptions{}, omni.UserText("go"), img(u))
		if len(got) == 0 {
			t.Errorf("%q: no run", u)
		}
	}
}

// A second run of one subagent handle while the first is in flight is
// refused with ErrBusy (it used to give a silent empty stream).
func TestSubagentSecondRunBusy(t *testing.T) {
	waiting := make(chan struct{})
	release := make(chan struct{})
	llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		close(waiting)
		<-release
		emit(enginetest.Usage(1))
		return engine.Outcome{Status: engine.StatusCompleted}
	})
	meta := enginetest.Meta("child")
	meta.Payload.Edit().Source = omni.SourceSubagent
	h, err := engine.NewSubagent(engine.Config{Meta: meta, LLM: llm, Clock: enginetest.NewClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	r, err := h.Start(context.Background(), "task", nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan []omni.Message)
	go func() {
		var got []omni.Message
		for m := range r.All() {
			got = append(got, m)
		}
		done <- got
	}()
	<-waiting
	if _, err := h.Start(context.Background(), "again", nil); !errors.Is(err, engine.ErrBusy) {
		t.Fatalf("second Start: %v", err)
	}
	close(release)
	got := <-done
	if len(got) < 4 || got[0].Type != omni.TypeSessionMeta || got[1].Payload.Sender() != omni.SenderParentAgent {
		t.Fatalf("child stream %s", show(got))
	}
	for _, m := range got {
		if len(m.Origin) != 1 || m.Origin[0] != "child" {
			t.Fatalf("origin %v on %s", m.Origin, m.Payload.Type)
		}
	}
}

// ctxSink records the context of each Write.
type ctxSink struct {
	mu   sync.Mutex
	recs []ctxRec
}

type ctxRec struct {
	m        omni.Message
	canceled bool
	value    any
}

type ctxKey struct{}

func (c *ctxSink) Write(ctx context.Context, m omni.Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recs = append(c.recs, ctxRec{m, ctx.Err() != nil, ctx.Value(ctxKey{})})
	return nil
}
func (c *ctxSink) Rotate() error { return nil }

// TraceSink.Write gets the run's context (its values); once the run is
// aborted, an uncancelled one, so the records that end the run are written.
func TestTraceWriteContext(t *testing.T) {
	llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		<-ctx.Done()
		return engine.Outcome{Status: engine.StatusAborted}
	})
	sink := &ctxSink{}
	s, _ := engine.New(engine.Config{Meta: enginetest.Meta("o"), LLM: llm, Clock: enginetest.NewClock(t0), Trace: sink})
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "v"))
	r, _ := s.Start(ctx, []omni.Message{omni.UserText("go")}, engine.RunOptions{})
	r.Next()
	cancel()
	for _, ok := r.Next(); ok; _, ok = r.Next() {
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	last := sink.recs[len(sink.recs)-1]
	if !last.m.IsEvent(omni.Abort) || last.canceled || last.value != "v" {
		t.Fatalf("abort record written with canceled=%v value=%v (%s)", last.canceled, last.value, last.m.Payload.Type)
	}
	for _, rec := range sink.recs {
		if rec.canceled || rec.value != "v" {
			t.Fatalf("%s written with canceled=%v value=%v", rec.m.Payload.Type, rec.canceled, rec.value)
		}
	}
}

// cancelSink aborts the run from inside its first Write, the way an abort
// lands while a record is being written, and records what each Write's
// context says after that.
type cancelSink struct {
	ctxSink
	cancel func()
}

func (c *cancelSink) Write(ctx context.Context, m omni.Message) error {
	if c.cancel != nil {
		c.cancel()
		c.cancel = nil
	}
	return c.ctxSink.Write(ctx, m)
}

// An abort landing during a Write does not cancel that Write's context: a
// sink that honours cancellation would drop a record streamed before the
// abort, and the Trace would no longer match the stream (E-16.2).
func TestTraceWriteContextAbortDuringWrite(t *testing.T) {
	llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		<-ctx.Done()
		return engine.Outcome{Status: engine.StatusAborted}
	})
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "v"))
	defer cancel()
	sink := &cancelSink{cancel: cancel}
	s, _ := engine.New(engine.Config{Meta: enginetest.Meta("o"), LLM: llm, Clock: enginetest.NewClock(t0), Trace: sink})
	r, _ := s.Start(ctx, []omni.Message{omni.UserText("go")}, engine.RunOptions{})
	for _, ok := r.Next(); ok; _, ok = r.Next() {
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if len(sink.recs) < 2 || !sink.recs[len(sink.recs)-1].m.IsEvent(omni.Abort) {
		t.Fatalf("trace %d records, not ending in abort", len(sink.recs))
	}
	for _, rec := range sink.recs {
		if rec.canceled || rec.value != "v" {
			t.Fatalf("%s written with canceled=%v value=%v", rec.m.Type+"/"+rec.m.Payload.Type, rec.canceled, rec.value)
		}
	}
}

// panicSink is a TraceSink whose every call panics.
type panicSink struct{}

func (panicSink) Write(context.Context, omni.Message) error { panic("sink boom") }
func (panicSink) Rotate() error                             { panic("sink boom") }

// A Trace sink that panics, or a nil *trace.Writer-like value in the
// interface, is a failed write: a diagnostic, the run goes on and ends as
// it would; the panic never reaches the caller's loop. An OnDiagnostic
// that panics, also while a callback's panic is being recovered on one of
// the engine's goroutines, is dropped rather than ending the program.
func TestPanickingSinkAndDiagnosticsAreContained(t *testing.T) {
	meta := func(id string) omni.Message {
		return omni.Message{Type: omni.TypeSessionMeta, Payload: omni.Payload{Rest: &omni.Rest{SessionID: id, Provider: "p", ModelID: "m", ModelContextWindow: []byte("8192")}}}
	}
	calls := 0
	llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		calls++
		if calls == 1 {
			emit(omni.ToolCallMsg("c1", "t", `{}`))
		} else {
			emit(omni.AssistantText("done", omni.StatusCompleted))
		}
		return engine.Outcome{Status: omni.StatusCompleted}
	})
	env := engine.EnvironmentFunc(func(context.Context, engine.ToolRequest, func(omni.Message)) error { panic("tool boom") })
	allow := engine.RunOptions{Approve: func(context.Context, omni.Message) (engine.Decision, error) { return engine.DecisionAllow, nil }}
	for _, tc := range []struct {
		name  string
		sink  engine.TraceSink
		diags func(engine.Diagnostic)
	}{
		{"a sink that panics", panicSink{}, nil},
		{"a diagnostics callback that panics", nil, func(engine.Diagnostic) { panic("diag boom") }},
		{"both", panicSink{}, func(engine.Diagnostic) { panic("diag boom") }},
	} {
		calls = 0
		var mu sync.Mutex
		var kinds []engine.DiagnosticKind
		onDiag := tc.diags
		if onDiag == nil {
			onDiag = func(d engine.Diagnostic) {
				mu.Lock()
				defer mu.Unlock()
				kinds = append(kinds, d.Kind)
			}
		}
		s, err := engine.New(engine.Config{Meta: meta("hardening-sink"), LLM: llm, Environment: env, Trace: tc.sink, OnDiagnostic: onDiag})
		if err != nil {
			t.Fatal(err)
		}
		var got []omni.Message
		func() {
			defer func() {
				if v := recover(); v != nil {
					t.Fatalf("%s: the panic reached the caller: %v", tc.name, v)
				}
			}()
			seq, err := s.Run(context.Background(), []omni.Message{omni.UserText("go")}, allow)
			if err != nil {
				t.Fatal(err)
			}
			for m := range seq {
				got = append(got, m)
			}
		}()
		last := got[len(got)-1].Payload
		if last.Type != omni.RequestEnd || last.Status() != omni.StatusCompleted {
			t.Errorf("%s: the run ended on %s %s, want its last request_end", tc.name, last.Type, last.Status())
		}
		mu.Lock()
		reported := slices.Contains(kinds, engine.DiagTrace)
		mu.Unlock()
		if tc.diags == nil && !reported {
			t.Errorf("%s: diagnostics %v, want the failed writes reported", tc.name, kinds)
		}
		s.Close()
	}
}
