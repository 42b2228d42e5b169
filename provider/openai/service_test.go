//go:build !js

package openai_test

import (
	"context"
	"fmt"
	"github.com/floehq/floe/internal/leakcheck"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/enginetest"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider/nethttp"
	"github.com/floehq/floe/provider/openai"
)

// A service's sessions on a model server that answers, fails, hangs
// (before its headers, or mid-stream) and drops the connection
// mid-stream, each run ended every way a run ends: once every session is
// closed, no response body is left open (the server sees no connection
// in use, and none at all once the client's idle ones are let go) and no
// goroutine is left.
func TestServiceOnAModelServer(t *testing.T) {
	srv, conns := modelServer(t)
	client := &http.Client{Transport: &http.Transport{}}
	before := runtime.NumGoroutine()

	cases := []struct {
		mode   string
		end    string // how the consumer ends the run: drain, break, close, cancel, session
		reason string // the abort the stream ends with, "" for none
	}{
		{"ok", "drain", ""},
		{"500", "drain", "reconnect failed"},
		{"cut", "drain", "reconnect failed"},
		{"hang-headers", "drain", "reconnect failed"},
		{"hang-mid", "drain", "reconnect failed"},
		{"slow", "break", ""},
		{"slow", "close", ""},
		{"slow", "cancel", "aborted by user"},
		{"slow", "session", "aborted by user"},
		{"hang-headers", "cancel", "aborted by user"},
	}
	for _, c := range cases {
		t.Run(c.mode+"/"+c.end, func(t *testing.T) {
			llm, err := openai.New(openai.Options{Transport: nethttp.New(client), Model: c.mode, BaseURL: srv.URL, IdleTimeout: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			s, err := engine.New(engine.Config{Meta: enginetest.Meta("svc"), LLM: llm, Clock: enginetest.NewClock(time.Unix(0, 0)), MaxReconnects: 1, Trace: &enginetest.Sink{}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r, err := s.Start(ctx, []omni.Message{omni.UserText("hi")}, engine.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			reason, deltas, ended := "", 0, false
			for m, ok := r.Next(); ok; m, ok = r.Next() {
				if m.IsEvent(omni.Abort) {
					reason = m.Payload.Reason()
				}
				if m.Payload.EventType == omni.EventDelta {
					deltas++
				}
				// The third delta, or the request of a server that sends none.
				if ended || !(deltas == 3 || c.mode == "hang-headers" && m.IsEvent(omni.RequestBegin)) {
					continue
				}
				ended = true
				switch c.end {
				case "break", "close":
					r.Close()
				case "cancel":
					cancel()
				case "session":
					s.Close()
				}
			}
			if !strings.HasPrefix(reason, c.reason) || (c.reason == "") != (reason == "") {
				t.Errorf("the run ended with abort %q, want %q", reason, c.reason)
			}
			s.Close()
			leakcheck.Until(t, 10*time.Second, "no connection in use", func() bool { return conns.inUse() == 0 })
		})
	}
	client.CloseIdleConnections()
	leakcheck.Until(t, 10*time.Second, "every connection closed", func() bool { return conns.open() == 0 })
	leakcheck.Until(t, 10*time.Second, fmt.Sprint("the goroutines of before (", before, ")"), func() bool { return runtime.NumGoroutine() <= before })
}

// connStates counts a server's connections by state.
type connStates struct {
	mu sync.Mutex
	m  map[net.Conn]http.ConnState
}

func (c *connStates) set(conn net.Conn, s http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s == http.StateClosed || s == http.StateHijacked {
		delete(c.m, conn)
		return
	}
	c.m[conn] = s
}

func (c *connStates) count(f func(http.ConnState) bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, s := range c.m {
		if f(s) {
			n++
		}
	}
	return n
}

func (c *connStates) inUse() int {
	return c.count(func(s http.ConnState) bool { return s == http.StateActive })
}

func (c *connStates) open() int { return c.count(func(http.ConnState) bool { return true }) }

// modelServer answers a Chat Completions request by its model's name: ok
// streams a reply, 500 fails, cut sends the headers and half a stream then
// drops the connection, hang-headers and hang-mid wait (before the
// headers, after a delta) until the client goes, slow streams deltas until
// the client goes.
func modelServer(t *testing.T) (*httptest.Server, *connStates) {
	conns := &connStates{m: map[net.Conn]http.ConnState{}}
	delta := func(s string) string {
		return `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"` + s + `"},"finish_reason":null}]}` + "\n\n"
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 1<<16)
		n, _ := r.Body.Read(buf)
		model := ""
		for _, m := range []string{"ok", "500", "cut", "hang-headers", "hang-mid", "slow"} {
			if strings.Contains(string(buf[:n]), `"model":"`+m+`"`) {
				model = m
			}
		}
		flush := func() { w.(http.Flusher).Flush() }
		switch model {
		case "500":
			http.Error(w, `{"error":{"message":"overloaded"}}`, 500)
			return
		case "hang-headers":
			<-r.Context().Done()
			return
		case "cut":
			conn, rw, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			fmt.Fprint(rw, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
			chunk := delta("half")
			fmt.Fprintf(rw, "%x\r\n%s\r\n", len(chunk), chunk)
			rw.Flush()
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, delta("a"))
		flush()
		switch model {
		case "hang-mid":
			<-r.Context().Done()
			return
		case "slow":
			for r.Context().Err() == nil {
				if _, err := fmt.Fprint(w, delta("b")); err != nil {
					return
				}
				flush()
				time.Sleep(time.Millisecond) // paces the stream; orders nothing
			}
			return
		}
		fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":4,"completion_tokens":1,"total_tokens":5}}`+"\n\ndata: [DONE]\n\n")
	}))
	srv.Config.ConnState = conns.set
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, conns
}
