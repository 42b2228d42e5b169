package trace_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

var resumeAt = time.Date(2026, 12, 1, 8, 0, 0, 123e6, time.UTC)

const resumeStamp = "2026-12-01T08:00:00.123Z"

func fixedNow() time.Time { return resumeAt }

// Trace building blocks.
func meta() omni.Message {
	return omni.Message{Type: omni.TypeSessionMeta, Payload: omni.Payload{
		Rest: &omni.Rest{SessionID: "s", Provider: "test", ModelID: "m", ModelContextWindow: []byte("1000"), SystemPrompt: "sys", AgentState: "a", Workspace: "/w"},
	}}
}
func begin() omni.Message { return omni.RequestBeginMsg() }
func end(status string) omni.Message {
	return omni.Event(omni.Payload{Type: omni.RequestEnd, Rest: &omni.Rest{Status: status}})
}
func call(id string) omni.Message { return omni.ToolCallMsg(id, "tool", "{}") }
func brokenCall(id string) omni.Message {
	m := call(id)
	m.Payload.StopReason = omni.StatusAborted
	return m
}
func out(id, text string) omni.Message { return omni.ToolOutput(id, text, omni.StatusCompleted) }
func asst(text string) omni.Message    { return omni.AssistantText(text, omni.StatusCompleted) }
func user(text string) omni.Message    { return omni.UserText(text) }
func allow(id string) omni.Message     { return omni.ApprovalDecisionMsg(omni.DecisionAllow, id) }
func usage(session, request int64) omni.Message {
	return omni.TokenUsageMsg(omni.TokenCounts{Output: 5, Total: session}, omni.TokenCounts{Output: 5, Total: request})
}
func compBegin(mode string) omni.Message {
	return omni.Event(omni.Payload{Type: omni.CompactionBegin, Rest: &omni.Rest{Reason: omni.ReasonContext, Mode: mode, Context: 100, Turns: 1}})
}
func compEnd(mode, status string) omni.Message {
	return omni.Event(omni.Payload{Type: omni.CompactionEnd, Rest: &omni.Rest{Reason: omni.ReasonContext, Mode: mode, Status: status}})
}

func jsonl(msgs ...omni.Message) string {
	var b []byte
	for _, m := range msgs {
		m.Timestamp = ts
		b = append(m.AppendJSON(b), '\n')
	}
	return string(b)
}

// short renders a message for comparisons: "user:TEXT", "assistant:TEXT",
// "call:ID", "out:ID=OUTPUT", "out:ID!" (resume placeholder).
func short(m omni.Message) string {
	p := m.Payload
	switch p.Type {
	case omni.Text:
		return p.Role + ":" + p.Text
	case omni.ToolCall:
		return "call:" + p.ToolCallID
	case omni.ToolCallOutput:
		if p.Output == engine.InterruptedByExit && p.StopReason == omni.StatusAborted {
			if m.Timestamp != resumeStamp {
				return "out:" + p.ToolCallID + "! badly stamped " + m.Timestamp
			}
			return "out:" + p.ToolCallID + "!"
		}
		return "out:" + p.ToolCallID + "=" + p.Output
	}
	return p.Type
}

func shorts(msgs []omni.Message) []string {
	out := []string{}
	for _, m := range msgs {
		out = append(out, short(m))
	}
	return out
}

