package host

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/internal/jsspace"
	"github.com/floehq/floe/transport"
)

// Start begins a run of t.Input (T-4: the input is published, then
// task_state running, then the run's stream). A busy session answers
// ErrTaskInProgress, or queues the task when t.QueueIfBusy is set (queued
// is then true). After Registry.Shutdown it answers ErrShuttingDown, busy
// or not.
func (h *Host) Start(t Task) (queued bool, err error) {
	id, err := h.Submit(t)
	return id != "", err
}

// Submit is Start, returning the id of the task it queued ("" when the
// run began at once): the id task_state's pendingFollowUps and a
// task_failed server event name it by.
func (h *Host) Submit(t Task) (queuedID string, err error) {
	if len(t.Input) == 0 {
		return "", badRequest("input: want at least one message")
	}
	for i := range t.Input {
		if t.Input[i].Timestamp == "" {
			t.Input[i].Timestamp = omni.FormatTimestamp(h.reg.now())
		}
		if err := omni.Validate(t.Input[i]); err != nil {
			return "", badRequest(fieldErr("input["+strconv.Itoa(i)+"]", err))
		}
	}
	if err := checkImages("input", t.Input); err != nil {
		return "", err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return "", notFound(h.id)
	}
	if h.state != transport.StateIdle {
		if !t.QueueIfBusy {
			return "", ErrTaskInProgress
		}
		if h.reg.down.Load() {
			// It would never start: the run in flight is being aborted,
			// and no run starts after it (take).
			return "", ErrShuttingDown
		}
		h.nextTask++
		id := "task-" + strconv.Itoa(h.nextTask)
		h.followUps = append(h.followUps, task{id: id, Task: t})
		h.publish(h.taskState())
		return id, nil
	}
	return "", h.startLocked(t)
}

// fieldErr words an omni.Validate error with the path from the request
// body: "input[0].payload.role: missing".
func fieldErr(path string, err error) string {
	var ve *omni.ValidationError
	if !errors.As(err, &ve) {
		return path + ": " + strings.TrimPrefix(err.Error(), "omni: ")
	}
	msg := path + "." + ve.Field + ": "
	if ve.Value != "" {
		msg += ve.Value + " "
	}
	return msg + ve.Msg
}

// take holds the session's lock and resumes it from its Trace when it is
// cold (cold says so); h.mu is held.
func (h *Host) take() (release func(), cold bool, err error) {
	if h.reg.down.Load() {
		return nil, false, ErrShuttingDown
	}
	release, err = h.reg.lock(h.id)
	if err != nil {
		h.lockLost(err)
		return nil, false, err
	}
	cold = h.sess == nil
	if err := h.resume(); err != nil {
		release()
		return nil, false, err
	}
	return release, cold, nil
}

// lockLost lets h's engine go when err, from the session's lock, says
// another process took the lock while this one was stopped (said once):
// that process may have written the session since, and the engine kept
// warm knows nothing of it. The next run resumes from the Trace. h.mu is
// held.
func (h *Host) lockLost(err error) {
	if errors.Is(err, trace.ErrLockLost) && h.sess != nil {
		h.sess.Close()
		h.sess = nil
		h.reg.busy(h) // no longer warm: it holds no engine
	}
}

func (h *Host) startLocked(t Task) error {
	release, cold, err := h.take()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	run, err := h.sess.Start(ctx, t.Input, engine.RunOptions{Approve: h.approve, ApproveHonorsCancel: true, ThinkingLevel: t.ThinkingLevel})
	if err != nil {
		cancel()
		h.letGo(cold)
		release()
		if errors.Is(err, engine.ErrBusy) {
			return ErrTaskInProgress
		}
		return badRequest(err.Error())
	}
	h.begin(cancel, release, false)
	for i := range t.Input {
		data := t.Input[i].AppendJSON(nil)
		h.publish(transport.Event{Data: data})
		h.published(&t.Input[i], string(data))
	}
	h.setState(transport.StateRunning)
	go h.consume(run)
	return nil
}

// begin takes the channel for the run, which holds the session's lock
// until it ends (release); h.mu is held.
func (h *Host) begin(cancel context.CancelFunc, release func(), compaction bool) {
	h.reg.busy(h)
	h.run.start, h.run.compaction, h.run.status = h.reg.now(), compaction, ""
	if m := h.reg.cfg.Metrics; m != nil {
		m.RunsStarted.Add(1)
	}
	h.release = release
	h.ch = h.channel()
	h.ch.SetBusy(true)
	h.cancel = cancel
	h.done = make(chan struct{})
	h.agg = omni.Aggregator{}
	h.calls = map[string]*callCount{}
}

