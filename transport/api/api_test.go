package api_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/floehq/floe/transport"
	"github.com/floehq/floe/transport/server"
)

func TestTaskApproveSteerHistory(t *testing.T) {
	e := newEnv(t, server.Config{})
	id := e.create("ask")
	st := e.open("/api/sessions/"+id+"/stream", "", false)
	if first := st.next(); !taskState("idle")(first) {
		t.Fatalf("first event %+v, want the task_state snapshot", first)
	}
	e.must(202, "POST", "/api/sessions/"+id+"/tasks", `{"input":"Count the lines of main.go"}`)
	evs := st.until(serverEvent("approval_request"))
	if payloadType(evs[0]) != "text" || !taskState("running")(evs[1]) {
		t.Fatalf("a run starts with its input then task_state running: %+v", evs[:2])
	}
	e.must(409, "POST", "/api/sessions/"+id+"/tasks", `{"input":"again"}`)
	e.must(202, "POST", "/api/sessions/"+id+"/steer", `{"text":"Also say hello."}`)
	// A blank steer is refused, as an empty one is: the engine queues
	// nothing for it, and 202 said it was taken.
	if _, msg := errorOf(e.must(400, "POST", "/api/sessions/"+id+"/steer", `{"text":" \n\t"}`)); msg != "steer: want a non-blank text or images" {
		t.Errorf("blank steer: %q", msg)
	}
	e.must(204, "POST", "/api/sessions/"+id+"/approvals/"+toolCallID(t, evs[len(evs)-1]), `{"decision":"allow"}`)
	more := st.until(serverEvent("approval_request"))
	e.must(204, "POST", "/api/sessions/"+id+"/approvals/"+toolCallID(t, more[len(more)-1]), `{"decision":"deny"}`)
	evs = append(evs, more...)
	evs = append(evs, st.until(taskState("idle"))...)
	var streamed []string
	sawSteer := false
	for _, ev := range evs {
		if ev.Name == "" && !strings.Contains(ev.Data, `"partial_`) {
			streamed = append(streamed, ev.Data)
			sawSteer = sawSteer || strings.Contains(ev.Data, "Also say hello.")
		}
	}
	if !sawSteer {
		t.Fatal("the steering text never reached the stream")
	}
	var hist struct {
		SessionID string
		State     string
		Messages  []json.RawMessage
		Live      *struct{}
	}
	json.Unmarshal(e.must(200, "GET", "/api/sessions/"+id+"/messages", ""), &hist)
	if hist.SessionID != id || hist.State != "idle" || hist.Live != nil {
		t.Fatalf("idle session: id %q, state %q, live %v", hist.SessionID, hist.State, hist.Live)
	}
	var recorded []string
	for _, m := range hist.Messages[1:] { // after session_meta
		recorded = append(recorded, compact(m))
	}
	if strings.Join(recorded, "\n") != strings.Join(streamed, "\n") {
		t.Fatalf("history differs from the stream's complete messages:\nhistory %d\n%s\nstream %d\n%s", len(recorded), strings.Join(recorded, "\n"), len(streamed), strings.Join(streamed, "\n"))
	}
}

func TestAbortDeniesPendingApprovals(t *testing.T) {
	e := newEnv(t, server.Config{})
	id := e.create("ask")
	st := e.open("/api/sessions/"+id+"/stream", "", false)
	e.must(202, "POST", "/api/sessions/"+id+"/tasks", `{"input":"hi"}`)
	req := st.until(serverEvent("approval_request"))
	call := toolCallID(t, req[len(req)-1])
	// A second subscriber gets the pending approval among its initial events.
	st2 := e.open("/api/sessions/"+id+"/stream", "", false)
	if ev := st2.next(); !taskState("running")(ev) {
		t.Fatalf("first initial event %+v", ev)
	}
	if ev := st2.next(); !serverEvent("approval_request")(ev) || toolCallID(t, ev) != call {
		t.Fatalf("second initial event %+v, want the pending approval", ev)
	}
	e.must(202, "POST", "/api/sessions/"+id+"/abort", "")
	rest := st.until(taskState("idle"))
	sawAbort := false
	for _, ev := range rest {
		if strings.Contains(ev.Data, `"approval_decision"`) {
			t.Fatalf("an aborted approval got a decision: %s", ev.Data)
		}
		sawAbort = sawAbort || payloadType(ev) == "abort"
	}
	if !sawAbort {
		t.Fatal("no abort message")
	}
	e.must(204, "POST", "/api/sessions/"+id+"/abort", "")
	e.must(404, "POST", "/api/sessions/"+id+"/approvals/"+call, `{"decision":"allow"}`)
}

