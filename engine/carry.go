package engine

import "github.com/floehq/floe/engine/omni"

// carryOver builds the carry-over of an attempt that ended the run (§9):
// case A when the model's output was committed, case B otherwise.
func (t *attempt) carryOver(in []omni.Message) []omni.Message {
	if t.outcome.Status == omni.StatusCompleted { // E-9.4 case A
		out := t.outputsInCallOrder()
		for _, c := range t.calls {
			if c.output == nil {
				out = append(out, omni.ToolOutput(c.msg.Payload.ToolCallID, InterruptedByUser, omni.StatusAborted))
			}
		}
		return out
	}
	// E-9.5 case B
	var out []omni.Message
	var lines []string
	for i := range in {
		m := &in[i]
		if m.IsModel(omni.ToolCallOutput) {
			out = append(out, *m)
		}
	}
	for i := range in {
		m := &in[i]
		if !m.IsModel(omni.Text) {
			continue
		}
		if inner, ok := unwrapBlock(m.Payload.Text); ok {
			if inner != "" {
				lines = append(lines, inner)
			}
			continue
		}
		lines = append(lines, lineUserInput(m.Payload.Text))
	}
	lines = append(lines, t.transcript()...)
	return append(out, omni.UserText(block("turn_aborted", lines)))
}

// transcript is the §18 transcription of one attempt: its segments, its real
// tool calls, then their outputs, in call order.
func (t *attempt) transcript() []string {
	var lines []string
	for i := range t.segments {
		lines = append(lines, lineSegment(&t.segments[i]))
	}
	for _, c := range t.calls {
		lines = append(lines, lineToolCall(&c.msg))
	}
	for _, c := range t.calls {
		if c.output != nil {
			lines = append(lines, lineToolOutput(c.output))
		}
	}
	return lines
}

// retriedLines transcribes every failed attempt of a turn (E-10.2).
func retriedLines(failed []*attempt) []string {
	var lines []string
	for _, t := range failed {
		lines = append(lines, t.transcript()...)
	}
	return lines
}
