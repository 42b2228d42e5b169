//go:build !js

package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/transport/server"
)

// lostStore's Lock fails once when armed, as a FileStore's does after
// another process took the lock from this one.
type lostStore struct {
	trace.Store
	mu   sync.Mutex
	lost bool
}

func (s *lostStore) Lock(string) (func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lost {
		s.lost = false
		return nil, fmt.Errorf("%w: %w", trace.ErrBusy, trace.ErrLockLost)
	}
	return func() {}, nil
}

// The 202 for a queued task carries its id, the one task_state's
// pendingFollowUps and a task_failed name it by: it said only
// {"queued":true}, and a client could not tell which of its POSTs a
// task_failed was about. A task that starts at once has none.
func TestQueuedTaskID(t *testing.T) {
	store := &lostStore{Store: &trace.MemStore{}}
	e := newEnv(t, server.Config{Store: store})
	id := e.create("ask")
	st := e.open("/api/sessions/"+id+"/stream", "", false)
	if b := e.must(202, "POST", "/api/sessions/"+id+"/tasks", `{"input":"first"}`); compact(b) != `{"queued":false}` {
		t.Fatalf("started answer %s", b)
	}
	req := st.until(serverEvent("approval_request"))
	var ids []string
	for _, text := range []string{"second", "third"} {
		var res struct {
			Queued bool
			TaskID string
		}
		b := e.must(202, "POST", "/api/sessions/"+id+"/tasks", `{"input":"`+text+`","queueIfBusy":true}`)
		if err := json.Unmarshal(b, &res); err != nil || !res.Queued || res.TaskID == "" {
			t.Fatalf("queued answer %s, want queued and the task's id", b)
		}
		ts := st.until(serverEvent("task_state"))
		if d := ts[len(ts)-1].Data; !strings.Contains(d, `{"id":"`+res.TaskID+`","text":"`+text+`"`) {
			t.Fatalf("task_state after queueing %q as %s: %s", text, res.TaskID, d)
		}
		ids = append(ids, res.TaskID)
	}
	if ids[0] == ids[1] {
		t.Fatalf("two queued tasks of one id %s", ids[0])
	}
	// The first follow-up cannot start (the session's lock is found lost):
	// its task_failed names the id its 202 gave; the second runs.
	store.mu.Lock()
	store.lost = true
	store.mu.Unlock()
	e.must(200, "PATCH", "/api/sessions/"+id, `{"approvalMode":"allow-all"}`)
	e.must(204, "POST", "/api/sessions/"+id+"/approvals/"+toolCallID(t, req[len(req)-1]), `{"decision":"allow"}`)
	failed := st.until(serverEvent("task_failed"))
	if d := failed[len(failed)-1].Data; !strings.HasPrefix(d, `{"type":"task_failed","taskId":"`+ids[0]+`","error":{"code":"session_busy"`) {
		t.Fatalf("task_failed %s, want it to name %s", d, ids[0])
	}
	second := st.until(taskState("running"))
	if !strings.Contains(second[len(second)-2].Data, `"text":"third"`) {
		t.Fatalf("the task after the failed one did not run: %+v", second[len(second)-2])
	}
	st.until(taskState("idle"))
}
