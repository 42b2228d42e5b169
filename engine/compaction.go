package engine

import (
	"context"

	"github.com/floehq/floe/engine/omni"
)

type compactAction int

const (
	compactNone     compactAction = iota // go on with input assembly
	compactEnd                           // the run ends
	compactContinue                      // top of the turn loop with the returned input
)

// compactionResult is the end of one summarize compaction.
type compactionResult struct {
	status    string // completed, failed or aborted
	summary   omni.Message
	committed bool // some attempt was committed by the old context
}

// compactionCheckpoint is E-4.3 / E-13.2 after a completed turn.
func (r *run) compactionCheckpoint(ctx context.Context, t *attempt, mid bool) (compactAction, []omni.Message) {
	s := r.s
	reason := s.compactionReason()
	if reason == "" {
		return compactNone, nil
	}
	if aborted(ctx) { // E-9.10
		s.carry = concat(s.carry, t.outputsInCallOrder())
		r.emit(ctx, omni.AbortMsg(ReasonUser))
		return compactEnd, nil
	}
	if s.cfg.Compaction.Mode == omni.ModeDiscard { // E-13.3
		if mid || s.steeringQueued() {
			return compactNone, nil
		}
		r.discard(ctx, reason)
		return compactEnd, nil
	}
	var lead []omni.Message
	if mid {
		lead = t.outputsInCallOrder()
	}
	res := r.summarize(ctx, reason, lead)
	switch res.status {
	case omni.StatusCompleted:
		// The steering that decides is taken as it decides: one withdrawn
		// (Unsteer) between the check and the delivery left a turn to make
		// with the summary alone, at a task boundary.
		taken := s.takeSteering()
		if !mid && len(taken) == 0 { // E-13.8
			s.summary = &res.summary
			return compactEnd, nil
		}
		s.traceWrite(ctx, res.summary) // E-13.9: performs the rotation
		if aborted(ctx) {
			// E-9.10: an abort taken with compaction_end delivers no
			// steering; the turn loop carries the summary over and ends.
			return compactContinue, []omni.Message{res.summary}
		}
		steer := r.deliverEntries(ctx, append(taken, s.takeSteering()...))
		return compactContinue, concat([]omni.Message{res.summary}, steer)
	case omni.StatusAborted:
		if !mid { // E-13.12: task boundary, aborted
			return compactEnd, nil
		}
		r.abortCompaction(ctx, t, res, ReasonCompactAbort)
		return compactEnd, nil
	default:
		if !mid { // task boundary, failed: input assembly goes on
			return compactNone, nil
		}
		r.abortCompaction(ctx, t, res, ReasonCompactFailed)
		return compactEnd, nil
	}
}

// abortCompaction ends a run whose mid-task compaction did not complete
// (E-13.12).
func (r *run) abortCompaction(ctx context.Context, t *attempt, res compactionResult, reason string) {
	if !res.committed {
		r.s.carry = append(r.s.carry, t.outputsInCallOrder()...)
	}
	r.emit(ctx, omni.AbortMsg(reason))
}

// compactionReason is the trigger check of E-13.2 ("" = none).
func (s *Session) compactionReason() string {
	c := s.cfg.Compaction
	if c == nil || s.cfg.NewLLM == nil {
		return ""
	}
	if c.MaxContextLength > 0 && s.lastRequestTotal >= c.MaxContextLength {
		return omni.ReasonContext
	}
	if c.MaxSessionTurns > 0 && s.sessionTurns >= c.MaxSessionTurns {
		return omni.ReasonTurns
	}
	return ""
}

// summarizeEnd is the compaction_end of a summarize compaction, with the
// last error when it failed. Kept out of line: inlined into each of
// summarize's exits, it made floe.wasm 4 kB (brotli) larger.
//
//go:noinline
func summarizeEnd(reason, status string, attempts int, lastErr string) omni.Message {
	if status != omni.StatusFailed {
		lastErr = ""
	}
	return omni.Event(omni.Payload{Type: omni.CompactionEnd, Rest: &omni.Rest{Reason: reason, Mode: omni.ModeSummarize, Status: status, Attempt: attempts, ErrorMessage: lastErr}})
}

func (s *Session) compactionBegin(reason, mode string) omni.Message {
	return omni.Event(omni.Payload{Type: omni.CompactionBegin, Rest: &omni.Rest{Reason: reason, Mode: mode, Context: s.lastRequestTotal, Turns: s.sessionTurns}})
}

// discard is E-13.3 once it runs: begin, end, a new context.
func (r *run) discard(ctx context.Context, reason string) {
	s := r.s
	r.emit(ctx, s.compactionBegin(reason, omni.ModeDiscard))
	r.emit(ctx, omni.Event(omni.Payload{Type: omni.CompactionEnd, Rest: &omni.Rest{Reason: reason, Mode: omni.ModeDiscard, Status: omni.StatusCompleted}}))
	s.newContext()
}