func TestApprovalModes(t *testing.T) {
	cases := []struct {
		mode     string
		asks     int
		decision string
	}{
		{"allow-all", 0, `"decision":"allow"`},
		{"deny-all", 0, `"decision":"deny"`},
		{"read-only", 1, `"decision":"allow"`}, // list_files is read-only here; count_lines asks
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			e := newEnv(t, server.Config{ReadOnly: func(tool string) bool { return tool == "list_files" }})
			id := e.create(tc.mode)
			st := e.open("/api/sessions/"+id+"/stream", "", false)
			st.next() // the task_state snapshot
			e.must(202, "POST", "/api/sessions/"+id+"/tasks", `{"input":"hi"}`)
			asks, decided := 0, false
			for {
				ev := st.next()
				if serverEvent("approval_request")(ev) {
					asks++
					e.must(204, "POST", "/api/sessions/"+id+"/approvals/"+toolCallID(t, ev), `{"decision":"allow"}`)
				}
				decided = decided || strings.Contains(ev.Data, tc.decision)
				if taskState("idle")(ev) {
					break
				}
			}
			if asks != tc.asks || !decided {
				t.Fatalf("%s: %d approval requests (want %d), decision %s seen: %v", tc.mode, asks, tc.asks, tc.decision, decided)
			}
		})
	}
}

func TestQueuedFollowUp(t *testing.T) {
	e := newEnv(t, server.Config{})
	id := e.create("ask")
	st := e.open("/api/sessions/"+id+"/stream", "", false)
	e.must(202, "POST", "/api/sessions/"+id+"/tasks", `{"input":"first"}`)
	req := st.until(serverEvent("approval_request"))
	if b := e.must(202, "POST", "/api/sessions/"+id+"/tasks", `{"input":"second","queueIfBusy":true}`); compact(b) != `{"queued":true,"taskId":"task-1"}` {
		t.Fatalf("queued answer %s", b)
	}
	ts := st.until(serverEvent("task_state"))
	if d := ts[len(ts)-1].Data; !strings.Contains(d, `"queued":1`) || !strings.Contains(d, `"pendingFollowUps":[{"id":"task-1","text":"second","images":0,"files":0}]`) {
		t.Fatalf("task_state after queueing: %s", d)
	}
	e.must(200, "PATCH", "/api/sessions/"+id, `{"approvalMode":"allow-all"}`)
	e.must(204, "POST", "/api/sessions/"+id+"/approvals/"+toolCallID(t, req[len(req)-1]), `{"decision":"allow"}`)
	st.until(taskState("idle"))
	second := st.until(taskState("running"))
	if !strings.Contains(second[len(second)-2].Data, `"text":"second"`) {
		t.Fatalf("the queued task's input was not published before it ran: %+v", second[len(second)-2])
	}
	st.until(taskState("idle"))
}

