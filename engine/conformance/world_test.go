package conformance

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// worldScenario scripts two LLM requests, tool A and approvals A, B, c1.
const worldScenario = `{
  "format": "omni-conformance/1", "id": "W", "name": "world",
  "session": {"meta": {"session_id": "s", "provider": "p", "model_id": "m",
    "model_context_window": 1, "system_prompt": "", "agent_state": "", "workspace": ""}},
  "llm": {"s": [
    {"steps": [{"emit": {"type":"event_msg","payload":{"type":"request_begin"}}}],
     "outcome": {"status": "timeout", "error_message": "idle"}},
    {"steps": [{"wait": {"seen": {"type":"event_msg","payload":{"type":"request_begin"}}}}]}
  ]},
  "tools": {"A": {"steps": [{"emit": {"type":"model_msg","payload":{"type":"tool_call_output","role":"user","output":"ok","tool_call_id":"A"}}}],
                  "end": {"throw": "boom"}}},
  "approvals": {"A": {"decision": "allow"}, "B": {"decision": "throw", "message": "closed"},
                "c1": {"decision": "deny", "expect_origin": ["child"]}},
  "runs": [{"input": [], "hooks": [
    {"on": {"seen": {"type":"event_msg","payload":{"type":"request_end"}}, "nth": 2}, "do": [{"action": "abort"}]},
    {"on": {"backoff": 2}, "do": [{"action": "abort"}]},
    {"on": {"approval": "A"}, "do": [{"action": "abort"}]},
    {"on": {"llm_request": {"session": "s", "index": 2}}, "do": [{"action": "abort"}]}
  ]}]
}`

// newTestWorld returns a world in run 1 of worldScenario, with the run's
// abort signal.
func newTestWorld(t *testing.T) (*world, context.Context) {
	t.Helper()
	s, err := parse([]byte(worldScenario))
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(s.spec, Options{}.withDefaults())
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w.beginRun(1, s.spec.runs[0], cancel)
	return w, ctx
}

func cond(t *testing.T, raw string) *condition {
	t.Helper()
	c, err := parseCondition([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func event(typ string) omni.Message { return omni.Event(omni.Payload{Type: typ}) }

func TestWaitSeenIsWokenByTheConsumer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, ctx := newTestWorld(t)
		done := make(chan error, 1)
		go func() {
			done <- w.wait(ctx, cond(t, `{"seen":{"payload":{"type":"request_end"}},"nth":2}`), "tool A step 1")
		}()
		synctest.Wait()
		w.receive(event(omni.RequestEnd))
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("wait returned after the first request_end")
		default:
		}
		w.mu.Lock()
		busy := slices.Collect(func(yield func(string) bool) {
			for _, v := range w.busy {
				yield(v)
			}
		})
		w.mu.Unlock()
		if len(busy) != 1 || !strings.HasPrefix(busy[0], "tool A step 1: wait {") {
			t.Errorf("busy = %q", busy)
		}
		w.receive(event(omni.RequestEnd))
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

func TestWaitAbortFollowsTheCallbackContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, _ := newTestWorld(t)
		toolCtx, cancelTool := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- w.wait(toolCtx, cond(t, `{"abort":true}`), "tool X step 4") }()
		synctest.Wait()
		w.receive(event(omni.RequestEnd)) // unrelated messages do not release it
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("abort wait returned before the abort")
		default:
		}
		cancelTool()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

func TestStopReleasesWaitsAndNamesThem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, runCtx := newTestWorld(t)
		done := make(chan error, 1)
		go func() {
			done <- w.wait(context.Background(), cond(t, `{"seen":{"payload":{"type":"never"}}}`), "llm s request 1 step 3")
		}()
		synctest.Wait()
		w.setConsumer("run 1: Next for message 7")
		msg := w.stop("timeout after 30s")
		want := `timeout after 30s; still waiting: llm s request 1 step 3: wait {"seen":{"payload":{"type":"never"}}}; consumer: run 1: Next for message 7`
		if msg != want {
			t.Errorf("stop:\n got %s\nwant %s", msg, want)
		}
		if err := <-done; !errors.Is(err, errStopped) {
			t.Errorf("wait after stop: %v", err)
		}
		if runCtx.Err() == nil {
			t.Error("stop did not abort the run")
		}
		w.stop("again") // idempotent
	})
}

func TestSeenHookFiresOnceAtNth(t *testing.T) {
	w, ctx := newTestWorld(t)
	w.receive(event(omni.RequestEnd))
	if ctx.Err() != nil {
		t.Fatal("hook fired at nth 1")
	}
	w.receive(event(omni.RequestEnd))
	if ctx.Err() == nil {
		t.Fatal("hook did not fire at nth 2")
	}
	if !w.hooks[0].fired || w.hooks[1].fired {
		t.Errorf("fired: %v %v", w.hooks[0].fired, w.hooks[1].fired)
	}
	w.receive(event(omni.RequestEnd))
	w.endRun()
	// Hooks 2, 3 and 4 never fired.
	if len(w.failures) != 3 || w.failures[0] != `run 1 hook 2 (on {"backoff":2}) never fired` {
		t.Errorf("failures = %q", w.failures)
	}
}

func TestSleeper(t *testing.T) {
	w, runCtx := newTestWorld(t)
	if !w.clock.Sleep(context.Background(), 2*time.Second) {
		t.Error("first sleep reported a cancel")
	}
	if w.clock.Sleep(runCtx, 4*time.Second) {
		t.Error("the backoff 2 hook aborted the run but Sleep returned true")
	}
	if !slices.Equal(w.sleeps, []int64{2000, 4000}) {
		t.Errorf("sleeps = %v", w.sleeps)
	}
	if a, b := w.clock.Now(), w.clock.Now(); !b.After(a) {
		t.Errorf("Now does not advance: %v %v", a, b)
	}
}