// calledOut notes a tool_call the run published and shows the approval
// request that waited for it; h.mu is held.
func (h *Host) calledOut(id string) {
	n := h.count(id)
	n.published++
	for _, a := range h.pending {
		if !a.shown && len(a.call.Origin) == 0 && a.call.Payload.ToolCallID == id && a.nth <= n.published {
			h.show(a)
		}
	}
}

// count is the run's count of the tool_calls of id; h.mu is held.
func (h *Host) count(id string) *callCount {
	n := h.calls[id]
	if n == nil {
		n = &callCount{}
		h.calls[id] = n
	}
	return n
}

// consume relays the run's stream to the channel, then ends the run and
// starts the next queued task.
func (h *Host) consume(run *engine.Run) {
	defer run.Close()
	var batch []omni.Message
	var buf []byte
	for {
		var ok bool
		batch, ok = run.NextBatch(batch[:0], 256)
		if !ok {
			break
		}
		h.mu.Lock()
		for i := range batch {
			buf = h.relay(&batch[i], buf)
		}
		h.written = h.written[:0] // what is left is never streamed (see sink)
		h.mu.Unlock()
	}
	idle, done, ended := h.end()
	if f := h.reg.cfg.OnRunEnd; f != nil {
		f(ended)
	}
	cool(idle)
	close(done) // Wait returns once the hosts are cooled
}

// relay publishes one message of the run, encoded in buf (returned for
// the next); h.mu is held.
func (h *Host) relay(m *omni.Message, buf []byte) []byte {
	h.agg.Add(*m)
	// Counted before it is published: a client that has read the message
	// (or the approval request it shows) reads metrics that count it.
	h.observe(m)
	buf = m.AppendJSON(buf[:0])
	h.ch.Publish(transport.Event{Data: append([]byte(nil), buf...)})
	h.published(m, string(buf))
	// Only a call the engine asks about is counted (E-5.2: completed; an
	// interrupted call's id may come again, complete).
	if m.IsModel(omni.ToolCall) && len(m.Origin) == 0 && m.Payload.StopReason == omni.StatusCompleted {
		h.calledOut(m.Payload.ToolCallID)
	}
	return buf
}

// observe counts m (Config.Metrics) and follows the run's status; h.mu is
// held.
func (h *Host) observe(m *omni.Message) {
	met := h.reg.cfg.Metrics
	switch {
	case m.IsModel(omni.ToolCall):
		if met != nil {
			met.ToolCalls.Add(1)
		}
	case m.Type != omni.TypeEventMsg:
	case m.Payload.Type == omni.RequestEnd:
		st := m.Payload.Status()
		if met != nil {
			met.ModelRequests[transport.StatusIndex(st)].Add(1)
		}
		if len(m.Origin) == 0 && h.run.status != omni.StatusAborted {
			h.run.status = st
		}
	case len(m.Origin) > 0:
	case m.Payload.Type == omni.Abort:
		h.run.status = omni.StatusAborted
	case m.Payload.Type == omni.CompactionEnd && h.run.status != omni.StatusAborted:
		h.run.status = m.Payload.Status()
	}
}

// end ends the run in flight and starts the next queued task; when none
// starts, it returns the idle hosts to cool (Config.KeepWarm). done is the
// run's, to close.
func (h *Host) end() (idle []*Host, done chan struct{}, ended RunEnd) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ended = RunEnd{SessionID: h.id, Compaction: h.run.compaction, Status: h.run.status, Duration: h.reg.now().Sub(h.run.start)}
	if ended.Status == "" {
		ended.Status = omni.StatusCompleted
	}
	if m := h.reg.cfg.Metrics; m != nil {
		m.RunsEnded[transport.StatusIndex(ended.Status)].Add(1)
	}
	h.denyPending()
	h.cancel()
	h.cancel = nil
	h.agg = omni.Aggregator{}
	done = h.done
	h.release() // before idle is told: whoever sees it may take the lock
	h.release = nil
	h.setState(transport.StateIdle)
	h.ch.SetBusy(false)
	h.ch = nil
	failed := false
	for len(h.followUps) > 0 && !h.closed {
		next := h.followUps[0]
		h.followUps = h.followUps[1:]
		err := h.startLocked(next.Task)
		if err == nil {
			return nil, done, ended
		}
		h.followUpFailed(next.id, err)
		failed = true
	}
	if failed { // the task_state above still listed the tasks that failed
		h.publish(h.taskState())
	}
	if h.closed {
		return nil, done, ended
	}
	return h.reg.idle(h), done, ended
}

// DiagTask is the kind of the diagnostic (Config.OnDiagnostic) that says
// a queued follow-up task could not start when the run before it ended.
const DiagTask engine.DiagnosticKind = "task"

