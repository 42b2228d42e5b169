//go:build js && wasm

package jsbridge

import (
	"context"
	"errors"
	"maps"
	"strings"
	"syscall/js"
	"testing"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// settleHost is a shim-shaped (waiterID, json) callback that settles in a
// macrotask with ok and value, and records the JSON it got.
func settleHost(t *testing.T, b *Bridge, ok bool, value any, got *string) js.Value {
	fn := js.FuncOf(func(this js.Value, args []js.Value) any {
		id := args[0].Int()
		if got != nil {
			*got = memText(args[1], args[2])
		}
		later(func() { b.waiters.send(id, settled(ok, value)) })
		return nil
	})
	t.Cleanup(fn.Release)
	return fn.Value
}

func settled(ok bool, value any) reply {
	if ok {
		return reply{end: endDone, value: js.ValueOf(value)}
	}
	return reply{end: endThrew, value: js.ValueOf(value)}
}

func TestApprover(t *testing.T) {
	noPanics(t)
	tc := omni.ToolCallMsg("c1", "ls", "{}")
	tests := []struct {
		name    string
		ok      bool
		value   any
		want    string
		wantErr string
	}{
		{"allow", true, "allow", "allow", ""},
		{"forbidden", true, "forbidden", "forbidden", ""},
		{"other string passes through", true, "maybe", "maybe", ""},
		{"rejects", false, "approval channel closed", "", "approval channel closed"},
		{"number", true, 3, "", "resolved to number"},
		{"undefined", true, nil, "", "resolved to null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New()
			var got string
			approve := b.jsApprover(settleHost(t, b, tt.ok, tt.value, &got))
			d, err := approve(context.Background(), tc)
			if string(d) != tt.want || (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("approve = %q, %v; want %q, error with %q", d, err, tt.want, tt.wantErr)
			}
			if !strings.Contains(recordsJSON(t, got), `"tool_call_id":"c1"`) {
				t.Errorf("approver got %s", got)
			}
		})
	}
	t.Run("cancelled while pending", func(t *testing.T) {
		b := New()
		never := js.FuncOf(func(js.Value, []js.Value) any { return nil })
		defer never.Release()
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(10*time.Millisecond, cancel)
		if _, err := b.jsApprover(never.Value)(ctx, tc); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if len(b.waiters.m) != 0 {
			t.Errorf("%d waiters left", len(b.waiters.m))
		}
	})
}