func TestApprover(t *testing.T) {
	w, runCtx := newTestWorld(t)
	call := func(id string, origin ...string) (engine.Decision, error) {
		m := omni.ToolCallMsg(id, "t", "{}")
		m.Origin = origin
		return w.approve(context.Background(), m)
	}
	if d, err := call("A"); d != omni.DecisionAllow || err != nil {
		t.Errorf("A: %q %v", d, err)
	}
	if runCtx.Err() == nil {
		t.Error("approval hook on A did not abort")
	}
	if _, err := call("B"); err == nil || err.Error() != "closed" {
		t.Errorf("B: %v", err)
	}
	if d, err := call("c1", "child"); d != omni.DecisionDeny || err != nil {
		t.Errorf("c1: %q %v", d, err)
	}
	call("c1")
	if _, err := call("Z"); err == nil {
		t.Error("Z: approved without an entry")
	}
	want := []string{`approval c1: origin: expected ["child"] got none`, "approval Z: no entry"}
	if !slices.Equal(w.failures, want) {
		t.Errorf("failures = %q", w.failures)
	}
	if !slices.Equal(w.approverCalls, []string{"A", "B", "c1", "c1", "Z"}) {
		t.Errorf("approver calls = %v", w.approverCalls)
	}
}

func TestScriptedTool(t *testing.T) {
	w, _ := newTestWorld(t)
	var emitted []omni.Message
	emit := func(m omni.Message) { emitted = append(emitted, m) }
	exec := func(id string) error {
		return w.executeTool(context.Background(), engine.ToolRequest{ToolCall: omni.ToolCallMsg(id, "t", "{}")}, emit)
	}
	if err := exec("A"); err == nil || err.Error() != "boom" {
		t.Errorf("A: %v", err)
	}
	if len(emitted) != 1 || emitted[0].Payload.Output != "ok" || emitted[0].Timestamp == "" {
		t.Errorf("emitted = %+v", emitted)
	}
	if exec("A") == nil || exec("Q") == nil {
		t.Error("a second run or an unscripted call succeeded")
	}
	want := []string{"tool A: executed 2 times", "tool Q: executed without a script"}
	if !slices.Equal(w.failures, want) {
		t.Errorf("failures = %q", w.failures)
	}
}

func TestScriptedLLM(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, runCtx := newTestWorld(t)
		st := w.session("s")
		first := &scriptedLLM{w: w, session: "s", context: 1}
		var got []omni.Message
		emit := func(m omni.Message) { got = append(got, m) }
		in := []omni.Message{omni.UserText("hi")}
		out := first.StreamGenerate(context.Background(), engine.GenerateParams{NewMessages: in}, emit)
		if out.Status != omni.StatusTimeout || out.ErrorMessage != "idle" || len(got) != 1 {
			t.Errorf("request 1: %+v, %d messages", out, len(got))
		}
		second := w.newLLM("s", omni.TokenCounts{Total: 9})
		done := make(chan engine.Outcome, 1)
		go func() { done <- second.StreamGenerate(context.Background(), engine.GenerateParams{}, emit) }()
		synctest.Wait()
		if runCtx.Err() == nil {
			t.Error("llm_request hook for index 2 did not fire before the first step")
		}
		w.receive(omni.RequestBeginMsg())
		if o := <-done; o.Status != omni.StatusCompleted {
			t.Errorf("request 2: %+v", o)
		}
		third := w.newLLM("s", omni.TokenCounts{Total: 10})
		if o := third.StreamGenerate(context.Background(), engine.GenerateParams{}, emit); o.Status != omni.StatusFailed || !o.Permanent {
			t.Errorf("unscripted request: %+v", o)
		}
		if len(st.inputs) != 3 || st.inputs[0].context != 1 || st.inputs[1].context != 2 || st.inputs[2].context != 3 {
			t.Errorf("inputs = %+v", st.inputs)
		}
		if len(st.inputs[0].messages) != 1 || len(st.newTokens) != 2 || st.newTokens[1].Total != 10 {
			t.Errorf("recorded %+v / %+v", st.inputs[0], st.newTokens)
		}
		if !slices.Equal(w.failures, []string{"llm s: request 3 is not scripted"}) {
			t.Errorf("failures = %q", w.failures)
		}
	})
}

func TestUnused(t *testing.T) {
	w, _ := newTestWorld(t)
	w.session("s").calls = 1
	got := w.unusedLocked()
	want := []string{"llm s: 1 of 2 scripted requests never made (first unused: request 2)", "tool A: script never executed"}
	if !slices.Equal(got, want) {
		t.Errorf("unused = %q", got)
	}
}

func TestPanicSite(t *testing.T) {
	stack := "goroutine 7 [running]:\nruntime/debug.Stack()\n\t/go/debug/stack.go:26 +0x5e\npanic({0x1, 0x2})\n\t/go/runtime/panic.go:783 +0x132\nexample.com/x.f(...)\n\t/src/x.go:12 +0x1\n"
	if got := panicSite([]byte(stack)); got != " at example.com/x.f(...) /src/x.go:12 +0x1" {
		t.Errorf("panicSite = %q", got)
	}
	if got := panicSite([]byte("no panic here")); got != "" {
		t.Errorf("panicSite = %q", got)
	}
}
