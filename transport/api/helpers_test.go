package api_test

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/floehq/floe/transport"
	"github.com/floehq/floe/transport/server"
	"github.com/floehq/floe/transport/transporttest"
)

// safety bounds how long a test waits for an event before it names what
// hung; it never orders anything.
const safety = 20 * time.Second

type env struct {
	*transporttest.Client
	t   *testing.T
	url string
	srv *server.Server
}

func newEnv(t *testing.T, cfg server.Config) *env {
	t.Helper()
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler)
	c := &transporttest.Client{T: t, URL: ts.URL, Token: cfg.Token}
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close(); srv.Close() })
	return &env{Client: c, t: t, url: ts.URL, srv: srv}
}

func (e *env) do(method, path, body string, hdr ...string) (int, []byte) {
	e.t.Helper()
	return e.Do(method, path, body, hdr...)
}

// must does a request and fails unless it answers status.
func (e *env) must(status int, method, path, body string) []byte {
	e.t.Helper()
	return e.Must(status, method, path, body)
}

func (e *env) create(mode string) string {
	e.t.Helper()
	return e.Create(mode)
}

// stream is an open SSE connection read on its own goroutine, closed when
// the test ends.
type stream struct{ *transporttest.Stream }

func (e *env) open(path, lastID string, resume bool) *stream {
	e.t.Helper()
	s := e.Open(path, lastID, resume)
	e.t.Cleanup(s.Close)
	return &stream{s}
}

func (s *stream) next() transport.Received { return s.MustNext() }

// until reads events until pred holds and returns them all (the last
// matching).
func (s *stream) until(pred func(transport.Received) bool) []transport.Received {
	return s.Until(pred)
}

func serverEvent(typ string) func(transport.Received) bool { return transporttest.ServerEvent(typ) }

func taskState(state string) func(transport.Received) bool { return transporttest.TaskState(state) }

func payloadType(ev transport.Received) string { return transporttest.PayloadType(ev) }

func toolCallID(t *testing.T, ev transport.Received) string { return transporttest.ToolCallID(t, ev) }

func compact(b []byte) string {
	var buf bytes.Buffer
	json.Compact(&buf, b)
	return buf.String()
}