func TestSignalContext(t *testing.T) {
	noPanics(t)
	ac := js.Global().Get("AbortController")
	t.Run("abort cancels once", func(t *testing.T) {
		c := ac.New()
		ctx, _, stop, err := signalContext(c.Get("signal"), "signal")
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
		if ctx.Err() != nil {
			t.Fatal("cancelled before the abort")
		}
		c.Call("abort")
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
			t.Fatal("abort did not cancel")
		}
	})
	t.Run("pre-aborted", func(t *testing.T) {
		c := ac.New()
		c.Call("abort")
		ctx, _, _, err := signalContext(c.Get("signal"), "signal")
		if err != nil || ctx.Err() == nil {
			t.Fatalf("ctx.Err = %v, err = %v; want cancelled", ctx.Err(), err)
		}
	})
	t.Run("stop removes the listener", func(t *testing.T) {
		c := ac.New()
		ctx, _, stop, _ := signalContext(c.Get("signal"), "signal")
		stop()
		stop()
		c.Call("abort") // would call a released function if still listening
		if ctx.Err() != nil {
			t.Error("cancelled after stop")
		}
	})
	t.Run("not a signal", func(t *testing.T) {
		_, _, _, err := signalContext(js.ValueOf("x"), "run: signal")
		var fe *Error
		if !errors.As(err, &fe) || fe.Code != CodeBadArgument || !strings.Contains(fe.Msg, "run: signal") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestClock(t *testing.T) {
	noPanics(t)
	var diags []string
	diag := func(kind engine.DiagnosticKind, err error) { diags = append(diags, string(kind)+": "+err.Error()) }
	t.Run("now", func(t *testing.T) {
		b := New()
		host, release := jsObject(map[string]func([]js.Value) any{"now": func([]js.Value) any { return 1735689600123.0 }})
		defer release()
		c := &jsClock{b: b, host: host, diag: diag}
		if got := c.Now().Format(omni.TimestampLayout); got != "2025-01-01T00:00:00.123Z" {
			t.Errorf("Now = %s", got)
		}
	})
	t.Run("now throws", func(t *testing.T) {
		diags = nil
		host, release := jsObject(map[string]func([]js.Value) any{"now": func([]js.Value) any { return "clock.now: broken" }})
		defer release()
		c := &jsClock{b: New(), host: host, diag: diag}
		if c.Now().IsZero() || len(diags) != 1 || !strings.Contains(diags[0], "broken") {
			t.Errorf("diags = %q", diags)
		}
	})
	sleepTests := []struct {
		name  string
		ok    bool
		value any
		want  bool
	}{
		{"resolves true", true, true, true},
		{"resolves undefined", true, nil, true},
		{"resolves false", true, false, false},
		{"rejects", false, "no timers", true},
	}
	for _, tt := range sleepTests {
		t.Run("sleep "+tt.name, func(t *testing.T) {
			b := New()
			var ms float64
			host, release := jsObject(map[string]func([]js.Value) any{"sleep": func(args []js.Value) any {
				id := args[0].Int()
				ms = args[1].Float()
				later(func() { b.waiters.send(id, settled(tt.ok, tt.value)) })
				return nil
			}})
			defer release()
			c := &jsClock{b: b, host: host, diag: diag}
			if got := c.Sleep(context.Background(), 2*time.Second); got != tt.want || ms != 2000 {
				t.Errorf("Sleep = %v (%v ms), want %v (2000 ms)", got, ms, tt.want)
			}
		})
	}
	t.Run("sleep cancelled aborts", func(t *testing.T) {
		b := New()
		aborted := 0
		canceller, release := jsObject(map[string]func([]js.Value) any{"abort": func([]js.Value) any { aborted++; return nil }})
		defer release()
		host, release2 := jsObject(map[string]func([]js.Value) any{"sleep": func([]js.Value) any { return canceller }})
		defer release2()
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(10*time.Millisecond, cancel)
		c := &jsClock{b: b, host: host, diag: diag}
		if c.Sleep(ctx, time.Hour) || aborted != 1 {
			t.Errorf("Sleep after cancel: aborted %d times", aborted)
		}
	})
}

func TestToolFailuresAreErrors(t *testing.T) {
	noPanics(t)
	tc := omni.ToolCallMsg("c1", "ls", "{}")
	out := msgJSON(omni.ToolOutput("c1", "done", omni.StatusCompleted))
	tests := []struct {
		name    string
		batches []batch
		emitted int
		wantErr string
	}{
		{"returns", []batch{{msgs: []string{out}, end: endDone}}, 1, ""},
		{"throws", []batch{{end: endThrew, value: "disk full"}}, 0, "disk full"},
		{"bad value", []batch{{msgs: []string{out}, end: endBad, value: "yielded null"}}, 1, "yielded null"},
		{"malformed message", []batch{{msgs: []string{out, `{"payload":{}}`}}}, 1, "invalid message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New()
			env := &fakeProducer{b: b, script: func(int, string) []batch { return tt.batches }}
			e := &jsEnvironment{b: b, host: env.host(t)}
			var got []omni.Message
			err := e.ExecuteTool(context.Background(), engineToolRequest(tc), func(m omni.Message) { got = append(got, m) })
			if len(got) != tt.emitted || (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("emitted %d, err %v; want %d, error with %q", len(got), err, tt.emitted, tt.wantErr)
			}
			if env.stopped != 1 {
				t.Errorf("pump stopped %d times, want 1", env.stopped)
			}
		})
	}
}

// TestProducerCalls counts the calls a producer costs Go into JavaScript
// beyond its start: none for one batch (the start asks for the first, the
// end stops the pump), a pull per further batch, and a stop when Go ends
// the producer before its end.
func TestProducerCalls(t *testing.T) {
	noPanics(t)
	tc := omni.ToolCallMsg("c1", "ls", "{}")
	out := msgJSON(omni.ToolOutput("c1", "done", omni.StatusCompleted))
	tests := []struct {
		name    string
		batches []batch
		want    map[string]int
	}{
		{"one batch", []batch{{msgs: []string{out}, end: endDone}}, map[string]int{}},
		{"three batches", []batch{{msgs: []string{out}}, {}, {end: endDone}}, map[string]int{"pull": 2}},
		{"ended by Go", []batch{{msgs: []string{`{"payload":{}}`}}}, map[string]int{"stop": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New()
			env := &fakeProducer{b: b, script: func(int, string) []batch { return tt.batches }}
			e := &jsEnvironment{b: b, host: env.host(t)}
			_ = e.ExecuteTool(context.Background(), engineToolRequest(tc), func(omni.Message) {})
			port := portOf(b)
			port.mu.Lock()
			got := maps.Clone(port.calls)
			port.mu.Unlock()
			if !maps.Equal(got, tt.want) {
				t.Errorf("calls from Go = %v, want %v", got, tt.want)
			}
			if env.stopped != 1 {
				t.Errorf("pump stopped %d times, want 1", env.stopped)
			}
		})
	}
}

// TestToolsJSONMadeOnce checks that the tool list a request hands the
// model is "" without tools and its tool_list_ready JSON with them, and
// that either is made once while it stays the same (no allocation).
func TestToolsJSONMadeOnce(t *testing.T) {
	l := &jsLLM{b: New()}
	tools := []omni.ToolDefinition{{Name: "ls", Description: "list"}}
	for _, step := range []struct {
		tools []omni.ToolDefinition
		want  string
	}{{nil, ""}, {tools, "tool_list_ready"}, {nil, ""}, {tools, "tool_list_ready"}} {
		v := l.toolsJSON(step.tools)
		if got := v.String(); (step.want == "" && got != "") || !strings.Contains(got, step.want) {
			t.Fatalf("toolsJSON(%v) = %q, want %q", step.tools, got, step.want)
		}
		if n := testing.AllocsPerRun(20, func() { l.toolsJSON(step.tools) }); n != 0 {
			t.Errorf("toolsJSON(%v) allocates %v times a request", step.tools, n)
		}
	}
}
