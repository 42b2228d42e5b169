package engine

import (
	"context"
	"time"

	"github.com/floehq/floe/engine/omni"
)

// runLoop is one run (ENGINE.md §3, §4, §19), executed in the consumer's
// goroutine so that every run-level step follows the consumer (E-3.2).
func (r *run) runLoop(ctx context.Context, newMessages []omni.Message) {
	s := r.s
	s.ensureMeta(ctx) // E-3.6.1

	// E-3.6.2
	var input []omni.Message
	summary := s.summary
	if summary != nil {
		input = append(input, *summary)
	}
	input = append(input, s.carry...)
	input = append(input, newMessages...)
	s.summary, s.carry = nil, nil

	for i := range newMessages {
		s.stampMsg(&newMessages[i])
	}
	if aborted(ctx) { // E-3.6.3, E-9.7
		if summary != nil {
			s.traceWrite(ctx, *summary)
		}
		for _, m := range newMessages {
			s.traceWrite(ctx, m)
		}
		s.carry = input
		r.emit(ctx, omni.AbortMsg(ReasonUser))
		return
	}

	// E-3.6.4: tool_list_ready is streamed first; its Trace write waits.
	var toolList *omni.Message
	if s.toolListOwed {
		s.toolListOwed = false
		m := omni.ToolListReadyMsg(s.cfg.ToolList)
		s.stampMsg(&m)
		toolList = &m
		r.emitStreamOnly(m)
	}
	// E-3.6.5
	if summary != nil {
		s.traceWrite(ctx, *summary)
	}
	for _, m := range newMessages {
		s.traceWrite(ctx, m)
	}
	if toolList != nil {
		s.traceWrite(ctx, *toolList)
	}
	r.turnLoop(ctx, input)
}

// turnLoop is E-3.6.6 onwards.
func (r *run) turnLoop(ctx context.Context, next []omni.Message) {
	s := r.s
	turns := 0
	for {
		if aborted(ctx) { // E-9.10: just before the next request
			s.carry = next
			r.emit(ctx, omni.AbortMsg(ReasonUser))
			return
		}
		if s.cfg.MaxTurns > 0 && turns >= s.cfg.MaxTurns { // E-4.1, §12
			s.carry = next
			r.emitMaxTurns(ctx)
			return
		}
		turns++

		t, ok := r.turn(ctx, next)
		if !ok {
			return
		}
		mid := len(t.calls) > 0

		// E-4.3 compaction checkpoint.
		switch action, after := r.compactionCheckpoint(ctx, t, mid); action {
		case compactEnd:
			return
		case compactContinue:
			next = after
			continue
		}

		// E-4.4 input assembly.
		if aborted(ctx) { // E-9.10: nextInput as it stands, stash included
			s.carry = concat(s.carry, t.outputsInCallOrder())
			r.emit(ctx, omni.AbortMsg(ReasonUser))
			return
		}
		steer := r.deliverSteering(ctx)
		if !mid && len(steer) == 0 { // E-8.1 task end
			return
		}
		stash := s.carry
		s.carry = nil
		next = concat(stash, t.outputsInCallOrder(), steer)
	}
}

// turn runs the attempt loop of one turn (E-4.2, §10). It returns the
// completed attempt, or false when the run has ended (abort, auth,
// exhaustion).
func (r *run) turn(ctx context.Context, next []omni.Message) (*attempt, bool) {
	s := r.s
	maxRetries := s.maxReconnects()
	var failed []*attempt
	in := next
	for retries := 0; ; {
		t := r.runAttempt(ctx, in, retries, maxRetries, false)
		st := t.outcome.Status
		switch {
		case aborted(ctx) || st == omni.StatusAborted: // E-10.1.1, E-9.3
			s.carry = t.carryOver(in)
			r.emit(ctx, omni.AbortMsg(ReasonUser))
			return nil, false
		case st == omni.StatusAuth || (st == omni.StatusFailed && t.outcome.Permanent): // E-10.1.2-3
			s.carry = t.carryOver(in)
			r.emit(ctx, omni.AbortMsg(ReasonLLMErrorPrefix+orUnknown(t.outcome.ErrorMessage)))
			return nil, false
		case st == omni.StatusCompleted:
			return t, true
		}
		// E-10.2
		failed = append(failed, t)
		in = next
		if lines := retriedLines(failed); len(lines) > 0 {
			in = concat(next, []omni.Message{omni.UserText(block("turn_retried", lines))})
		}
		if retries >= maxRetries { // E-10.3
			s.carry = in
			r.emit(ctx, omni.AbortMsg(exhaustedReason(t.outcome, maxRetries)))
			return nil, false
		}
		retries++ // E-10.4
		if !r.sleep(ctx, s.delay(retries, t.outcome)) {
			s.carry = in // E-9.8
			r.emit(ctx, omni.AbortMsg(ReasonBackoff))
			return nil, false
		}
	}
}

