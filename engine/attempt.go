package engine

import (
	"context"
	"errors"
	"github.com/floehq/floe/internal/errf"
	"github.com/floehq/floe/internal/lock"
	"runtime"
	"strings"
	"sync"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/mergequeue"
)

// poolSpares keeps a finished run's queue buffers for the next run
// (spares), natively only: sync.Pool would cost floe.wasm about 6 KB.
const poolSpares = runtime.GOARCH != "wasm"

// queueCapacity bounds the messages producers may queue ahead of the
// consumer's current batch (backpressure).
const queueCapacity = 256

// item is one entry of an attempt's merge queue.
//
// Its fields are exported only to keep short the names of the merge
// queue's functions made for it, which spell out the struct's fields, an
// unexported one with its package's path: floe.wasm carries every name.
type item struct {
	Msg  omni.Message
	Bits uint8 // traceOnly, unrecorded
}

// The bits of an item.
const (
	traceOnly uint8 = 1 << iota // written to the Trace, never streamed
	// unrecorded says that Msg is a streamed fragment, or subagent
	// traffic, which a Trace never records (E-16.1): the consumer does not
	// ask Recordable, whose look at the types cost a message of a long
	// stream about a sixth of the engine's own instructions natively.
	unrecorded
)

// bits returns an item's bits.
func bits(trace, unrec bool) uint8 {
	var b uint8
	if trace {
		b |= traceOnly
	}
	if unrec {
		b |= unrecorded
	}
	return b
}

// A run keeps its attempts' two merge-queue buffers (the queue's and the
// consumer's, of up to about queueCapacity items, some 200 KB each) for its
// next attempt: growing them from nothing for every request was most of
// the bytes a short request allocated. They go with the run.
const maxSpareItems = queueCapacity + queueCapacity/4

// takeBuf returns a spare buffer of the run, or nil.
func (r *run) takeBuf() []item {
	for i, b := range r.spare {
		if b != nil {
			r.spare[i] = nil
			return b
		}
	}
	return nil
}

// spares keeps, natively, a finished run's merge-queue buffers for the
// next run of any session: a run of one request otherwise grows its queue's
// buffer from nothing, about 250 KB of allocations for a long stream. The
// collector empties it. On WebAssembly (not poolSpares) a run starts
// without.
var spares sync.Pool

func takeSpares() [2][]item {
	if v, ok := spares.Get().(*[2][]item); ok {
		s := *v
		*v = [2][]item{}
		return s
	}
	return [2][]item{}
}

// putSpares clears the buffers, whose stale items would keep what they
// hold alive in the pool, and pools them.
func putSpares(s *[2][]item) {
	if s[0] == nil && s[1] == nil {
		return
	}
	for _, b := range s {
		clear(b[:cap(b)])
	}
	v := new([2][]item)
	*v = *s
	*s = [2][]item{}
	spares.Put(v)
}

// putBuf keeps b for the run's next attempt. It is not cleared: clearing
// some 200 KB twice per request was 8% of a short request's time, and
// what its stale items hold goes with the run (the next attempt
// overwrites a slot before reading it).
func (r *run) putBuf(b []item) {
	if cap(b) == 0 || cap(b) > maxSpareItems {
		return
	}
	for i := range r.spare {
		if r.spare[i] == nil {
			r.spare[i] = b[:0]
			return
		}
	}
}

// call is one entry of the call ledger: a real tool call and its output.
type call struct {
	msg    omni.Message
	output *omni.Message // the last complete tool_call_output; written by its producer
}

// attempt is one LLM request and the tools it triggered (E-4.5–E-4.10).
type attempt struct {
	outcome   Outcome
	calls     []*call        // real tool calls in call order
	segments  []omni.Message // complete thinking/text, production order
	usage     *omni.Message  // the last token_usage: &lastUsage, or nil
	usages    int64          // token_usage messages seen
	lastUsage omni.Message   // the last token_usage (a field: no allocation a request)
	text      []byte         // a compaction attempt's complete assistant text bodies, concatenated
}

