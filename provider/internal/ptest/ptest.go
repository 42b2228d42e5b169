// Package ptest holds test helpers of the provider packages: an in-memory
// Transport that replays responses and records requests, and a collector
// of emitted messages that checks them as it goes.
package ptest

import (
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider"
)

// Reply is one canned response.
type Reply struct {
	Status int
	Header map[string]string
	Chunks []string // the body, one Read each
	Err    error    // returned by Read after the chunks (nil = io.EOF)
	Hang   bool     // after the chunks, Read blocks until ctx is cancelled
	Fail   error    // RoundTrip fails with this error
}

// SSE frames payloads as data: events.
func SSE(payloads ...string) []string {
	out := make([]string, len(payloads))
	for i, p := range payloads {
		out[i] = "data: " + p + "\n\n"
	}
	return out
}

// Transport replays Replies in order and records every request.
type Transport struct {
	mu       sync.Mutex
	Replies  []Reply
	Requests []*provider.Request
	Reading  chan struct{} // when set, closed once a hanging body starts blocking
}

// RoundTrip implements provider.Transport.
func (t *Transport) RoundTrip(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.Requests = append(t.Requests, req)
	if len(t.Replies) == 0 {
		return nil, io.ErrUnexpectedEOF
	}
	r := t.Replies[0]
	t.Replies = t.Replies[1:]
	if r.Fail != nil {
		return nil, r.Fail
	}
	if r.Status == 0 {
		r.Status = 200
	}
	return &provider.Response{Status: r.Status, Header: r.Header, Body: &body{ctx: ctx, r: r, reading: t.Reading}}, nil
}

// Body returns request i's body decoded as JSON.
func (t *Transport) Body(tb testing.TB, i int) map[string]any {
	tb.Helper()
	t.mu.Lock()
	defer t.mu.Unlock()
	if i >= len(t.Requests) {
		tb.Fatalf("request %d was not sent (%d were)", i, len(t.Requests))
	}
	var v map[string]any
	if err := json.Unmarshal(t.Requests[i].Body, &v); err != nil {
		tb.Fatalf("request %d body is not JSON: %v\n%s", i, err, t.Requests[i].Body)
	}
	return v
}

type body struct {
	ctx     context.Context
	r       Reply
	i       int
	reading chan struct{}
	closed  bool
}

func (b *body) Read(p []byte) (int, error) {
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	if b.i < len(b.r.Chunks) {
		c := b.r.Chunks[b.i]
		n := copy(p, c)
		if n < len(c) {
			b.r.Chunks[b.i] = c[n:]
		} else {
			b.i++
		}
		return n, nil
	}
	if b.r.Hang {
		if b.reading != nil {
			close(b.reading)
			b.reading = nil
		}
		<-b.ctx.Done()
		return 0, b.ctx.Err()
	}
	if b.r.Err != nil {
		return 0, b.r.Err
	}
	return 0, io.EOF
}

func (b *body) Close() error { b.closed = true; return nil }

// Collector records emitted messages, validating each and checking the
// streaming discipline.
type Collector struct {
	T    testing.TB
	Msgs []omni.Message
	d    omni.Discipline
}

// Emit is the emit callback.
func (c *Collector) Emit(m omni.Message) {
	c.T.Helper()
	if err := m.Validate(); err != nil {
		c.T.Errorf("invalid message %s: %v", m.AppendJSON(nil), err)
	}
	if err := c.d.Check(m); err != nil {
		c.T.Errorf("discipline: %v", err)
	}
	c.Msgs = append(c.Msgs, m)
}

// End checks that no fragment is left open.
func (c *Collector) End() {
	c.T.Helper()
	if err := c.d.End(); err != nil {
		c.T.Errorf("discipline at the end: %v", err)
	}
}

// Complete returns the complete model messages and events (no fragments),
// one line each as JSON, for comparisons.
func (c *Collector) Complete() []string {
	var out []string
	for _, m := range c.Msgs {
		if !m.IsPartial() {
			out = append(out, string(m.AppendJSON(nil)))
		}
	}
	return out
}