// newContext is E-13.10. A resumed history not yet handed to the old
// context (a discard before the first request) is not the new one's.
func (s *Session) newContext() {
	s.llm = s.cfg.NewLLM(s.sessionTokens)
	s.history = nil
	s.sessionTurns = 0
	s.lastRequestTotal = 0
	s.rotatePending = true
	s.compacted = true
}

// summarize runs a summarize compaction on the current context (E-13.4 –
// E-13.7). lead is sent before the prompt (tool outputs mid-task, the
// carry-over for a manual compaction).
func (r *run) summarize(ctx context.Context, reason string, lead []omni.Message) compactionResult {
	s := r.s
	c := s.cfg.Compaction
	r.emit(ctx, s.compactionBegin(reason, omni.ModeSummarize))
	prompt := omni.UserText(c.Prompt)
	s.stampMsg(&prompt)
	s.traceWrite(ctx, prompt)

	base := concat(lead, []omni.Message{prompt})
	in := base
	maxRetries := s.compactionMaxReconnects()
	var (
		attempts, retries int
		lastErr           string
		repairs           []omni.Message // sent but not yet committed
		res               compactionResult
	)
	end := func(status string) compactionResult {
		r.emit(ctx, summarizeEnd(reason, status, attempts, lastErr))
		if status != omni.StatusCompleted && len(repairs) > 0 {
			s.carry = concat(repairs, s.carry)
		}
		res.status = status
		return res
	}
	for {
		if aborted(ctx) {
			return end(omni.StatusAborted)
		}
		attempts++
		t := r.runAttempt(ctx, in, retries, maxRetries, true)
		if t.usage != nil { // E-13.5: streamed after the request, already traced
			r.emitStreamOnly(*t.usage)
		}
		st := t.outcome.Status
		// The abort wins, but only after a completed attempt's bookkeeping:
		// the old context committed it (E-16.6), so what it absorbed is not
		// carried over again (E-13.12, E-13.13) and its tool calls get their
		// repairs (E-13.7).
		stopped := aborted(ctx) || st == omni.StatusAborted
		if !stopped && (st == omni.StatusAuth || (st == omni.StatusFailed && t.outcome.Permanent)) { // E-10.8
			lastErr = t.outcome.ErrorMessage
			return end(omni.StatusFailed)
		}
		unusable := false
		if st == omni.StatusCompleted {
			res.committed = true
			repairs = nil
			summary := ExtractSummary(string(t.text))
			if len(t.calls) == 0 && summary != "" { // E-13.6
				if stopped {
					return end(omni.StatusAborted)
				}
				end(omni.StatusCompleted)
				s.newContext()
				res.summary = omni.UserText(ContextSummary(summary))
				s.stampMsg(&res.summary)
				return res
			}
			unusable = true
			base = []omni.Message{prompt}
			for _, c := range t.calls {
				rep := omni.ToolOutput(c.msg.Payload.ToolCallID, CompactionRepair, omni.StatusFailed)
				s.stampMsg(&rep)
				s.traceWrite(ctx, rep)
				repairs = append(repairs, rep)
			}
			lastErr = errSummaryEmpty
			if len(t.calls) > 0 {
				lastErr = errSummaryToolCalls
			}
		} else {
			lastErr = t.outcome.ErrorMessage
		}
		if stopped {
			return end(omni.StatusAborted)
		}
		if retries >= maxRetries {
			return end(omni.StatusFailed)
		}
		retries++
		if !r.sleep(ctx, s.delay(retries, t.outcome)) {
			return end(omni.StatusAborted)
		}
		if unusable {
			g := omni.UserText(CompactionGuidance)
			s.stampMsg(&g)
			s.traceWrite(ctx, g)
			in = concat(repairs, []omni.Message{g}, base)
		}
	}
}

// Compact runs a manual compaction between runs (E-13.13). It is a no-op
// (an empty stream) when compaction is unavailable or the context has no
// completed turn. Like a run, it holds the session busy until consumed.
func (s *Session) Compact(ctx context.Context) (*Run, error) {
	if err := s.reserve(ctx, false); err != nil {
		return nil, err
	}
	return newRun(ctx, s, RunOptions{}, func(ctx context.Context, r *run) { r.manualCompaction(ctx) }), nil
}

func (r *run) manualCompaction(ctx context.Context) {
	s := r.s
	if s.compactability(s.sessionTurns, s.compacted) != CompactOK {
		return
	}
	s.ensureMeta(ctx)
	if s.cfg.Compaction.Mode == omni.ModeDiscard {
		kept := s.carry[:0:0]
		for _, m := range s.carry {
			if !m.IsModel(omni.ToolCallOutput) {
				kept = append(kept, m)
			}
		}
		s.carry = kept
		r.discard(ctx, omni.ReasonManual)
		return
	}
	saved := s.carry
	s.carry = nil
	res := r.summarize(ctx, omni.ReasonManual, saved)
	if res.status == omni.StatusCompleted {
		s.summary = &res.summary
	}
	if !res.committed {
		s.carry = concat(s.carry, saved)
	}
}