func (t *attempt) outputsInCallOrder() []omni.Message {
	n := 0
	for _, c := range t.calls {
		if c.output != nil {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make([]omni.Message, 0, n)
	for _, c := range t.calls {
		if c.output != nil {
			out = append(out, *c.output)
		}
	}
	return out
}

// runAttempt performs one request: request_begin, the LLM call with its
// driver and tools, request_end; it returns when the LLM has returned (or
// was abandoned, Config.AbortGrace), every tool has finished and the
// consumer has taken every message (E-4.9). A compaction attempt (E-13.5)
// writes everything to the Trace only.
func (r *run) runAttempt(ctx context.Context, in []omni.Message, retries, maxRetries int, compaction bool) *attempt {
	s := r.s
	s.injectHistory(ctx)
	begin := omni.RequestBeginMsg()
	if compaction {
		s.stampMsg(&begin)
		s.traceWrite(ctx, begin)
	} else {
		r.emit(ctx, begin)
	}

	t := &attempt{}
	q := mergequeue.New[item](queueCapacity)
	q.Reuse(r.takeBuf())
	llmCtx, cancelLLM := context.WithCancel(ctx)
	defer cancelLLM()
	// The driver's stamper starts from the session's last stamp, so its
	// first one within the same minute skips the calendar (stampAt).
	d := &driver{r: r, t: t, q: q, compaction: compaction, cancelLLM: cancelLLM, stamp: s.stamp, retries: retries, maxRetries: maxRetries, fast: true}
	q.Register(&d.prod)
	d.ctx, d.llmCtx = ctx, llmCtx
	d.params = GenerateParams{NewMessages: in, SystemPrompt: s.cfg.Meta.Payload.SystemPrompt(), Tools: s.cfg.ToolList}
	if !compaction {
		d.params.ThinkingLevel = r.opts.ThinkingLevel
	}
	r.spawn(d)
	r.consume(ctx, q)
	r.putBuf(q.Release())

	if u := t.usage; u != nil { // E-4.7.2, E-13.5
		if u.Payload.Request() != nil {
			s.lastRequestTotal = u.Payload.Request().Total
		}
		if u.Payload.Session() != nil {
			s.sessionTokens = *u.Payload.Session()
		}
		if !compaction {
			s.sessionTurns += t.usages
		}
	}
	return t
}

// consume moves the attempt's messages from the merge queue to the Trace
// and the consumer, in arrival order, until every producer is done. It
// takes the queue's whole buffer at a time (Swap): a message is copied
// once into the queue and once to the consumer.
func (r *run) consume(ctx context.Context, q *mergequeue.Queue[item]) {
	buf := r.takeBuf()
	defer func() { r.putBuf(buf) }()
	var err error
	for {
		buf, err = q.Swap(context.Background(), buf)
		if err != nil {
			return // ErrDone: every producer finished and the queue is drained
		}
		// Every producer path stamps a message as it queues it (the time it
		// entered the engine, not the time the consumer reads it); this is
		// a guard for one that did not: one clock read a batch.
		stamp := ""
		for i := range buf {
			it := &buf[i]
			if it.Bits&traceOnly != 0 {
				if it.Bits&unrecorded == 0 && it.Msg.Recordable() {
					r.s.traceWrite(ctx, it.Msg)
				}
				continue
			}
			if it.Msg.Timestamp == "" {
				if stamp == "" {
					r.s.stamp.stampAt(r.s.clock.Now(), &it.Msg)
					stamp = it.Msg.Timestamp
				} else {
					it.Msg.Timestamp = stamp
				}
			}
			// Whether a produced message follows matters only to a
			// batching consumer (Run.NextEach); asking costs a lock.
			more := i < len(buf)-1 || (r.batching && q.Len() > 0)
			r.deliverQueued(ctx, &it.Msg, more, it.Bits&unrecorded != 0)
		}
	}
}

// driver handles the LLM's messages one at a time, in order (E-4.7).
type driver struct {
	r          *run
	t          *attempt
	q          *mergequeue.Queue[item]
	prod       mergequeue.Producer[item] // registered in q (Register)
	compaction bool
	cancelLLM  context.CancelFunc
	grace      *grace // the LLM call's watch, when refuse must arm it (run)
	g          grace  // that watch, held here

	// What runTask hands run: the attempt's context, the LLM call's, and
	// the request's parameters.
	ctx, llmCtx context.Context
	params      GenerateParams
	stamp       stamper
	retries     int
	maxRetries  int

	// fast says that a streamed fragment may take emit's fast path
	// (emitFast), which checks and queues it under the queue's lock alone.
	// It is written with both mu and the queue's lock held, and read with
	// either. It is false while emit's slow path or end holds mu, and for
	// good once the attempt is closed or malformed: check is the fast
	// path's (under the queue's lock) while fast is true, else mu's.
	fast bool

	mu      lock.Mutex // serializes emit's slow path and end, and guards the fields below
	closed  bool       // the attempt's request_end is pushed: the LLM returned or was abandoned
	bad     error      // the LLM broke the protocol; the attempt is malformed
	check   omni.Discipline
	valid   omni.Checker    // validation, which a fragment of the last valid one's shape skips; guarded as check is
	callIDs map[string]bool // tool_call ids of this request (E-4.10: one output per id)
}

// runTask runs the driver on a worker of the run (spawn).
func (d *driver) runTask() { d.run(d.ctx, d.llmCtx, d.r.s.llm, d.params) }

// abandon ends the attempt when the LLM was abandoned (its grace).
func (d *driver) abandon() { d.end(d.ctx, Outcome{}, true) }

// run calls the LLM and ends the attempt when it returns, or when the abort
// grace runs out first (Config.AbortGrace): then the LLM is abandoned, the
// attempt ends at once and whatever the LLM does later is dropped.
func (d *driver) run(ctx, llmCtx context.Context, llm LLM, p GenerateParams) {
	s := d.r.s
	var g *grace
	if d.r.done != nil && ctx.Done() == d.r.done {
		// llmCtx is done when the run's context is or when refuse cancels
		// it: the run's registry watches the first, refuse arms the second.
		g = d.r.watchGraceIn(ctx, &d.g, d)
		d.grace = g
	} else {
		g = d.r.watchGraceIn(llmCtx, &d.g, d)
	}
	p.Abandoned = g.gone
	p.EmitBatch = func(ms []omni.Message) { d.emitBatch(ctx, ms) }
	var o Outcome
	func() {
		defer recoverTo(s, "llm", func(v any) {
			o = Outcome{Status: omni.StatusFailed, ErrorMessage: "llm callback panicked: " + panicText(v)}
		})
		if llm == nil { // a Config.NewLLM's: each attempt panicked and was retried
			o = Outcome{Status: omni.StatusFailed, Permanent: true, ErrorMessage: "engine: Config.NewLLM returned a nil LLM"}
			return
		}
		o = llm.StreamGenerate(llmCtx, p, func(m omni.Message) { d.emit(ctx, &m) })
	}()
	g.stop()
	d.end(ctx, o, false)
}

// end ends the attempt once: it closes the fragments the LLM left open
// (P-6), with the attempt's status, and pushes request_end (E-4.8).
func (d *driver) end(ctx context.Context, o Outcome, abandon bool) {
	s := d.r.s
	d.mu.Lock()
	defer d.mu.Unlock()
	d.setFast(false)
	if d.closed {
		return
	}
	d.closed = true
	o = normalizeOutcome(o)
	switch {
	case d.bad != nil:
		o = Outcome{Status: omni.StatusMalformed, ErrorMessage: d.bad.Error()}
	case abandon:
		o = Outcome{Status: omni.StatusAborted, ErrorMessage: graceMessage("llm", s.abortGrace())}
	case o.Status == omni.StatusCompleted:
		if err := d.check.Unfinished(); err != nil { // the LLM said completed with a fragment open
			o = Outcome{Status: omni.StatusMalformed, ErrorMessage: errf.Sprintf("invalid message from llm: %s", err.Error())}
		} else if o.Cut != "" {
			// Reported before request_end goes out, so that a consumer
			// that has read the stream to its end has had it too.
			s.diag(DiagLLM, errf.Errorf("llm: %w (%s)%s; it completed as far as it went", ErrReplyCut, o.Cut, cutCause(o.Cut)))
		}
		if d.t.usages == 0 {
			s.noUsage()
		}
	}
	for _, m := range d.check.Close(string(o.Status)) {
		partial := m.IsPartial()
		if !partial {
			d.stamp.stamp(s.clock, &m)
			d.note(ctx, &m)
		}
		d.push1(&m, partial)
	}
	d.t.outcome = o
	end := requestEnd(o, d.retries, d.maxRetries, s.retryDelayMs)
	d.stamp.stamp(s.clock, &end)
	d.push1(&end, false)
	d.prod.Done()
}

// cutCause says what cut a reply short by the reason of cut (an
// Outcome.Cut: its first quoted word, else all of it), as the providers
// name them (cutCauses); "" for another reason.
func cutCause(cut string) string {
	r := cut
	if i := strings.IndexByte(cut, '"'); i >= 0 {
		if j := strings.IndexByte(cut[i+1:], '"'); j >= 0 {
			r = cut[i+1 : i+1+j]
		}
	}
	k := strings.Index(cutCauses, "|"+r+"|")
	if r == "" || k < 0 {
		return ""
	}
	c := cutCauses[k+strings.IndexByte(cutCauses[k:], '=')+1:]
	return ": " + c[:strings.IndexByte(c, '\n')]
}

// cutCauses lists the reasons of cut replies, "|" around each, and their
// cause after "=", up to "\n".
const cutCauses = "|length|max_tokens|max_output_tokens|=a reply at its output-token limit (raise the adapter's MaxTokens)\n" +
	"|model_context_window_exceeded|model_length|=a reply that filled the model's context window\n" +
	"|content_filter|sensitive|=a reply stopped by the provider's content filter\n" +
	"|refusal|=a reply the model refused to go on with\n" +
	"|pause_turn|=a turn the provider's own tools (web search) paused, which is not continued\n"

// requestEnd stamps request_end per E-4.8.
func requestEnd(o Outcome, retries, maxRetries int, delayMs func(int, Outcome) int) omni.Message {
	if o.Status == StatusCompleted && o.ErrorMessage == "" && retries == 0 {
		return omni.Event(omni.Payload{Type: omni.RequestEnd, Rest: omni.CompletedEndRest()})
	}
	p := omni.Payload{Type: omni.RequestEnd, Rest: &omni.Rest{Status: string(o.Status), ErrorMessage: o.ErrorMessage}}
	if o.Status != StatusCompleted || retries > 0 {
		p.Rest.Attempt = retries + 1
	}
	if retryable(o) && retries < maxRetries {
		v := delayMs(retries+1, o)
		p.Rest.RetryInMs = &v
	}
	return omni.Event(p)
}

func retryable(o Outcome) bool {
	switch o.Status {
	case StatusFailed:
		return !o.Permanent
	case StatusTimeout, StatusMalformed:
		return true
	}
	return false
}

func normalizeOutcome(o Outcome) Outcome {
	switch o.Status {
	case StatusCompleted, StatusFailed, StatusAborted, StatusTimeout, StatusMalformed, StatusAuth:
		return o
	case "":
		return Outcome{Status: StatusFailed, ErrorMessage: "llm returned no outcome status"}
	}
	return Outcome{Status: StatusFailed, ErrorMessage: errf.Sprintf("llm returned outcome status %q, not one of completed|failed|aborted|timeout|malformed|auth", string(o.Status))}
}

func (d *driver) push(ms ...omni.Message) {
	items := make([]item, len(ms))
	for i := range ms {
		items[i] = item{Msg: ms[i], Bits: bits(d.compaction, false)}
	}
	d.prod.Push(context.Background(), items...)
}

// push1 queues m, copied once, into the queue's buffer; partial says m
// is a streamed fragment (unrecorded).
func (d *driver) push1(m *omni.Message, partial bool) {
	d.prod.PushFunc(context.Background(), func(it *item) {
		it.Msg, it.Bits = *m, bits(d.compaction, partial)
	})
}

// emit is the LLM's emit callback, given the callback's argument (no
// copy of it).
//
// The bulk of a stream, a fragment of the LLM's own, takes the fast path
// (emitFast): it is checked and queued under the queue's lock alone, with
// no lock of the driver's (natively, a long stream then takes about 0.9
// of the time; on WebAssembly, where a lock is a few plain instructions,
// it skips the slow path's calls and its defers). Everything else, and a
// fragment that fails a check, takes the slow path under d.mu, which
// turns the fast path off while it runs: the checks and the discipline
// are never used by both at once.
func (d *driver) emit(ctx context.Context, m *omni.Message) {
	if !d.emitFast(m) {
		d.emitSlow(ctx, m)
	}
}

// emitBatch is GenerateParams.EmitBatch: the messages that take emit's
// fast path are queued through one mergequeue.Batch, under one hold of
// the queue's lock, which is let go for each message of the slow path.
func (d *driver) emitBatch(ctx context.Context, ms []omni.Message) {
	b := d.prod.Batch(context.Background())
	defer b.Unlock()
	for i := range ms {
		if !d.emitHeld(&b, &ms[i]) {
			b.Unlock()
			d.emitSlow(ctx, &ms[i])
		}
	}
}

// emitHeld is emitFast through a batch: it reports whether it queued m.
func (d *driver) emitHeld(b *mergequeue.Batch[item], m *omni.Message) bool {
	if !m.IsPartial() || len(m.Origin) > 0 || m.Payload.Type == omni.PartialToolCallOutput {
		return false
	}
	it, err := b.Next()
	if err != nil || !d.fast || !omni.HotDelta(&d.valid, &d.check, m) && checkLLMMessage(m, &d.valid, &d.check) != nil {
		return false // the slow path drops it, or refuses it
	}
	it.Msg, it.Bits = *m, bits(d.compaction, true)
	d.stamp.stamp(d.r.s.clock, &it.Msg) // under the queue's lock: the stamper's one user
	b.Commit()
	return true
}

// emitSlow is emit's slow path, under d.mu.
func (d *driver) emitSlow(ctx context.Context, m *omni.Message) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.setFast(false)
	defer d.setFastAgain()
	if d.closed || d.bad != nil {
		return
	}
	partial := m.IsPartial()
	if dropped := d.r.s.dropForeign(false, "", m, partial); dropped {
		return
	}
	if err := checkLast(m, &d.valid, &d.check, d.t.usages); err != nil {
		d.refuse(err)
		return
	}
	if !partial && m.IsModel(omni.ToolCall) {
		id := m.Payload.ToolCallID
		if d.callIDs[id] { // two calls, two approvals, two outputs for one id
			d.refuse(errf.Errorf("invalid message from llm: tool_call %q repeats a tool_call_id of this request", id))
			return
		}
		if d.callIDs == nil {
			d.callIDs = map[string]bool{}
		}
		d.callIDs[id] = true
		// A call cut by the run's abort is closed "aborted" by the model,
		// as it should be: no failure to report.
		if st := m.Payload.StopReason; st != omni.StatusCompleted && !(st == omni.StatusAborted && ctx.Err() != nil) {
			d.r.s.diag(DiagLLM, errf.Errorf("llm: tool_call %q has stop_reason %q, not completed: it is not dispatched (no approval, no output)", id, m.Payload.StopReason))
		}
	}
	d.stamp.stamp(d.r.s.clock, m)
	d.push1(m, partial)
	if !partial {
		d.note(ctx, m)
	}
}

// emitFast is emit's fast path: it reports whether it took m.
func (d *driver) emitFast(m *omni.Message) bool {
	if !m.IsPartial() || len(m.Origin) > 0 || m.Payload.Type == omni.PartialToolCallOutput {
		return false // dropForeign keeps the other fragments: fill does all the slow path would
	}
	ok, _ := d.prod.PushFuncIf(context.Background(), func(it *item) bool {
		if !d.fast || !omni.HotDelta(&d.valid, &d.check, m) && checkLLMMessage(m, &d.valid, &d.check) != nil {
			return false // the slow path drops it, or refuses it
		}
		it.Msg, it.Bits = *m, bits(d.compaction, true)
		d.stamp.stamp(d.r.s.clock, &it.Msg) // under the queue's lock: the stamper's one user
		return true
	})
	return ok
}

// noUsage reports, once per session, a request that completed without
// token_usage (E-1.1): a model that never sends one is never compacted.
//
//go:noinline
func (s *Session) noUsage() {
	if !s.noUsageSaid {
		s.noUsageSaid = true
		s.diag(DiagLLM, errors.New("llm: a request completed without token_usage (the model's last message): compaction cannot see the context's size or count its turns; said once per session"))
	}
}

// checkLast is checkLLMMessage with E-1.1: token_usage is the LLM's last
// message (E-7.2), of which it has sent usages: nothing but another token_usage follows it (looked
// at before the discipline takes the message, as a refused start would
// later be closed), and no fragment is open at it, whose end would follow
// it.
//
//go:noinline
func checkLast(m *omni.Message, valid *omni.Checker, disc *omni.Discipline, usages int64) error {
	usage := m.IsEvent(omni.TokenUsage)
	if usages > 0 && !usage {
		return errf.Errorf("invalid message from llm: %s after token_usage (token_usage is the model's last message)", m.Payload.Type)
	}
	if err := checkLLMMessage(m, valid, disc); err != nil {
		return err
	}
	if open := disc.Open(); usage && open != "" {
		return errf.Errorf("invalid message from llm: token_usage while %s is open (token_usage is the model's last message: end every fragment first)", open)
	}
	return nil
}

// setFast turns emit's fast path on or off; it is called with d.mu held.
func (d *driver) setFast(on bool) {
	if d.fast != on { // mu's holder is the one writer
		d.prod.Locked(func() { d.fast = on })
	}
}

// setFastAgain turns the fast path back on after the slow path, unless
// the attempt has ended or is malformed, or the LLM sent its token_usage:
// the slow path refuses what follows (checkLast).
func (d *driver) setFastAgain() {
	d.setFast(!d.closed && d.bad == nil && d.t.usages == 0)
}

// refuse makes the attempt malformed: the LLM is cancelled and nothing it
// sends later is looked at.
func (d *driver) refuse(err error) {
	d.bad = err
	d.cancelLLM()
	if d.grace != nil {
		d.grace.arm() // the grace of a cancelled LLM (watchGrace watches the run's context only)
	}
}

// note does the driver's bookkeeping for a message it pushed (E-4.7).
func (d *driver) note(ctx context.Context, m *omni.Message) {
	t := d.t
	switch {
	case m.IsEvent(omni.TokenUsage):
		t.lastUsage = *m // a copy: the caller's m does not escape
		t.usage = &t.lastUsage
		t.usages++
	case m.IsModel(omni.Thinking):
		t.segments = append(t.segments, *m)
	case m.IsModel(omni.Text):
		t.segments = append(t.segments, *m)
		if d.compaction && m.Payload.Role == omni.RoleAssistant { // only a summary is read (compaction.go)
			t.text = append(t.text, m.Payload.Text...)
		}
	case m.IsRealToolCall():
		c := &call{msg: *m}
		t.calls = append(t.calls, c)
		if !d.compaction {
			d.decide(ctx, c)
		}
	}
}

// checkLLMMessage validates one message of the LLM stream. A message with
// an origin, a session_meta, or a user-side message is not the LLM's to send.
func checkLLMMessage(m *omni.Message, valid *omni.Checker, disc *omni.Discipline) error {
	// Most of a stream is deltas of the fragment the last message
	// continued, which HotDelta takes with one test instead of the
	// checker's and the discipline's.
	if omni.HotDelta(valid, disc, m) {
		return nil
	}
	if err := valid.Validate(m); err != nil {
		return errf.Errorf("invalid message from llm: %w", err)
	}
	if len(m.Origin) > 0 {
		return errors.New("invalid message from llm: origin is reserved for subagent traffic")
	}
	switch m.Type {
	case omni.TypeSessionMeta:
		return errors.New("invalid message from llm: session_meta")
	case omni.TypeEventMsg:
		if !m.IsEvent(omni.TokenUsage) {
			return errf.Errorf("invalid message from llm: event %q is the engine's to emit", m.Payload.Type)
		}
	}
	if err := disc.Try(m); err != nil {
		return errf.Errorf("invalid message from llm: %w", err)
	}
	return nil
}

// decide asks the approver about one real tool call and acts on the answer
// (§5); called with d.mu held, before the next LLM message is looked at.
func (d *driver) decide(ctx context.Context, c *call) {
	r := d.r
	id := c.msg.Payload.ToolCallID
	if aborted(ctx) { // E-5.5: the approver is not called
		return
	}
	decision, ok := d.approve(ctx, &c.msg)
	if !ok { // the abort won (E-5.5): no decision, nothing dispatched
		return
	}
	dec := omni.ApprovalDecisionMsg(string(decision), id)
	d.stamp.stamp(r.s.clock, &dec)
	if decision == omni.DecisionAllow {
		d.push1(&dec, false)
		d.dispatch(ctx, c)
		return
	}
	text := DeniedByUser
	if decision == omni.DecisionForbidden {
		text = DeniedByPolicy
	}
	out := omni.ToolOutput(id, text, omni.StatusAborted)
	d.stamp.stamp(r.s.clock, &out)
	c.output = &out
	d.push(dec, out) // E-5.7: nothing between them
}

type approval struct {
	_        [0]func() // not comparable: no equality code in floe.wasm
	decision Decision
	err      error
}

// approve calls the run's approver (E-5.3, E-5.4, E-5.5) with a copy of
// *tc. ok is false when the abort fired before the answer was known.
func (d *driver) approve(ctx context.Context, tc *omni.Message) (Decision, bool) {
	r := d.r
	ap := r.opts.Approve
	if ap == nil {
		return omni.DecisionDeny, true
	}
	var a approval
	if r.opts.ApproveHonorsCancel {
		a = d.callApprover(ctx, ap, tc)
	} else {
		ch := make(chan approval, 1)
		go func() { ch <- d.callApprover(ctx, ap, tc) }()
		select {
		case a = <-ch:
		case <-ctx.Done():
			return "", false
		}
	}
	if aborted(ctx) { // the abort wins every race
		return "", false
	}
	if a.err != nil {
		r.s.diag(DiagApprover, errf.Errorf("approver for %s: %w (treated as deny)", tc.Payload.ToolCallID, a.err))
		return omni.DecisionDeny, true
	}
	switch a.decision {
	case omni.DecisionAllow, omni.DecisionDeny, omni.DecisionForbidden:
		return a.decision, true
	}
	r.s.diag(DiagApprover, errf.Errorf("approver for %s returned %q, not allow|deny|forbidden (treated as deny)", tc.Payload.ToolCallID, string(a.decision)))
	return omni.DecisionDeny, true
}

// callApprover calls ap with a copy of *tc; a panic is an error (E-5.4).
func (d *driver) callApprover(ctx context.Context, ap Approver, tc *omni.Message) (a approval) {
	defer recoverTo(d.r.s, "approver", func(v any) {
		a = approval{err: errf.Errorf("approver panicked: %s", panicText(v))}
	})
	dec, err := ap(ctx, *tc)
	return approval{decision: dec, err: err}
}

// dispatch starts the tool for an allowed call concurrently (E-6.1). The
// tool's stamper starts from the driver's last stamp.
func (d *driver) dispatch(ctx context.Context, c *call) {
	tr := &toolRun{r: d.r, c: c, ctx: ctx, id: c.msg.Payload.ToolCallID, stamp: d.stamp}
	d.q.Register(&tr.prod)
	d.r.spawn(tr)
}