func TestReplay(t *testing.T) {
	summarize, discard := omni.ModeSummarize, omni.ModeDiscard
	for _, tc := range []struct {
		name     string
		trace    string
		history  []string
		carry    []string
		turns    int64
		total    int64 // last request total
		closed   bool
		summary  string // pending summary text, "" = none
		dangling string // mode of a dangling compaction, "" = none
	}{
		{name: "empty session", trace: jsonl(meta()),
			history: []string{}, carry: []string{}},
		{name: "prompt only", trace: jsonl(meta(), user("hi")),
			history: []string{}, carry: []string{"user:hi"}},
		{name: "late output goes to the next request",
			trace: jsonl(meta(), user("q"), begin(), call("A"), allow("A"), call("B"), allow("B"), out("B", "b"),
				usage(50, 50), end("completed"), out("A", "a"), begin(), asst("done"), usage(120, 70), end("completed")),
			history: []string{"user:q", "call:A", "call:B", "out:B=b", "out:A=a", "assistant:done"},
			carry:   []string{}, turns: 2, total: 70},
		{name: "torn last line drops the open request",
			trace:   jsonl(meta(), user("q"), begin(), call("A")) + torn,
			history: []string{}, carry: []string{"user:q"}},
		{name: "malformed middle line: the lost output becomes a placeholder",
			trace: jsonl(meta(), user("q"), begin(), call("X"), end("completed")) + torn + "\n" +
				jsonl(user("go on"), begin(), asst("ok"), end("completed")),
			history: []string{"user:q", "call:X", "out:X!", "user:go on", "assistant:ok"},
			carry:   []string{}, turns: 2},
		{name: "open request keeps its input as carry-over",
			trace:   jsonl(meta(), user("q"), begin(), asst("ok"), end("completed"), user("next"), begin(), asst("partial")),
			history: []string{"user:q", "assistant:ok"}, carry: []string{"user:next"}, turns: 1},
		{name: "request_begin without end mid-file is dropped",
			trace:   jsonl(meta(), user("q"), begin(), asst("lost"), begin(), asst("ok"), end("completed")),
			history: []string{"user:q", "assistant:ok"}, carry: []string{}, turns: 1},
		{name: "unanswered tool calls at the end",
			trace:   jsonl(meta(), user("q"), begin(), call("A"), call("B"), end("completed")),
			history: []string{"user:q", "call:A", "call:B"}, carry: []string{"out:A!", "out:B!"}, turns: 1},
		{name: "half-answered tool calls at the end",
			trace:   jsonl(meta(), user("q"), begin(), call("A"), call("B"), end("completed"), out("B", "b")),
			history: []string{"user:q", "call:A", "call:B"}, carry: []string{"out:B=b", "out:A!"}, turns: 1},
		{name: "a tool call id a later request reuses awaits its own output",
			trace: jsonl(meta(), user("q"), begin(), call("c0"), allow("c0"), out("c0", "one"), usage(1, 1), end("completed"),
				begin(), call("c0"), allow("c0"), out("c0", "two"), usage(2, 2), end("completed"),
				begin(), asst("done"), usage(3, 3), end("completed")),
			history: []string{"user:q", "call:c0", "out:c0=one", "call:c0", "out:c0=two", "assistant:done"}, carry: []string{}, turns: 3, total: 3},
		{name: "a reused tool call id cut off by the exit gets a placeholder",
			trace: jsonl(meta(), user("q"), begin(), call("c0"), out("c0", "one"), end("completed"),
				begin(), call("c0"), end("completed")),
			history: []string{"user:q", "call:c0", "out:c0=one", "call:c0"}, carry: []string{"out:c0!"}, turns: 2},
		{name: "interrupted tool call is never committed",
			trace:   jsonl(meta(), user("q"), begin(), brokenCall("A"), end("completed")),
			history: []string{"user:q", "call:A"}, carry: []string{}, turns: 1},
		{name: "denial",
			trace: jsonl(meta(), user("rm"), begin(), call("d1"), omni.ApprovalDecisionMsg(omni.DecisionDeny, "d1"),
				omni.ToolOutput("d1", "Tool call denied by user.", omni.StatusAborted), end("completed"),
				begin(), asst("nothing deleted"), end("completed")),
			history: []string{"user:rm", "call:d1", "out:d1=Tool call denied by user.", "assistant:nothing deleted"},
			carry:   []string{}, turns: 2},
		{name: "abort case A: placeholder precedes the real output",
			trace: jsonl(meta(), user("q"), begin(), call("X"), allow("X"), call("Y"), end("completed"),
				omni.ToolOutput("X", "x aborted", omni.StatusAborted), omni.AbortMsg("aborted by user"),
				user("continue"), begin(), asst("ok"), end("completed")),
			history: []string{"user:q", "call:X", "call:Y", "out:Y!", "out:X=x aborted", "user:continue", "assistant:ok"},
			carry:   []string{}, turns: 2},
		{name: "abort case B: the aborted request's input is carried over",
			trace: jsonl(meta(), user("fix"), begin(), call("P1"), end("completed"), out("P1", "todo"),
				begin(), asst("I will"), end("aborted"), omni.AbortMsg("aborted by user")),
			history: []string{"user:fix", "call:P1"}, carry: []string{"out:P1=todo"}, turns: 1},
		{name: "failed attempt: outputs of its tool calls are dropped",
			trace: jsonl(meta(), user("up?"), begin(), call("k1"), out("k1", "pong"), end("timeout"),
				begin(), asst("The host is up."), end("completed")),
			history: []string{"user:up?", "assistant:The host is up."}, carry: []string{}, turns: 1},
		{name: "open compaction: its prompt is dropped, tool outputs kept", dangling: summarize,
			trace: jsonl(meta(), user("q"), begin(), call("A"), end("completed"), out("A", "a"),
				compBegin(summarize), user("Summarize."), begin(), asst("[summary]S")),
			history: []string{"user:q", "call:A"}, carry: []string{"out:A=a"}, turns: 1},
		// A compaction aborted before its first request (the consumer left
		// at compaction_begin) wrote its prompt and sent it nowhere: the
		// engine carries nothing over, so neither does resume.
		{name: "compaction aborted before a request: its prompt is not carried over",
			trace: jsonl(meta(), user("q"), begin(), asst("a"), end("completed"),
				compBegin(summarize), user("Summarize."), compEnd(summarize, omni.StatusAborted)),
			history: []string{"user:q", "assistant:a"}, carry: []string{}, turns: 1},
		{name: "open compaction before a request: its prompt is dropped", dangling: summarize,
			trace: jsonl(meta(), user("q"), begin(), call("A"), end("completed"), out("A", "a"),
				compBegin(summarize), user("Summarize.")),
			history: []string{"user:q", "call:A"}, carry: []string{"out:A=a"}, turns: 1},
		// A manual compaction folds the carry-over in, texts included; when
		// nothing was committed the engine restores it verbatim (E-13.13).
		{name: "manual compaction not committed: the carried-over prompt stays",
			trace: jsonl(meta(), user("q"), begin(), asst("a"), end("completed"), user("aborted before its request"),
				omni.AbortMsg("aborted by user"), compBegin(summarize), user("Summarize."), begin(), end("failed"),
				compEnd(summarize, omni.StatusFailed)),
			history: []string{"user:q", "assistant:a"}, carry: []string{"user:aborted before its request"}, turns: 1},
		{name: "unusable compaction retried, then failed: guidance is not carried over",
			trace: jsonl(meta(), user("q"), begin(), asst("a"), end("completed"),
				compBegin(summarize), user("Summarize."), begin(), call("x"), end("completed"),
				omni.ToolOutput("x", engine.CompactionRepair, omni.StatusFailed), user(engine.CompactionGuidance), begin(), end("timeout"),
				compEnd(summarize, omni.StatusFailed)),
			history: []string{"user:q", "assistant:a", "user:Summarize.", "call:x"},
			carry:   []string{"out:x=" + engine.CompactionRepair}, turns: 1},
		{name: "failed compaction: a committed attempt stays in history but is not a turn",
			trace: jsonl(meta(), user("q"), begin(), asst("a"), end("completed"),
				compBegin(summarize), user("Summarize."), begin(), asst("no summary here?"), usage(10, 10), end("completed"),
				compEnd(summarize, omni.StatusFailed)),
			history: []string{"user:q", "assistant:a", "user:Summarize.", "assistant:no summary here?"},
			carry:   []string{}, turns: 1, total: 10},
		{name: "closed context, summarize", closed: true, summary: "[context_summary]\nS1\n[/context_summary]",
			trace: jsonl(meta(), user("q"), begin(), asst("a"), usage(10, 10), end("completed"),
				compBegin(summarize), user("Summarize."), begin(), asst("<summary>S1</summary>"), usage(30, 20), end("completed"),
				compEnd(summarize, omni.StatusCompleted))},
		{name: "closed context, discard", closed: true,
			trace: jsonl(meta(), user("q"), begin(), asst("a"), usage(10, 10), end("completed"),
				compBegin(discard), compEnd(discard, omni.StatusCompleted))},
		{name: "closed context with an empty summary is replayed",
			trace: jsonl(meta(), user("q"), begin(), asst("a"), end("completed"),
				compBegin(summarize), user("Summarize."), begin(), asst("[summary] [/summary]"), end("completed"),
				compEnd(summarize, omni.StatusCompleted)),
			history: []string{"user:q", "assistant:a", "user:Summarize.", "assistant:[summary] [/summary]"},
			carry:   []string{}, turns: 1},
		{name: "summary from the last completed request only", closed: true, summary: "[context_summary]\nnew\n[/context_summary]",
			trace: jsonl(meta(), user("q"), begin(), asst("[summary]old[/summary]"), end("completed"),
				compBegin(summarize), user("Summarize."), begin(), asst("[summary]lost"), end("timeout"),
				begin(), asst("[summary]ne"), asst("w[/summary]"), end("completed"),
				compEnd(summarize, omni.StatusCompleted))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := trace.ReadFile([]byte(tc.trace))
			if err != nil {
				t.Fatal(err)
			}
			r := trace.Replay(p.Records, resumeAt)
			s := r.Snapshot
			if r.Meta == nil || !s.MetaWritten {
				t.Errorf("meta not found")
			}
			if !tc.closed {
				if got := shorts(s.History); !slices.Equal(got, tc.history) {
					t.Errorf("history = %q\nwant      %q", got, tc.history)
				}
				if got := shorts(s.CarryOver); !slices.Equal(got, tc.carry) {
					t.Errorf("carry = %q\nwant    %q", got, tc.carry)
				}
			} else if len(s.History)+len(s.CarryOver) != 0 {
				t.Errorf("closed context: history %q, carry %q", shorts(s.History), shorts(s.CarryOver))
			}
			if s.SessionTurns != tc.turns || s.LastRequestTotal != tc.total || s.ContextClosed != tc.closed {
				t.Errorf("turns %d, total %d, closed %v; want %d, %d, %v",
					s.SessionTurns, s.LastRequestTotal, s.ContextClosed, tc.turns, tc.total, tc.closed)
			}
			var summary string
			if ps := s.PendingSummary; ps != nil {
				summary = ps.Payload.Text
				if ps.Timestamp != resumeStamp || ps.Payload.Role != omni.RoleUser || ps.Payload.StopReason != omni.StatusCompleted {
					t.Errorf("pending summary = %+v", ps)
				}
			}
			if summary != tc.summary {
				t.Errorf("pending summary %q, want %q", summary, tc.summary)
			}
			var dangling string
			if r.Dangling != nil {
				dangling = r.Dangling.Mode
			}
			if dangling != tc.dangling {
				t.Errorf("dangling = %+v, want mode %q", r.Dangling, tc.dangling)
			}
		})
	}
}

