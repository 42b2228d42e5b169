// Package transporttest is a small HTTP client of the session API for
// tests: requests that fail the test on a transport error, and SSE
// connections read incrementally on their own goroutine.
package transporttest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/floehq/floe/transport"
)

// Safety bounds how long Next waits before it fails the test naming what
// hung; it never orders anything.
var Safety = 30 * time.Second

// Client talks to one server.
type Client struct {
	T     testing.TB
	URL   string // base URL without a trailing slash
	Token string
	HTTP  *http.Client // nil = a client of its own (no shared connection pool)
}

func (c *Client) http() *http.Client {
	if c.HTTP == nil {
		c.HTTP = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	}
	return c.HTTP
}

// Do sends a request with an optional JSON body (and headers as name,
// value pairs) and returns status and body.
func (c *Client) Do(method, path, body string, hdr ...string) (int, []byte) {
	c.T.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, c.URL+path, rd)
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.http().Do(req)
	if err != nil {
		c.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// Must is Do that fails the test unless the status is want.
func (c *Client) Must(want int, method, path, body string) []byte {
	c.T.Helper()
	got, b := c.Do(method, path, body)
	if got != want {
		c.T.Fatalf("%s %s %s: %d %s, want %d", method, path, body, got, b, want)
	}
	return b
}

// Create makes a session with the approval mode and returns its id.
func (c *Client) Create(mode string) string {
	c.T.Helper()
	var out struct{ ID string }
	json.Unmarshal(c.Must(201, "POST", "/api/sessions", `{"approvalMode":"`+mode+`"}`), &out)
	return out.ID
}

// Stream is one SSE connection.
type Stream struct {
	t      testing.TB
	events chan transport.Received
	err    error
	cancel context.CancelFunc
	Last   string // id of the last event taken
}

// Open connects to path, sending Last-Event-ID when resume is set.
func (c *Client) Open(path, lastID string, resume bool) *Stream {
	c.T.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", c.URL+path, nil)
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if resume {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := c.http().Do(req)
	if err != nil {
		cancel()
		c.T.Fatalf("GET %s: %v", path, err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		cancel()
		c.T.Fatalf("GET %s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	s := &Stream{t: c.T, events: make(chan transport.Received, 1<<16), cancel: cancel}
	go func() {
		defer resp.Body.Close()
		rd := transport.NewReader(resp.Body)
		for {
			ev, err := rd.Next()
			if err != nil {
				s.err = err
				close(s.events)
				return
			}
			if ev.Comment == "" {
				s.events <- ev
			}
		}
	}()
	return s
}

// Close disconnects.
func (s *Stream) Close() { s.cancel() }

// Next returns the next event; ok is false when the stream ended.
func (s *Stream) Next() (transport.Received, bool) {
	s.t.Helper()
	select {
	case ev, ok := <-s.events:
		if ok {
			s.Last = ev.ID
		}
		return ev, ok
	case <-time.After(Safety):
		s.t.Fatalf("no event within %v after %s", Safety, s.Last)
	}
	return transport.Received{}, false
}

// MustNext is Next that fails the test at the end of the stream.
func (s *Stream) MustNext() transport.Received {
	s.t.Helper()
	ev, ok := s.Next()
	if !ok {
		s.t.Fatalf("stream ended after %s: %v", s.Last, s.err)
	}
	return ev
}

// Until reads events until pred holds and returns them, the matching last.
func (s *Stream) Until(pred func(transport.Received) bool) []transport.Received {
	s.t.Helper()
	var out []transport.Received
	for {
		ev := s.MustNext()
		out = append(out, ev)
		if pred(ev) {
			return out
		}
	}
}

// ServerEvent matches a server event of the type.
func ServerEvent(typ string) func(transport.Received) bool {
	return func(ev transport.Received) bool {
		return ev.Name == transport.EventServer && strings.Contains(ev.Data, `{"type":"`+typ+`"`)
	}
}

// TaskState matches a task_state event of the state.
func TaskState(state string) func(transport.Received) bool {
	return func(ev transport.Received) bool {
		return ev.Name == transport.EventServer && strings.HasPrefix(ev.Data, `{"type":"task_state","state":"`+state+`"`)
	}
}

// ToolCallID returns the tool_call_id of an approval_request event.
func ToolCallID(t testing.TB, ev transport.Received) string {
	t.Helper()
	var m struct {
		ToolCall struct {
			Payload struct {
				ToolCallID string `json:"tool_call_id"`
			} `json:"payload"`
		} `json:"toolCall"`
	}
	if err := json.Unmarshal([]byte(ev.Data), &m); err != nil || m.ToolCall.Payload.ToolCallID == "" {
		t.Fatalf("approval_request without tool_call_id: %s", ev.Data)
	}
	return m.ToolCall.Payload.ToolCallID
}

// PayloadType returns payload.type of a message event ("" otherwise).
func PayloadType(ev transport.Received) string {
	var m struct {
		Payload struct{ Type string } `json:"payload"`
	}
	json.Unmarshal([]byte(ev.Data), &m)
	return m.Payload.Type
}
