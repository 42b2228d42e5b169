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
	seen := callIDs{}
	for i := range p.Records {
		if err := seen.check(&p.Records[i], p.line(i)); err != nil {
			return err
		}
	}
	return nil
}

// callIDs is CheckCalls' walk, one record at a time: the line of each
// tool_call_id of the open request.
type callIDs map[string]int

// check checks m, the record of line line.
func (seen callIDs) check(m *omni.Message, line int) error {
	switch {
	case m.IsEvent(omni.RequestBegin):
		clear(seen)
	case m.IsModel(omni.ToolCall) || m.IsModel(omni.ToolCallOutput):
		id := m.Payload.ToolCallID
		if id == "" {
			return errf.Errorf("line %d: %w: %s without tool_call_id", line, ErrInvalid, m.Payload.Type)
		}
		if !m.IsModel(omni.ToolCall) {
			return nil
		}
		if at, ok := seen[id]; ok {
			return errf.Errorf("line %d: %w: tool_call %q repeats the tool_call_id of line %d in one request", line, ErrInvalid, id, at)
		}
		seen[id] = line
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

// lineReader parses a Trace file handed over a part at a time as ReadFile
// parses it whole: record receives each record that decodes, with its line
// number, when its line ends (a Message it must not keep: it is reused),
// and an error it returns ends the read. It holds one line at most, the
// one a part ended in.
type lineReader struct {
	record func(m *omni.Message, line int) error

	m       omni.Message
	line    []byte // the start of a line an earlier part began
	lines   int    // the lines ended
	size    int
	bad     SkippedLine // the last non-blank line so far when it did not decode: a torn tail unless another follows
	skipped []SkippedLine
}

// write reads the next part of the file.
func (r *lineReader) write(part []byte) error {
	if r.size += len(part); r.size > MaxFileBytes {
		return errf.Errorf("trace: read: %w: over %d bytes", ErrTooLarge, MaxFileBytes)
	}
	for {
		i := bytes.IndexByte(part, '\n')
		if i < 0 {
			r.line = append(r.line, part...)
			return nil
		}
		line := part[:i]
		if len(r.line) > 0 {
			r.line = append(r.line, line...)
			line = r.line
		}
		part = part[i+1:]
		err := r.parse(line)
		r.line = r.line[:0]
		if err != nil {
			return err
		}
	}
}

// end reads the file's last line and reports whether it was torn.
func (r *lineReader) end() (torn bool, err error) {
	err = r.parse(r.line)
	r.line = nil
	return r.bad.Err != nil, err
}

func (r *lineReader) parse(line []byte) error {
	r.lines++
	line = trimJS(line)
	if len(line) == 0 {
		return nil
	}
	if r.bad.Err != nil { // not the last non-blank line: skipped
		r.skipped = append(r.skipped, r.bad)
		r.bad = SkippedLine{}
	}
	if err := r.m.UnmarshalJSON(line); err != nil {
		r.bad = SkippedLine{Line: r.lines, Err: err}
		return nil
	}
	return r.record(&r.m, r.lines)
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