func TestReplayTokens(t *testing.T) {
	p, _ := trace.ReadFile([]byte(jsonl(meta(), user("q"), begin(), usage(40, 40), end("completed"),
		begin(), usage(100, 60), end("completed"))))
	s := trace.Replay(p.Records, resumeAt).Snapshot
	if s.SessionTokens != (omni.TokenCounts{Output: 5, Total: 100}) || s.LastRequestTotal != 60 {
		t.Errorf("tokens %+v, last total %d", s.SessionTokens, s.LastRequestTotal)
	}
}

func TestResume(t *testing.T) {
	ctx := context.Background()
	t.Run("dangling compaction is closed first", func(t *testing.T) {
		store := &trace.MemStore{}
		data := jsonl(meta(), user("q"), begin(), asst("a"), end("completed"), compBegin(omni.ModeSummarize),
			user("Summarize."), begin())
		if err := store.Create(ctx, "s", [][]byte{[]byte("x\n"), []byte(data)}); err != nil {
			t.Fatal(err)
		}
		r, err := trace.Resume(ctx, store, "s", fixedNow)
		if err != nil {
			t.Fatal(err)
		}
		if r.Index != 2 || r.Writer.Index() != 2 || r.Dangling == nil || len(r.Writes) != 1 {
			t.Fatalf("index %d, writer %d, dangling %+v, writes %+v", r.Index, r.Writer.Index(), r.Dangling, r.Writes)
		}
		w := r.Writes[0]
		end := w.Records[0]
		if w.Index != 2 || w.NewFile || w.HealNewline || !end.IsEvent(omni.CompactionEnd) ||
			end.Payload.Status() != omni.StatusFailed || end.Payload.Mode() != omni.ModeSummarize ||
			end.Payload.Reason() != omni.ReasonContext || end.Payload.Attempt() != 0 || end.Timestamp != resumeStamp {
			t.Errorf("resume wrote %+v", w)
		}
		again, _ := store.ReadFile(ctx, "s", 2)
		p, _ := trace.ReadFile(again)
		if last := p.Records[len(p.Records)-1]; !last.IsEvent(omni.CompactionEnd) {
			t.Errorf("last record = %+v", last)
		}
		// Resuming again finds nothing left to close.
		r2, err := trace.Resume(ctx, store, "s", fixedNow)
		if err != nil || r2.Dangling != nil || len(r2.Writes) != 0 {
			t.Errorf("second resume: %+v, %v", r2, err)
		}
	})
	t.Run("torn tail healed by the first append, not by resume", func(t *testing.T) {
		store := &trace.MemStore{}
		if err := store.Create(ctx, "s", [][]byte{[]byte(jsonl(meta(), user("q")) + torn)}); err != nil {
			t.Fatal(err)
		}
		r, err := trace.Resume(ctx, store, "s", fixedNow)
		if err != nil || !r.Parsed.TornTail || len(r.Writes) != 0 {
			t.Fatalf("resume: %+v, %v", r, err)
		}
		w, err := r.Writer.WriteRecord(context.Background(), userText("Continue."))
		if err != nil || !w.HealNewline || w.NewFile || w.Index != 1 {
			t.Errorf("first append: %+v, %v", w, err)
		}
	})
	t.Run("errors", func(t *testing.T) {
		store := &trace.MemStore{}
		if err := store.Create(ctx, "nometa", [][]byte{[]byte(jsonl(meta())), []byte(jsonl(user("q")))}); err != nil {
			t.Fatal(err)
		}
		_, err := trace.Resume(ctx, store, "nometa", fixedNow)
		var te *trace.Error
		if !errors.Is(err, trace.ErrNotResumable) || !errors.As(err, &te) || te.SessionID != "nometa" || te.Index != 2 {
			t.Errorf("no session_meta: %v", err)
		}
		if _, err := trace.Resume(ctx, store, "missing", fixedNow); !errors.Is(err, trace.ErrNotFound) {
			t.Errorf("missing session: %v", err)
		}
		if _, err := trace.Resume(ctx, store, "nometa", nil); !errors.Is(err, trace.ErrInvalid) {
			t.Errorf("nil clock: %v", err)
		}
	})
}
