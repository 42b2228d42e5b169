package engine

import (
	"context"
	"errors"
	"github.com/floehq/floe/internal/errf"
	"github.com/floehq/floe/internal/lock"
	"strings"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/mergequeue"
)

// errNoEnvironment fails every tool call of a session without Environment.
var errNoEnvironment = errors.New("no environment configured")

// toolRun is one executing tool call: it forwards the tool's messages and
// keeps what E-6.4/E-6.5 need to guarantee pairing.
type toolRun struct {
	r     *run
	c     *call
	ctx   context.Context // the tool's (runTask)
	id    string
	prod  mergequeue.Producer[item] // registered in the attempt's queue (dispatch)
	stamp stamper

	mu        lock.Mutex
	done      bool
	valid     omni.Checker    // validation, which a fragment of the last valid one's shape skips
	deltas    strings.Builder // S: the output of this call's delta fragments
	open      bool            // a start without its stop
	images    []string        // the last delta's images
	output    omni.Message    // the last complete output, if hasOutput
	hasOutput bool
	g         grace // the abort grace's watch (watchGrace)
}

// runTask executes one allowed call on a worker of the run, its own
// goroutine (E-6.1), and closes its producer when the tool has finished,
// or when the abort grace ran out first (Config.AbortGrace): then the tool
// is abandoned and its call gets the output of a failed tool at once.
func (tr *toolRun) runTask() {
	r, c, ctx := tr.r, tr.c, tr.ctx
	s := r.s
	g := r.watchGraceIn(ctx, &tr.g, tr)
	var err error
	func() {
		defer recoverTo(s, "tool", func(v any) {
			err = errf.Errorf("tool panicked: %s", panicText(v))
		})
		env := s.cfg.Environment
		if env == nil {
			err = errNoEnvironment
			return
		}
		err = env.ExecuteTool(ctx, ToolRequest{ToolCall: c.msg, Approve: r.opts.Approve, Abandoned: g.gone, EmitBatch: tr.emitBatch}, tr.emit)
	}()
	g.stop()
	tr.finish(err)
}

// abandon gives the call the output of a failed tool (the abort grace ran
// out).
func (tr *toolRun) abandon() { tr.finish(errors.New(graceMessage("tool", tr.r.s.abortGrace()))) }

// emit is the tool's emit callback (E-6.2, E-6.3).
func (tr *toolRun) emit(m omni.Message) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.emitLocked(&m)
}

// emitBatch is ToolRequest.EmitBatch: under one hold of tr.mu, the
// fragments of the call's own output that pass the checks are queued
// through one mergequeue.Batch, under one hold of the queue's lock, which
// is let go for every other message: that one takes emit's way.
func (tr *toolRun) emitBatch(ms []omni.Message) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	b := tr.prod.Batch(context.Background())
	defer b.Unlock()
	for i := range ms {
		if !tr.emitHeld(&b, &ms[i]) {
			b.Unlock()
			tr.emitLocked(&ms[i])
		}
	}
}

// emitHeld is emitLocked through a batch for a fragment of the call's own
// output, the bulk of a tool's stream: it reports whether it queued m.
// Anything else, a message that fails a check (emitLocked reports it) and
// a queue that takes no more items are left to emitLocked.
func (tr *toolRun) emitHeld(b *mergequeue.Batch[item], m *omni.Message) bool {
	p := &m.Payload
	if tr.done || len(m.Origin) > 0 || m.Type != omni.TypeModelMsg || p.Type != omni.PartialToolCallOutput || p.ToolCallID != tr.id || tr.valid.Validate(m) != nil {
		return false
	}
	it, err := b.Next()
	if err != nil {
		return false
	}
	it.Msg, it.Bits = *m, bits(false, true)
	tr.stamp.stamp(tr.r.s.clock, &it.Msg)
	tr.track(p)
	b.Commit()
	return true
}

