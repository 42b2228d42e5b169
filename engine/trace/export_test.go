package trace

import (
	"time"

	"github.com/floehq/floe/engine/omni"
)

// ReadInParts reads parts, the pieces of one file in order, as Resume
// reads a file: each record checked as CheckCalls checks it and replayed
// (at now) as its line ends. It returns the records that came, the file's
// accounting, the replay, and what ended the read early.
func ReadInParts(parts [][]byte, now time.Time) (p Parsed, r Replayed, err error) {
	rp := newReplay(now)
	seen := callIDs{}
	lr := lineReader{record: func(m *omni.Message, line int) error {
		if err := seen.check(m, line); err != nil {
			return err
		}
		p.Records, p.Lines = append(p.Records, *m), append(p.Lines, line)
		rp.add(m)
		return nil
	}}
	for _, part := range parts {
		if err = lr.write(part); err != nil {
			return p, r, err
		}
	}
	p.TornTail, err = lr.end()
	p.Skipped = lr.skipped
	return p, rp.done(), err
}
