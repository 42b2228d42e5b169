package trace

import (
	"bytes"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/internal/errf"
	"github.com/floehq/floe/internal/jsspace"
)

// Parsed is the result of reading one Trace file (PROTOCOL.md P-12).
type Parsed struct {
	Records []omni.Message
	Lines   []int // the 1-based line number of each record
	// Skipped lists the malformed lines that were skipped, other than a torn
	// last line, in file order.
	Skipped []SkippedLine
	// TornTail reports that the last non-blank line failed to parse and was
	// ignored: the crash artifact of an interrupted append.
	TornTail bool
}

// SkippedLine is one malformed line that ReadFile skipped.
type SkippedLine struct {
	Line int   // 1-based line number
	Err  error // why it did not decode
}

// SkippedLines returns the 1-based numbers of the skipped lines.
func (p *Parsed) SkippedLines() []int {
	out := make([]int, len(p.Skipped))
	for i, s := range p.Skipped {
		out[i] = s.Line
	}
	return out
}

// CheckCalls reports, wrapping ErrInvalid and naming the line, the first
// record that a provider would refuse in every later request of the
// session: a tool_call or tool_call_output without tool_call_id, or a
// tool_call that repeats a tool_call_id of its request (the records since
// the last request_begin). Import and Resume refuse such a file.
func (p *Parsed) CheckCalls() error {
	seen := map[string]int{}
	for i := range p.Records {
		m := &p.Records[i]
		switch {
		case m.IsEvent(omni.RequestBegin):
			clear(seen)
		case m.IsModel(omni.ToolCall) || m.IsModel(omni.ToolCallOutput):
			id := m.Payload.ToolCallID
			if id == "" {
				return errf.Errorf("line %d: %w: %s without tool_call_id", p.line(i), ErrInvalid, m.Payload.Type)
			}
			if !m.IsModel(omni.ToolCall) {
				continue
			}
			if at, ok := seen[id]; ok {
				return errf.Errorf("line %d: %w: tool_call %q repeats the tool_call_id of line %d in one request", p.line(i), ErrInvalid, id, at)
			}
			seen[id] = p.line(i)
		}
	}
	return nil
}

func (p *Parsed) line(i int) int {
	if i < len(p.Lines) {
		return p.Lines[i]
	}
	return 0
}

// Strict returns an error naming the first skipped line, or nil when no
// line other than a torn tail was skipped. An importer that refuses
// mid-file corruption (P-12) checks it.
func (p *Parsed) Strict() error {
	if len(p.Skipped) == 0 {
		return nil
	}
	s := p.Skipped[0]
	return errf.Errorf("trace: line %d: %w (%d malformed line(s) in all)", s.Line, s.Err, len(p.Skipped))
}

// ReadFile parses the bytes of one Trace file tolerantly (PROTOCOL.md P-12):
// blank lines are ignored; a last non-blank line that fails to parse is a
// torn tail, ignored and reported in TornTail; any other malformed line is
// skipped and listed in Skipped; every record that decodes is kept. A line
// is trimmed of JavaScript whitespace before decoding, as the reference
// reader does. ReadFile refuses only data over MaxFileBytes.
func ReadFile(data []byte) (Parsed, error) {
	if len(data) > MaxFileBytes {
		return Parsed{}, errf.Errorf("trace: read: %w: %d bytes", ErrTooLarge, len(data))
	}
	// At most one record a line and none under 32 bytes: the slices are
	// made once (appended to from nil, they grew a quarter at a time, five
	// times the final size allocated in all).
	n := min(bytes.Count(data, []byte{'\n'}), len(data)>>5) + 1
	p := Parsed{Records: make([]omni.Message, 0, n), Lines: make([]int, 0, n)}
	last := lastNonBlank(data)
	lineNo := 0
	for line := range bytes.SplitSeq(data, []byte{'\n'}) {
		lineNo++
		line = trimJS(line)
		if len(line) == 0 {
			continue
		}
		m, err := omni.Decode(line)
		switch {
		case err == nil:
			p.Records = append(p.Records, m)
			p.Lines = append(p.Lines, lineNo)
		case lineNo == last:
			p.TornTail = true
		default:
			p.Skipped = append(p.Skipped, SkippedLine{Line: lineNo, Err: err})
		}
	}
	return p, nil
}

// lastNonBlank returns the 1-based number of the last non-blank line, or 0.
func lastNonBlank(data []byte) int {
	lines := bytes.Count(data, []byte{'\n'}) + 1
	for end := len(data); ; lines-- {
		start := bytes.LastIndexByte(data[:end], '\n') + 1
		if len(trimJS(data[start:end])) > 0 {
			return lines
		}
		if start == 0 {
			return 0
		}
		end = start - 1
	}
}

// trimJS trims what JavaScript's String.prototype.trim trims: WhiteSpace
// (including U+FEFF and every Zs) and LineTerminator code points.
func trimJS(b []byte) []byte { return bytes.TrimFunc(b, jsspace.Is) }
