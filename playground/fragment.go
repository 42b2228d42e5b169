package playground

import (
	"context"
	"strings"
	"time"

	"github.com/floehq/floe/engine/omni"
)

// producer is what the model and the tools share: a pace, a clock for
// timestamps and the emit function of the current call.
type producer struct {
	pace  Pace
	now   func() time.Time
	emit  func(omni.Message)
	delay time.Duration // between two deltas
}

func (p *producer) send(m omni.Message) {
	now := time.Now
	if p.now != nil {
		now = p.now
	}
	m.Timestamp = now().UTC().Format(omni.TimestampLayout)
	p.emit(m)
}

// fragment streams chunks as one fragment of partialType (PROTOCOL.md P-6):
// start, one delta per chunk, stop, then the complete message that
// complete builds from the concatenated body. When ctx is cancelled midway,
// the fragment streams the delta tail(body so far) if non-empty (tail may be
// nil), is closed with stop_reason "aborted", and the complete message
// carries the whole streamed body (P-7). It returns false when cancelled.
func (p *producer) fragment(ctx context.Context, partialType, callID, name string, chunks []string, tail func(body string) string, complete func(body, stopReason string) omni.Message) bool {
	return p.fragmentEnding(ctx, partialType, callID, name, chunks, tail, complete, omni.StatusCompleted)
}

// fragmentEnding is fragment whose stop and complete message carry final
// (such as "failed") when it is not cancelled.
func (p *producer) fragmentEnding(ctx context.Context, partialType, callID, name string, chunks []string, tail func(body string) string, complete func(body, stopReason string) omni.Message, final string) bool {
	p.send(omni.Partial(partialType, omni.EventStart, "", callID, name, ""))
	// The body grows in a buffer: adding each chunk to a string copied the
	// whole body at every chunk, quadratic in a long reply.
	var body strings.Builder
	for _, c := range chunks {
		if !p.pace.wait(ctx, p.delay) {
			if tail != nil {
				if t := tail(body.String()); t != "" {
					body.WriteString(t)
					p.send(omni.Partial(partialType, omni.EventDelta, t, callID, name, ""))
				}
			}
			p.send(omni.Partial(partialType, omni.EventStop, "", callID, name, omni.StatusAborted))
			p.send(complete(body.String(), omni.StatusAborted))
			return false
		}
		body.WriteString(c)
		p.send(omni.Partial(partialType, omni.EventDelta, c, callID, name, ""))
	}
	p.send(omni.Partial(partialType, omni.EventStop, "", callID, name, final))
	p.send(complete(body.String(), final))
	return true
}

// words splits s into chunks of one word each, keeping the spaces and line
// breaks with the word before them, so the chunks concatenate to s; a word
// over 12 bytes comes in pieces of whole characters (argChunks): Japanese
// or Chinese text, which has no spaces, streamed as one chunk.
func words(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if (s[i] == ' ' || s[i] == '\n') && (i+1 == len(s) || (s[i+1] != ' ' && s[i+1] != '\n')) {
			out = append(out, argChunks(s[start:i+1])...)
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, argChunks(s[start:])...)
	}
	return out
}

// lines splits s after every line break, keeping the breaks.
func lines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i+1])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}