// followUpFailed says that the queued task id could not start (err): on
// the session's stream, where the client that queued it (202, queued)
// learns it, as a task_failed server event with the error of a refused
// POST …/tasks ({"type":"task_failed","taskId":…,"error":{"code":…,
// "message":…}}), and to Config.OnDiagnostic. h.mu is held.
func (h *Host) followUpFailed(id string, err error) {
	e, ok := err.(*Error)
	if !ok {
		e = newErr(500, "internal", err.Error())
	}
	b := []byte(`{"type":"task_failed","taskId":`)
	b = transport.AppendString(b, id)
	b = append(b, `,"error":{"code":`...)
	b = transport.AppendString(b, e.Code)
	b = append(b, `,"message":`...)
	b = transport.AppendString(b, e.Message)
	h.publish(transport.Event{Name: transport.EventServer, Data: append(b, "}}"...)})
	if f := h.reg.cfg.OnDiagnostic; f != nil {
		f(engine.Diagnostic{Kind: DiagTask, Err: errors.New("session " + trace.QuoteID(h.id) + ": the queued task " + id + " did not start: " + e.Code + ": " + e.Message)})
	}
}

// Steer queues text (and images: web or data: URLs) for the run in flight;
// ErrNotRunning when there is none. A blank text (only the white space
// JavaScript's trim removes, as the engine measures it) is no text: alone
// it is refused, as an empty one is (the engine would queue nothing,
// E-11.1, and the client be told it was accepted).
func (h *Host) Steer(text string, images []string) error {
	msgs := []omni.Message{}
	now := omni.FormatTimestamp(h.reg.now())
	if strings.TrimFunc(text, jsspace.Is) != "" { // blank as the engine says it
		m := omni.UserText(text)
		m.Timestamp = now
		msgs = append(msgs, m)
	}
	for i, u := range images {
		if why := imageProblem(u); why != "" {
			return badRequest("images[" + strconv.Itoa(i) + "]: " + why)
		}
		m := omni.Message{Timestamp: now, Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.ImageURL, Role: omni.RoleUser, Rest: &omni.Rest{ImageURL: u}}}
		msgs = append(msgs, m)
	}
	if len(msgs) == 0 {
		return badRequest("steer: want a non-blank text or images")
	}
	h.mu.Lock()
	sess := h.sess
	running := h.state == transport.StateRunning
	h.mu.Unlock()
	if !running || sess == nil {
		return ErrNotRunning
	}
	ok, err := sess.Steer(msgs)
	if err != nil {
		return badRequest("steer: " + err.Error())
	}
	if !ok {
		return ErrNotRunning
	}
	return nil
}

// Abort cancels the run or compaction in flight and denies every pending
// approval (T-14); false when the session is idle. It does not wait.
func (h *Host) Abort() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cancel == nil {
		return false
	}
	h.followUps = nil
	h.cancel()
	h.denyPending()
	return true
}

// Wait blocks until the run in flight, if any, has ended (and the idle
// hosts past Config.KeepWarm have let their engines go) or ctx is done.
func (h *Host) Wait(ctx context.Context) error {
	h.mu.Lock()
	done := h.done
	h.mu.Unlock()
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

// RetryNow skips a pending reconnect wait; false when none is pending.
func (h *Host) RetryNow() bool {
	h.mu.Lock()
	sess := h.sess
	h.mu.Unlock()
	return sess != nil && sess.SkipReconnectWait()
}

// Compact starts a manual compaction (state compacting) whose stream is
// relayed like a run's.
func (h *Host) Compact() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed { // deleted, as Start says
		return notFound(h.id)
	}
	if h.state != transport.StateIdle {
		return ErrTaskInProgress
	}
	release, cold, err := h.take()
	if err != nil {
		return err
	}
	var refused error
	switch h.sess.Compactability() {
	case engine.CompactUnsupported:
		refused = ErrNoCompaction
	case engine.CompactEmpty:
		refused = ErrNothingToCompact
	case engine.CompactJustCompacted:
		refused = ErrAlreadyCompacted
	}
	if refused != nil {
		h.letGo(cold)
		release()
		return refused
	}
	ctx, cancel := context.WithCancel(context.Background())
	run, err := h.sess.Compact(ctx)
	if err != nil {
		cancel()
		h.letGo(cold)
		release()
		return ErrTaskInProgress
	}
	h.begin(cancel, release, true)
	h.setState(transport.StateCompacting)
	go h.consume(run)
	return nil
}

// letGo drops the engine resumed for a run or compaction that did not
// start, when the host had none before (cold); h.mu is held.
func (h *Host) letGo(cold bool) {
	if cold {
		h.sess.Close()
		h.sess = nil
	}
}