// Text concatenates the bodies of complete messages of payload type typ.
func (c *Collector) Text(typ string) string {
	var b strings.Builder
	for _, m := range c.Msgs {
		if m.IsModel(typ) {
			b.WriteString(m.Payload.Body())
		}
	}
	return b.String()
}

// Calls returns the complete tool calls.
func (c *Collector) Calls() []omni.Message {
	var out []omni.Message
	for _, m := range c.Msgs {
		if m.IsModel(omni.ToolCall) {
			out = append(out, m)
		}
	}
	return out
}

// Last returns the last message.
func (c *Collector) Last() omni.Message {
	if len(c.Msgs) == 0 {
		return omni.Message{}
	}
	return c.Msgs[len(c.Msgs)-1]
}

// Attachments is a user text, a PDF and a PNG as inline_data, the input of
// the adapters' tests of documents.
func Attachments() []omni.Message {
	inline := func(mime, data string) omni.Message {
		return omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.InlineData, Role: omni.RoleUser, Rest: &omni.Rest{MimeType: mime, Data: data}}}
	}
	return []omni.Message{omni.UserText("Read it."), inline("application/pdf", "JVBERi0="), inline("image/png", "iVBORw==")}
}

// MadeFiles is a history whose assistant turn holds files the model made
// (a PNG and a PDF as assistant inline_data, as floe/ai-sdk keeps a
// generated image) between its texts, then the user's next text.
func MadeFiles() []omni.Message {
	made := func(mime, data string) omni.Message {
		return omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.InlineData, Role: omni.RoleAssistant, StopReason: omni.StatusCompleted, Rest: &omni.Rest{MimeType: mime, Data: data}}}
	}
	return []omni.Message{omni.UserText("Draw a cat."), omni.AssistantText("Here:", omni.StatusCompleted), made("image/png", "iVBORw=="), made("application/pdf", "JVBERi0="),
		omni.AssistantText("Done.", omni.StatusCompleted), omni.UserText("Bluer.")}
}

// Screenshots returns a history of a prompt then n calls of a screenshot
// tool, the output of call i ("call_i", from 1) holding a PNG whose data:
// URL is size bytes (at least 40), its base64 starting "iVBORw0KGgo" and
// i in letters (its digits from "a" for 0: "bc-" for 12; see Shots).
func Screenshots(n, size int) []omni.Message {
	h := []omni.Message{omni.UserText("Look.")}
	for i := 1; i <= n; i++ {
		id := "call_" + strconv.Itoa(i)
		out := omni.ToolOutput(id, "shot "+strconv.Itoa(i), omni.StatusCompleted)
		u := "data:image/png;base64,iVBORw0KGgo" + shotMark(i)
		out.Payload.Edit().Images = []string{u + strings.Repeat("A", size-len(u))}
		h = append(h, omni.ToolCallMsg(id, "screenshot", "{}"), out)
	}
	return h
}

// shotMark marks the image of call i: its digits as letters, and "-".
func shotMark(i int) string {
	b := []byte(strconv.Itoa(i) + "-")
	for k := 0; k < len(b)-1; k++ {
		b[k] += 'a' - '0'
	}
	return string(b)
}

// Shots returns which images of Screenshots body sends, in its order:
// the call of each image it holds (12 for "iVBORw0KGgobc-"), 0 for each
// text "[image omitted: ".
func Shots(body []byte) []int {
	var out []int
	s := string(body)
	for {
		i, j := strings.Index(s, "iVBORw0KGgo"), strings.Index(s, "[image omitted: ")
		switch {
		case i < 0 && j < 0:
			return out
		case j < 0 || i >= 0 && i < j:
			s = s[i+len("iVBORw0KGgo"):]
			n := 0
			for k := 0; k < len(s) && s[k] != '-'; k++ {
				n = 10*n + int(s[k]-'a')
			}
			out = append(out, n)
		default:
			s = s[j+1:]
			out = append(out, 0)
		}
	}
}
