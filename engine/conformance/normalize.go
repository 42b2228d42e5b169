package conformance

import (
	"slices"
	"strings"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// Normalization for the resume check: what the engine held is rewritten
// into what a resume can rebuild from the Trace, one named rule per known,
// documented difference. Each rule touches only the messages it names, in
// the exact form ENGINE.md gives them, and the engine-built ones only when
// the scenario did not supply them itself (heldSession.given); everything
// else is compared as is, so an unexplained difference fails the scenario.
//
// Per message of an input list (heldSession.expand):
//
//   - ruleRetriedBlockLost: an engine-built [turn_retried] text is dropped.
//   - ruleAbortedInputRestored: an engine-built [turn_aborted] text, with
//     the tool outputs the engine carried ahead of it, becomes the input of
//     the aborted request it transcribes (itself normalized).
//   - ruleCompactionTextSentOnce: a compaction prompt or guidance text that
//     an earlier request already carried is dropped.
//   - ruleSupersededOutputsReplayed: the earlier complete outputs a tool
//     emitted for the same call come back in front of the one sent.
//   - ruleResumePlaceholder: an engine-built case-A placeholder gets the
//     resume placeholder text.
//
// Per list: ruleOutputsInTraceOrder, then ruleHistoryPlaceholdersFirst (a
// committed request's input) or ruleCarryPlaceholdersLast (carry-over).
//
// Timestamps are ignored by the comparison itself (valueOf).

// heldSession is what the runner knows of one session at the end of a
// scenario: every LLM call in order, which messages the runner (not the
// engine) made, what the scripted tools emitted, and the compaction prompt.
type heldSession struct {
	calls            []*llmCall
	given            func(m *omni.Message) bool // true: the scenario handed m to the engine
	toolOutputs      map[string][]omni.Message  // complete outputs scripted tools emitted, by call id
	compactionPrompt *string                    // nil: the session has no compaction

	fired map[string]int // rule name → times it changed something (nil: not counted)
}

// note counts one application of a rule.
func (h *heldSession) note(rule string) {
	if h.fired != nil {
		h.fired[rule]++
	}
}

// synthetic reports whether m is a user text or tool output the engine
// built itself (not one the scenario supplied).
func (h *heldSession) synthetic(m *omni.Message) bool {
	return m.Type == omni.TypeModelMsg && !m.IsPartial() && m.Payload.Role == omni.RoleUser && !h.given(m)
}

// isEngineBlock reports whether m is a user text in the exact square-bracket
// form the engine builds for tag (§18 "Blocks").
func (h *heldSession) isEngineBlock(m *omni.Message, tag string) bool {
	if !h.synthetic(m) || !m.IsModel(omni.Text) || m.Payload.StopReason != omni.StatusCompleted {
		return false
	}
	openTag, closeTag := "["+tag+"]", "[/"+tag+"]"
	t := m.Payload.Text
	return t == openTag+"\n"+closeTag || (strings.HasPrefix(t, openTag+"\n") && strings.HasSuffix(t, "\n"+closeTag))
}

// isCaseAPlaceholder reports whether m is the engine's case-A placeholder
// (E-9.4, §18 "case-A placeholder").
func (h *heldSession) isCaseAPlaceholder(m *omni.Message) bool {
	return h.synthetic(m) && m.IsModel(omni.ToolCallOutput) &&
		m.Payload.Output == engine.InterruptedByUser && m.Payload.StopReason == omni.StatusAborted
}

// isResumePlaceholder reports whether m is a placeholder after
// ruleResumePlaceholder.
func isResumePlaceholder(m *omni.Message) bool {
	return m.IsModel(omni.ToolCallOutput) && m.Payload.Output == engine.InterruptedByExit &&
		m.Payload.StopReason == omni.StatusAborted
}

// ruleRetriedBlockLost: ENGINE.md E-10.6 "[turn_retried] is sent to the
// model only; never streamed, never traced"; interop README "Replay cannot
// rebuild synthetic carry-over: [turn_aborted]/[turn_retried] are lost
// (04, 05)". The failed attempts' request is dropped by replay and its
// input put back (E-17.3), which is the retry input without the block.
func (h *heldSession) ruleRetriedBlockLost(m *omni.Message) bool {
	return h.isEngineBlock(m, "turn_retried")
}

// ruleAbortedInputRestored: ENGINE.md E-9.6 "Carry-over is never streamed
// and never written to the Trace … resume rebuilds carry-over from them
// (§17)"; E-17.3 "request_end not completed: drop the request: put back
// snapshot … in front of pending"; interop README "[turn_aborted] … lost
// (04)". The case-B carry-over (E-9.5) is "[every tool_call_output message
// of the attempt input, in order] ++ [userText(turnAbortedBlock)]"; replay
// instead puts the aborted request's whole input back verbatim (texts in
// their place, the images E-9.5 drops included). msgs[i] is the block and
// at the index of the call msgs was sent with (len(calls) for the
// carry-over): the aborted request is the call just before. It returns how
// many messages before i the rule consumes and their replacement, or
// ok=false when the messages are not exactly that carry-over (then nothing
// is rewritten and the comparison decides).
func (h *heldSession) ruleAbortedInputRestored(msgs []omni.Message, i, at int) (consumed int, repl []omni.Message, ok bool) {
	before := at - 1
	if !h.isEngineBlock(&msgs[i], "turn_aborted") || before < 0 || before >= len(h.calls) {
		return 0, nil, false
	}
	aborted := h.calls[before]
	if !aborted.ended || aborted.outcome.Status == omni.StatusCompleted {
		return 0, nil, false
	}
	var outs []omni.Message
	for k := range aborted.input {
		if aborted.input[k].IsModel(omni.ToolCallOutput) {
			outs = append(outs, aborted.input[k])
		}
	}
	if len(outs) > i {
		return 0, nil, false
	}
	for k := range outs {
		if !sameMessage(&outs[k], &msgs[i-len(outs)+k]) {
			return 0, nil, false
		}
	}
	return len(outs), h.expand(aborted.input, before), true
}

// ruleCompactionTextSentOnce: ENGINE.md E-13.4 "Trace-write the compaction
// prompt" (once per compaction) and E-13.7 (the guidance is "the
// Trace-written user text of §18"), while E-13.7 resends them: "input
// resent unchanged", "the resend base shrinks to [prompt]". Replay sees the
// one written copy: it enters history with the first request that carried
// it if that request committed, and E-17.3 "put back snapshot (inside a
// compaction span only its tool_call_outputs)" discards it if it did not.
// Either way a later request that resends the same message (same timestamp
// and content) does not carry it again.
func (h *heldSession) ruleCompactionTextSentOnce(m *omni.Message, at int) bool {
	if !h.synthetic(m) || !m.IsModel(omni.Text) {
		return false
	}
	if t := m.Payload.Text; t != engine.CompactionGuidance && (h.compactionPrompt == nil || t != *h.compactionPrompt) {
		return false
	}
	for _, c := range h.calls[:min(at, len(h.calls))] {
		for k := range c.input {
			if sameMessage(m, &c.input[k]) {
				return true
			}
		}
	}
	return false
}

// ruleSupersededOutputsReplayed: ENGINE.md E-6.7 "If a misbehaving tool
// emits several, all are streamed and traced and the last one is used for
// the next input"; E-17.3 "eligible := snapshot minus every
// tool_call_output whose id is not committed or already answered" — ids
// become answered only after the request, so replay keeps every traced
// output of the call. m is an output the engine sent; the result is the
// outputs the tool emitted for the same call up to and including m.
func (h *heldSession) ruleSupersededOutputsReplayed(m *omni.Message) []omni.Message {
	if !m.IsModel(omni.ToolCallOutput) || !h.given(m) {
		return nil
	}
	emitted := h.toolOutputs[m.Payload.ToolCallID]
	for k := range emitted {
		if sameMessage(&emitted[k], m) {
			return emitted[:k+1]
		}
	}
	return nil
}

// ruleResumePlaceholder: ENGINE.md E-9.6 (carry-over is never traced) and
// E-17.3 "append to history a placeholder tool_call_output{output:
// "[interrupted: process exited before the tool finished]", stop_reason:
// "aborted"}", "carry-over = pending ++ placeholders (same text)"; interop
// README "Placeholders say "process exited…"". The engine's case-A
// placeholder (E-9.4) is rebuilt with the resume text.
func (h *heldSession) ruleResumePlaceholder(m omni.Message) omni.Message {
	if !h.isCaseAPlaceholder(&m) {
		return m
	}
	p := omni.ToolOutput(m.Payload.ToolCallID, engine.InterruptedByExit, omni.StatusAborted)
	p.Timestamp = m.Timestamp
	return p
}

// ruleOutputsInTraceOrder: ENGINE.md E-7.4 sends outputs "in call order
// … regardless of completion order", but E-16.2 "the Trace order of
// streamed messages equals their stream order", E-7.1 "Tool outputs
// therefore arrive in completion order", and E-17.3 builds a request's
// input from pending, the user-side records in Trace order; interop
// fixture 01 (.resume.json history: B's output before A's). The tool
// outputs of msgs (resume placeholders aside) are put, in the slots they
// occupy, in the order they were emitted: the order of their timestamps,
// which the injected clock makes strictly increasing per stamp.
func ruleOutputsInTraceOrder(msgs []omni.Message) []omni.Message {
	var slots []int
	var outs []omni.Message
	for i := range msgs {
		if msgs[i].IsModel(omni.ToolCallOutput) && !isResumePlaceholder(&msgs[i]) {
			slots = append(slots, i)
			outs = append(outs, msgs[i])
		}
	}
	slices.SortStableFunc(outs, func(a, b omni.Message) int { return strings.Compare(a.Timestamp, b.Timestamp) })
	out := slices.Clone(msgs)
	for k, i := range slots {
		out[i] = outs[k]
	}
	return out
}

// ruleHistoryPlaceholdersFirst: ENGINE.md E-17.3 "request_end completed: …
// for each committed, unanswered id absent from eligible, append to history
// a placeholder … append eligible and outputs to history"; interop README
// "Placeholders … come before the request's other inputs (03: Y's
// placeholder precedes X's real output)". E-9.4 puts them after the real
// outputs.
func ruleHistoryPlaceholdersFirst(input []omni.Message) []omni.Message {
	ph, rest := splitPlaceholders(input)
	return append(ph, rest...)
}

// ruleCarryPlaceholdersLast: ENGINE.md E-17.3 "carry-over = pending ++
// placeholders (same text) for every committed id that has no output
// anywhere". The engine's carry-over keeps them where case A put them,
// before any input a later pre-request abort appended (E-9.7).
func ruleCarryPlaceholdersLast(carry []omni.Message) []omni.Message {
	ph, rest := splitPlaceholders(carry)
	return append(rest, ph...)
}

func splitPlaceholders(msgs []omni.Message) (ph, rest []omni.Message) {
	ph, rest = []omni.Message{}, []omni.Message{}
	for _, m := range msgs {
		if isResumePlaceholder(&m) {
			ph = append(ph, m)
		} else {
			rest = append(rest, m)
		}
	}
	return ph, rest
}

// expand applies the per-message rules to msgs, the input of call at
// (len(calls): the carry-over, built after the last call).
func (h *heldSession) expand(msgs []omni.Message, at int) []omni.Message {
	out := []omni.Message{}
	marks := make([]int, len(msgs)) // len(out) before msgs[i]
	for i := range msgs {
		marks[i] = len(out)
		m := &msgs[i]
		if h.ruleRetriedBlockLost(m) {
			h.note("ruleRetriedBlockLost")
			continue
		}
		if h.ruleCompactionTextSentOnce(m, at) {
			h.note("ruleCompactionTextSentOnce")
			continue
		}
		if n, repl, ok := h.ruleAbortedInputRestored(msgs, i, at); ok {
			h.note("ruleAbortedInputRestored")
			out = append(out[:marks[i-n]], repl...)
			continue
		}
		if all := h.ruleSupersededOutputsReplayed(m); len(all) > 1 {
			h.note("ruleSupersededOutputsReplayed")
			out = append(out, all[:len(all)-1]...)
		}
		if h.isCaseAPlaceholder(m) {
			h.note("ruleResumePlaceholder")
		}
		out = append(out, h.ruleResumePlaceholder(*m))
	}
	return out
}

// ordered applies a list rule and counts it when it changed the order.
func (h *heldSession) ordered(rule string, f func([]omni.Message) []omni.Message, msgs []omni.Message) []omni.Message {
	out := f(msgs)
	for i := range out {
		if out[i].Timestamp != msgs[i].Timestamp {
			h.note(rule)
			break
		}
	}
	return out
}

// normalizedHistory is what the engine's current LLM context holds
// committed, in the form a resume rebuilds it: for each request of context
// ctxNum that completed (E-16.6), its normalized input followed by the
// complete model messages the LLM emitted (E-17.3: events such as
// token_usage and partials never become history).
func (h *heldSession) normalizedHistory(ctxNum int) []omni.Message {
	hist := []omni.Message{}
	for k, c := range h.calls {
		if c.context != ctxNum || !c.ended || c.outcome.Status != omni.StatusCompleted {
			continue
		}
		in := h.ordered("ruleOutputsInTraceOrder", ruleOutputsInTraceOrder, h.expand(c.input, k))
		hist = append(hist, h.ordered("ruleHistoryPlaceholdersFirst", ruleHistoryPlaceholdersFirst, in)...)
		for i := range c.emitted {
			if m := &c.emitted[i]; m.Type == omni.TypeModelMsg && !m.IsPartial() && len(m.Origin) == 0 {
				hist = append(hist, *m)
			}
		}
	}
	return hist
}

// normalizedCarry is the engine's pending carry-over in the form a resume
// rebuilds it.
func (h *heldSession) normalizedCarry(carry []omni.Message) []omni.Message {
	in := h.ordered("ruleOutputsInTraceOrder", ruleOutputsInTraceOrder, h.expand(carry, len(h.calls)))
	return h.ordered("ruleCarryPlaceholdersLast", ruleCarryPlaceholdersLast, in)
}

// sameMessage is JSON equality of two messages, timestamps included.
func sameMessage(a, b *omni.Message) bool {
	return a.Timestamp == b.Timestamp && jsonEqual(valueOf(*a), valueOf(*b))
}
