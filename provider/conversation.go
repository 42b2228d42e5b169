package provider

import (
	"context"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// Conversation is the state every adapter keeps: the conversation so far,
// the session's token totals and the tool call ids used.
type Conversation struct {
	History []omni.Message   // complete model messages, oldest first
	Session omni.TokenCounts // session totals, reported in each token_usage
	IDs     IDs
	Last    Usage // the last completed request's counts as stated
}

// Load replaces the conversation with history (engine.HistoryLoader).
func (c *Conversation) Load(history []omni.Message) {
	c.History = c.History[:0]
	c.add(history)
	c.IDs.Note(history)
}

func (c *Conversation) add(msgs []omni.Message) {
	for _, m := range msgs {
		if m.Type == omni.TypeModelMsg && !m.IsPartial() && len(m.Origin) == 0 {
			c.History = append(c.History, m)
		}
	}
}

// Request returns the messages a request sends: the history then input.
func (c *Conversation) Request(input []omni.Message) []omni.Message {
	out := make([]omni.Message, 0, len(c.History)+len(input))
	out = append(out, c.History...)
	for _, m := range input {
		if m.Type == omni.TypeModelMsg && !m.IsPartial() && len(m.Origin) == 0 {
			out = append(out, m)
		}
	}
	return out
}

// Run is the whole of one request, shared by the adapters: it streams req
// through t into d (whose events drive e), and on success closes e's open
// segments, emits token_usage last (request counts from usage(), session
// totals kept here) and commits input and the reply to the conversation.
// On failure nothing is committed.
func (c *Conversation) Run(ctx context.Context, t Transport, req *Request, api string, e *Emitter, d Decoder, input []omni.Message, usage func() (Usage, int64)) engine.Outcome {
	c.IDs.Begin()
	if f := Stream(ctx, t, req, api, e, d); f != nil {
		c.IDs.Rollback()
		return f.Outcome()
	}
	e.CloseAll(omni.StatusCompleted)
	u, total := usage()
	r := omni.TokenCounts{CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, Output: u.Output, Total: total}
	c.Session = c.Session.Add(r)
	e.emit(omni.TokenUsageMsg(c.Session, r))
	c.add(input)
	c.History = append(c.History, e.Out...)
	c.Last = u
	return engine.Outcome{Status: omni.StatusCompleted}
}

// Turns groups msgs into alternating turns of one role, in order: a turn
// is a run of messages of the same role. Tool outputs are user turns.
func Turns(msgs []omni.Message, fn func(role string, turn []omni.Message)) {
	for i := 0; i < len(msgs); {
		role := roleOf(&msgs[i])
		j := i + 1
		for j < len(msgs) && roleOf(&msgs[j]) == role {
			j++
		}
		fn(role, msgs[i:j])
		i = j
	}
}

func roleOf(m *omni.Message) string {
	switch m.Payload.Type {
	case omni.ToolCallOutput:
		return omni.RoleUser
	case omni.ToolCall, omni.Thinking, omni.InlineThinking:
		return omni.RoleAssistant
	}
	if m.Payload.Role == omni.RoleAssistant {
		return omni.RoleAssistant
	}
	return omni.RoleUser
}

// DataURL returns the data: URL of an inline_data message.
func DataURL(p *omni.Payload) string { return "data:" + p.MimeType + ";base64," + p.Data }

// ParseDataURL splits a base64 data: URL into its media type and data.
func ParseDataURL(u string) (mime, data string, ok bool) {
	const pre = "data:"
	if len(u) < len(pre) || u[:len(pre)] != pre {
		return "", "", false
	}
	rest := u[len(pre):]
	for i := 0; i < len(rest); i++ {
		if rest[i] == ',' {
			meta := rest[:i]
			const b64 = ";base64"
			if len(meta) < len(b64) || meta[len(meta)-len(b64):] != b64 {
				return "", "", false
			}
			return meta[:len(meta)-len(b64)], rest[i+1:], true
		}
	}
	return "", "", false
}