func exhaustedReason(o Outcome, n int) string {
	switch o.Status {
	case omni.StatusMalformed:
		return ReasonMalformedPrefix + itoa(n) + " retries"
	case omni.StatusFailed:
		return ReasonRequestFailedPrefix + itoa(n) + " retries: " + orUnknown(o.ErrorMessage)
	}
	return ReasonReconnectFailedPrefix + itoa(n) + " retries"
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// sleep is a backoff wait through the Clock (E-1.4), which
// SkipReconnectWait may cut short (E-10.7). It reports false if the run was
// aborted first.
func (r *run) sleep(ctx context.Context, d time.Duration) bool {
	s := r.s
	wctx, wake := contextWithCancel(ctx)
	s.mu.Lock()
	s.backoff = wake
	s.mu.Unlock()
	s.clock.Sleep(wctx, d)
	s.mu.Lock()
	s.backoff = nil
	s.mu.Unlock()
	wake()
	return !aborted(ctx)
}

// emitMaxTurns emits the notice of E-12.2.
func (r *run) emitMaxTurns(ctx context.Context) {
	t := MaxTurnsText(r.s.cfg.MaxTurns)
	r.emit(ctx, omni.Partial(omni.PartialText, omni.EventStart, "", "", "", omni.StatusCompleted))
	r.emit(ctx, omni.Partial(omni.PartialText, omni.EventDelta, t, "", "", omni.StatusCompleted))
	r.emit(ctx, omni.Partial(omni.PartialText, omni.EventStop, "", "", "", omni.StatusFailed))
	r.emit(ctx, omni.AssistantText(t, omni.StatusFailed))
}

// deliverSteering drains the steering queue (E-11.4): each entry becomes a
// [user_steering] text followed by its other messages; each is emitted and
// the produced messages are returned for the next input.
func (r *run) deliverSteering(ctx context.Context) []omni.Message {
	return r.deliverEntries(ctx, r.s.takeSteering())
}

// takeSteering empties the steering queue and returns its entries: from
// then on they are being delivered, and Unsteer no longer finds them.
func (s *Session) takeSteering() []steerEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	entries := s.steering
	s.steering = nil
	return entries
}

// deliverEntries is deliverSteering of entries already taken.
func (r *run) deliverEntries(ctx context.Context, entries []steerEntry) []omni.Message {
	s := r.s
	var out []omni.Message
	for _, e := range entries {
		var texts []string
		var others []omni.Message
		for _, m := range s.foldImages(ctx, e.input) {
			if m.IsModel(omni.Text) && m.Payload.Role == omni.RoleUser {
				texts = append(texts, m.Payload.Text)
			} else {
				others = append(others, m)
			}
		}
		msgs := append([]omni.Message{omni.UserText(SteeringBlock(joinText(texts)))}, others...)
		for _, m := range msgs {
			s.stampMsg(&m)
			r.emit(ctx, m)
			out = append(out, m)
		}
	}
	return out
}

func (s *Session) steeringQueued() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.steering) > 0
}

func joinText(texts []string) string {
	n := 0
	for _, t := range texts {
		n += len(t) + 2
	}
	b := make([]byte, 0, n)
	for i, t := range texts {
		if i > 0 {
			b = append(b, '\n', '\n')
		}
		b = append(b, t...)
	}
	return string(b)
}

func concat(parts ...[]omni.Message) []omni.Message {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]omni.Message, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
