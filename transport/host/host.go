package host

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/transport"
)

// Approval modes (TRANSPORT.md T-13).
const (
	ModeAsk      = "ask"
	ModeAllowAll = "allow-all"
	ModeDenyAll  = "deny-all"
	ModeReadOnly = "read-only"
)

// ValidMode reports whether m is one of the four approval modes.
func ValidMode(m string) bool {
	return m == ModeAsk || m == ModeAllowAll || m == ModeDenyAll || m == ModeReadOnly
}

// Host is one session served to remote clients.
type Host struct {
	reg  *Registry
	id   string
	sess *engine.Session

	mu    sync.Mutex // held around every state change and its Publish
	state string
	// shown is state for State, which does not wait for mu: a Trace write
	// that hangs holds it (see sink).
	shown     atomic.Pointer[string]
	mode      string
	ch        *transport.Channel // the channel of the run in flight
	cancel    context.CancelFunc
	release   func()        // the session's lock, held by the run in flight
	done      chan struct{} // closed when the run in flight has ended
	pending   []*approval
	calls     map[string]*callCount // the run's tool_calls by id: published, asked
	agg       omni.Aggregator
	followUps []task
	nextTask  int
	closed    bool          // being deleted, or deleted
	deleted   bool          // its Trace and channel are gone (Delete)
	deleting  chan struct{} // held by the one Delete under way
	written   []string      // see sink
	untraced  []keyed
	// traceBytes is the size of the Trace's current file, as far as this
	// host wrote it or found it at its resume (Config.KeepWarmBytes).
	traceBytes int64
	// run is the run in flight's start and status so far (Config.OnRunEnd).
	run struct {
		start      time.Time
		compaction bool
		status     string
	}
}

type approval struct {
	call  omni.Message
	reply chan string
	shown bool // its approval_request is published (after its tool_call)
	// nth: it asks for the nth call of its id the run's approver was asked
	// for, shown once the nth tool_call of that id is published.
	nth int
}

// callCount counts the tool_calls of one id in a run: those published on
// the stream, and those the approver was asked for (answered by the
// approval mode or not). A model may give a call the id of an earlier one
// (a server that numbers its calls afresh each turn): the nth request is
// for the nth call.
type callCount struct{ published, asked int }

// Task is the input of one run (POST …/tasks).
type Task struct {
	Input         []omni.Message
	ThinkingLevel string
	QueueIfBusy   bool
}

type task struct {
	id string
	Task
}

// ID returns the session id.
func (h *Host) ID() string { return h.id }

// Session returns the engine session: nil until the session's first run or
// compaction, and again once it has been idle long enough to let its
// engine go (Config.KeepWarm).
func (h *Host) Session() *engine.Session {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sess
}

// State returns idle, running or compacting. It does not wait for a
// state change under way, nor for a Trace write that hangs.
func (h *Host) State() string {
	if p := h.shown.Load(); p != nil {
		return *p
	}
	return transport.StateIdle
}

// Mode returns the approval mode.
func (h *Host) Mode() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.mode
}

// SetMode changes the approval mode; it applies to tool calls decided from
// then on.
func (h *Host) SetMode(mode string) error {
	if !ValidMode(mode) {
		return badRequest("approvalMode: " + quote(mode) + " is not one of ask, allow-all, deny-all, read-only")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.mode = mode
	return nil
}

func (h *Host) channel() *transport.Channel { return h.reg.cfg.Hub.Channel(h.id) }

// publish sends ev on the session channel; h.mu is held.
func (h *Host) publish(ev transport.Event) {
	ch := h.ch
	if ch == nil {
		ch = h.channel()
	}
	ch.Publish(ev)
}

// taskState is the current task_state event; h.mu is held.
func (h *Host) taskState() transport.Event {
	ts := transport.TaskState{State: h.state, Queued: len(h.followUps)}
	for _, t := range h.followUps {
		ts.PendingFollowUps = append(ts.PendingFollowUps, pendingOf(t.id, t.Input))
	}
	return ts.Event()
}

func pendingOf(id string, input []omni.Message) transport.Pending {
	p := transport.Pending{ID: id}
	var texts []string
	for _, m := range input {
		switch m.Payload.Type {
		case omni.Text:
			texts = append(texts, m.Payload.Text)
		case omni.ImageURL:
			p.Images++
		case omni.InlineData:
			p.Files++
		}
	}
	p.Text = strings.Join(texts, "\n")
	return p
}

// setState flips the run state and announces it on both channels; h.mu is
// held.
func (h *Host) setState(state string) {
	h.state = state
	h.shown.Store(&state)
	h.publish(h.taskState())
	h.reg.announceState(h.id, state)
}

// Subscribe opens the session stream for one connection (T-10): replay or
// resync_required for lastID when resume is set, then the task_state
// snapshot and one approval_request per pending approval, then live events.
func (h *Host) Subscribe(lastID string, resume bool) (*transport.Subscriber, transport.Replay) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.deleted {
		// Found before its Delete, subscribed after: the stream ends at
		// once, as one open at the delete did (Hub.Channel would make a
		// channel for no session, and the stream would wait on it).
		c := transport.NewChannel(transport.Options{})
		c.Close()
		return c.Subscribe(lastID, resume, nil)
	}
	initial := []transport.Event{h.taskState()}
	for _, a := range h.pending {
		if a.shown { // the others follow their tool_call live
			initial = append(initial, approvalEvent(a.call))
		}
	}
	return h.channel().Subscribe(lastID, resume, initial)
}

func approvalEvent(call omni.Message) transport.Event {
	return transport.ApprovalRequest(call.AppendJSON(nil), call.Origin)
}
