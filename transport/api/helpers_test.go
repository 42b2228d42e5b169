package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/floehq/floe/transport"
	"github.com/floehq/floe/transport/server"
)

// safety bounds how long a test waits for an event before it names what
// hung; it never orders anything.
const safety = 20 * time.Second

type env struct {
	t   *testing.T
	url string
	srv *server.Server
	tok string
}

func newEnv(t *testing.T, cfg server.Config) *env {
	t.Helper()
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler)
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close(); srv.Close() })
	return &env{t: t, url: ts.URL, srv: srv, tok: cfg.Token}
}

func (e *env) do(method, path, body string, hdr ...string) (int, []byte) {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, e.url+path, rd)
	if e.tok != "" {
		req.Header.Set("Authorization", "Bearer "+e.tok)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// must does a request and fails unless it answers status.
func (e *env) must(status int, method, path, body string) []byte {
	e.t.Helper()
	got, b := e.do(method, path, body)
	if got != status {
		e.t.Fatalf("%s %s %s: %d %s, want %d", method, path, body, got, b, status)
	}
	return b
}

func (e *env) create(mode string) string {
	e.t.Helper()
	b := e.must(201, "POST", "/api/sessions", `{"approvalMode":"`+mode+`"}`)
	var out struct{ ID string }
	json.Unmarshal(b, &out)
	return out.ID
}

// stream is an open SSE connection read on its own goroutine.
type stream struct {
	t      *testing.T
	events chan transport.Received
	errc   chan error
	cancel context.CancelFunc
	last   string
}

func (e *env) open(path, lastID string, resume bool) *stream {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", e.url+path, nil)
	if e.tok != "" {
		req.Header.Set("Authorization", "Bearer "+e.tok)
	}
	if resume {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		e.t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		cancel()
		e.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	s := &stream{t: e.t, events: make(chan transport.Received, 100000), errc: make(chan error, 1), cancel: cancel}
	go func() {
		defer resp.Body.Close()
		rd := transport.NewReader(resp.Body)
		for {
			ev, err := rd.Next()
			if err != nil {
				s.errc <- err
				close(s.events)
				return
			}
			if ev.Comment == "" {
				s.events <- ev
			}
		}
	}()
	e.t.Cleanup(cancel)
	return s
}

func (s *stream) next() transport.Received {
	s.t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			s.t.Fatalf("stream ended: %v", <-s.errc)
		}
		s.last = ev.ID
		return ev
	case <-time.After(safety):
		s.t.Fatalf("no event within %v after %s", safety, s.last)
	}
	return transport.Received{}
}

// until reads events until pred holds and returns them all (the last
// matching).
func (s *stream) until(pred func(transport.Received) bool) []transport.Received {
	s.t.Helper()
	var out []transport.Received
	for {
		ev := s.next()
		out = append(out, ev)
		if pred(ev) {
			return out
		}
	}
}

func serverEvent(typ string) func(transport.Received) bool {
	return func(ev transport.Received) bool {
		return ev.Name == transport.EventServer && strings.Contains(ev.Data, `"type":"`+typ+`"`)
	}
}

func taskState(state string) func(transport.Received) bool {
	return func(ev transport.Received) bool {
		return ev.Name == transport.EventServer && strings.HasPrefix(ev.Data, `{"type":"task_state","state":"`+state+`"`)
	}
}

func payloadType(ev transport.Received) string {
	var m struct {
		Payload struct{ Type string } `json:"payload"`
	}
	json.Unmarshal([]byte(ev.Data), &m)
	return m.Payload.Type
}

func toolCallID(t *testing.T, ev transport.Received) string {
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

func compact(b []byte) string {
	var buf bytes.Buffer
	json.Compact(&buf, b)
	return buf.String()
}