// An abort drops the follow-ups queued with queueIfBusy (README: Limits):
// the run ends idle, with none listed, and the queued input never runs.
func TestAbortDropsQueuedFollowUps(t *testing.T) {
	e := newEnv(t, server.Config{})
	id := e.create("ask")
	st := e.open("/api/sessions/"+id+"/stream", "", false)
	e.must(202, "POST", "/api/sessions/"+id+"/tasks", `{"input":"first"}`)
	st.until(serverEvent("approval_request"))
	e.must(202, "POST", "/api/sessions/"+id+"/tasks", `{"input":"second","queueIfBusy":true}`)
	st.until(func(ev transport.Received) bool {
		return strings.Contains(ev.Data, `"pendingFollowUps":[{"id":"task-1"`)
	})
	e.must(202, "POST", "/api/sessions/"+id+"/abort", "")
	idle := st.until(taskState("idle"))
	if d := idle[len(idle)-1].Data; strings.Contains(d, "task-1") || strings.Contains(d, "pendingFollowUps") {
		t.Fatalf("task_state after the abort: %s, want no follow-up", d)
	}
	var h struct {
		State    string            `json:"state"`
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(e.must(200, "GET", "/api/sessions/"+id+"/messages", ""), &h); err != nil {
		t.Fatal(err)
	}
	for _, m := range h.Messages {
		if strings.Contains(string(m), `"second"`) {
			t.Fatalf("the dropped follow-up's input is in the history: %s", m)
		}
	}
	if h.State != "idle" {
		t.Fatalf("state %q after the abort, want idle", h.State)
	}
}

func TestManualCompaction(t *testing.T) {
	e := newEnv(t, server.Config{Mode: "allow-all"})
	id := e.create("")
	e.must(409, "POST", "/api/sessions/"+id+"/compact", "")
	st := e.open("/api/sessions/"+id+"/stream", "", false)
	st.next() // the task_state snapshot
	e.must(202, "POST", "/api/sessions/"+id+"/tasks", `{"input":"hi"}`)
	st.until(taskState("idle"))
	e.must(202, "POST", "/api/sessions/"+id+"/compact", "")
	evs := st.until(taskState("idle"))
	if !taskState("compacting")(evs[0]) {
		t.Fatalf("compaction began with %+v", evs[0])
	}
	var types []string
	for _, ev := range evs {
		types = append(types, payloadType(ev))
	}
	if j := strings.Join(types, ","); !strings.Contains(j, "compaction_begin") || !strings.Contains(j, "compaction_end") {
		t.Fatalf("compaction stream %s", j)
	}
	if st, b := e.do("POST", "/api/sessions/"+id+"/compact", ""); st != 409 || !strings.Contains(string(b), `"already_compacted"`) {
		t.Fatalf("second compaction: %d %s, want 409 already_compacted", st, b)
	}
}

func TestUserChannelAndDelete(t *testing.T) {
	e := newEnv(t, server.Config{Mode: "allow-all"})
	ev := e.open("/api/events", "", false)
	if first := ev.next(); first.Data != `{"type":"hello"}` {
		t.Fatalf("first user event %+v", first)
	}
	id := e.create("")
	if got := ev.next(); !strings.Contains(got.Data, `"type":"session_created"`) || !strings.Contains(got.Data, id) {
		t.Fatalf("after create: %+v", got)
	}
	e.must(202, "POST", "/api/sessions/"+id+"/tasks", `{"input":"hi"}`)
	if got := ev.next(); !strings.Contains(got.Data, `"type":"session_state","sessionId":"`+id+`","state":"running"`) {
		t.Fatalf("after start: %+v", got)
	}
	ev.until(func(r transport.Received) bool { return strings.Contains(r.Data, `"state":"idle"`) })
	var list struct {
		Sessions []struct{ ID, FirstPrompt string }
	}
	json.Unmarshal(e.must(200, "GET", "/api/sessions", ""), &list)
	if len(list.Sessions) != 1 || list.Sessions[0].ID != id || list.Sessions[0].FirstPrompt != "hi" {
		t.Fatalf("list %+v", list)
	}
	e.must(204, "DELETE", "/api/sessions/"+id, "")
	e.must(404, "GET", "/api/sessions/"+id+"/messages", "")
	json.Unmarshal(e.must(200, "GET", "/api/sessions", ""), &list)
	if len(list.Sessions) != 0 {
		t.Fatalf("list after delete %+v", list)
	}
}

// A session deleted mid-run: its run ends as a user's abort (ENGINE.md §18
// has no other reason), and the user channel says the session has no Trace
// any more (it said nothing: a list kept the deleted session).
func TestDeleteMidRun(t *testing.T) {
	e := newEnv(t, server.Config{})
	ev := e.open("/api/events", "", false)
	ev.next() // hello
	id := e.create("ask")
	st := e.open("/api/sessions/"+id+"/stream", "", false)
	e.must(202, "POST", "/api/sessions/"+id+"/tasks", `{"input":"hi"}`)
	st.until(serverEvent("approval_request"))
	e.must(204, "DELETE", "/api/sessions/"+id, "")
	abort := st.until(func(r transport.Received) bool { return payloadType(r) == "abort" })
	if last := abort[len(abort)-1]; !strings.Contains(last.Data, `"reason":"aborted by user"`) {
		t.Fatalf("the run ended with %s", last.Data)
	}
	gone := ev.until(func(r transport.Received) bool { return strings.Contains(r.Data, `"hasTrace":false`) })
	if last := gone[len(gone)-1].Data; !strings.Contains(last, `{"type":"session_state","sessionId":"`+id+`","state":"idle"`) {
		t.Fatalf("user channel after the delete: %s", last)
	}
}

// The native server's read-only mode allows both demo tools, which only read.
func TestReadOnlyAllowsTheDemoTools(t *testing.T) {
	e := newEnv(t, server.Config{})
	id := e.create("read-only")
	st := e.open("/api/sessions/"+id+"/stream", "", false)
	st.next()
	e.must(202, "POST", "/api/sessions/"+id+"/tasks", `{"input":"hi"}`)
	for _, ev := range st.until(taskState("idle")) {
		if serverEvent("approval_request")(ev) {
			t.Fatalf("read-only asked: %s", ev.Data)
		}
	}
}

// steppedClock is a Clock that moves only when the test says; its Sleep
// waits for cancellation.
type steppedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *steppedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *steppedClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func (c *steppedClock) Sleep(ctx context.Context, d time.Duration) bool {
	<-ctx.Done()
	return false
}

// With the Traces in memory (--dir :memory:), the session list still has
// each session's last activity, newest first. Before, the in-memory store
// kept no times: lastActivity was missing and the order arbitrary.
func TestSessionListInMemoryHasLastActivity(t *testing.T) {
	clk := &steppedClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	e := newEnv(t, server.Config{Clock: clk})
	e.must(201, "POST", "/api/sessions", `{"id":"older"}`)
	clk.advance(time.Minute)
	e.must(201, "POST", "/api/sessions", `{"id":"newer"}`)
	var list struct {
		Sessions []struct{ ID, LastActivity string }
	}
	if err := json.Unmarshal(e.must(200, "GET", "/api/sessions", ""), &list); err != nil {
		t.Fatal(err)
	}
	want := []struct{ ID, LastActivity string }{{"newer", "2026-01-02T03:05:05Z"}, {"older", "2026-01-02T03:04:05Z"}}
	if !reflect.DeepEqual(list.Sessions, want) {
		t.Fatalf("sessions %+v, want %+v", list.Sessions, want)
	}
}