// emitLocked is emit's work, under tr.mu.
func (tr *toolRun) emitLocked(m *omni.Message) {
	s := tr.r.s
	if tr.done {
		s.diag(DiagTool, errf.Errorf("tool %s emitted after it returned (or was abandoned); dropped", tr.id))
		return
	}
	partial := m.IsPartial()
	if s.dropForeign(true, tr.id, m, partial) {
		return
	}
	if err := tr.valid.Validate(m); err != nil {
		s.diag(DiagTool, errf.Errorf("tool %s: invalid message dropped: %w", tr.id, err))
		return
	}
	tr.stamp.stamp(s.clock, m)
	if len(m.Origin) > 0 { // subagent traffic: streamed, never traced (E-6.3)
		if m.Type == omni.TypeSessionMeta && len(m.Origin) == 1 { // E-15.3
			ptr := omni.SubagentMsg(m.Origin[0])
			ptr.Timestamp = m.Timestamp
			tr.prod.Push(context.Background(), item{Msg: ptr, Bits: traceOnly}, item{Msg: *m, Bits: unrecorded})
			return
		}
		tr.push1(m, true) // never recorded, fragment or not
		return
	}
	p := &m.Payload
	if m.Type == omni.TypeModelMsg && (p.Type == omni.PartialToolCallOutput || p.Type == omni.ToolCallOutput) {
		if p.ToolCallID != tr.id { // another call's output: that call would get two, this one none
			s.diag(DiagTool, errf.Errorf("tool %s: %s for tool_call_id %q, not its own call, dropped", tr.id, p.Type, p.ToolCallID))
			return
		}
		if p.Type == omni.ToolCallOutput {
			tr.output, tr.hasOutput = *m, true
		} else {
			tr.track(p)
		}
	}
	tr.push1(m, partial)
}

// track keeps what finish needs of a fragment of the call's own output.
func (tr *toolRun) track(p *omni.Payload) {
	switch p.EventType {
	case omni.EventStart:
		tr.open = true
	case omni.EventDelta:
		if tr.deltas.Cap() == 0 {
			tr.deltas.Grow(256) // most outputs, in one allocation
		}
		tr.deltas.WriteString(p.Output)
		if len(p.Images()) > 0 {
			tr.images = p.Images()
		}
	case omni.EventStop:
		tr.open = false
	}
}

// push1 queues m, copied once, into the queue's buffer; unrec says m is
// a fragment or subagent traffic (unrecorded).
func (tr *toolRun) push1(m *omni.Message, unrec bool) {
	tr.prod.PushFunc(context.Background(), func(it *item) {
		it.Msg, it.Bits = *m, bits(false, unrec)
	})
}

// finish guarantees the call's pairing once the tool has returned
// (E-6.4–E-6.7).
func (tr *toolRun) finish(err error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.done { // abandoned after the abort grace (runTool), or returned after that
		return
	}
	tr.done = true
	defer tr.prod.Done()
	if tr.hasOutput {
		if err != nil { // E-6.6
			tr.r.s.diag(DiagTool, errf.Errorf("tool %s failed after its output: %w", tr.id, err))
		}
		tr.c.output = &tr.output
		return
	}
	S := tr.deltas.String()
	X, status := S, omni.StatusCompleted
	if err != nil { // E-6.5
		note := ToolErrorPrefix + err.Error()
		X, status = note, omni.StatusFailed
		if S != "" {
			X = S + "\n" + note
		}
	} else if X == "" { // E-6.4
		X = NoOutput
	}
	var ms []omni.Message
	if tr.open {
		if suffix := X[len(S):]; suffix != "" {
			ms = append(ms, omni.Partial(omni.PartialToolCallOutput, omni.EventDelta, suffix, tr.id, "", omni.StatusCompleted))
		}
		ms = append(ms, omni.Partial(omni.PartialToolCallOutput, omni.EventStop, "", tr.id, "", status))
	}
	out := omni.ToolOutput(tr.id, X, status)
	if tr.images != nil {
		out.Payload.Rest = &omni.Rest{Images: tr.images}
	}
	ms = append(ms, out)
	items := make([]item, len(ms))
	for i := range ms {
		tr.stamp.stamp(tr.r.s.clock, &ms[i])
		items[i] = item{Msg: ms[i]}
	}
	last := ms[len(ms)-1]
	tr.c.output = &last
	tr.prod.Push(context.Background(), items...)
}
