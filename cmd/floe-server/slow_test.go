package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/floehq/floe/transport/server"
	tt "github.com/floehq/floe/transport/transporttest"
)

// serveLimits runs a server with the connection timeouts lim and returns
// its address.
func serveLimits(t *testing.T, lim limits) string {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	out := make(lines, 4)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, server.Config{}, "127.0.0.1:0", out, runOpts{lim: lim}) }()
	t.Cleanup(func() { stop(); <-done })
	_, rest, _ := strings.Cut(<-out, "listening on http://")
	return strings.TrimSuffix(strings.Fields(rest)[0], "/")
}

// dialGuarded opens a connection whose reads fail after a minute: a
// server that never closes it fails the test rather than hanging it.
func dialGuarded(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetReadDeadline(time.Now().Add(time.Minute))
	return conn
}

// closedByServer reads rd to its end and fails unless the server closed
// the connection (rather than the guard's deadline passing).
func closedByServer(t *testing.T, rd io.Reader, what string) {
	t.Helper()
	_, err := io.Copy(io.Discard, rd)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("%s: the server kept the connection open", what)
	}
}

// A client that sends its request's body a byte at a time, or not at all
// (slowloris), is answered 408 naming what it waited for and disconnected
// once the body timeout has passed: only the head had a timeout, and such
// a request held its connection and goroutine for ever.
func TestSlowBodyTimesOut(t *testing.T) {
	addr := serveLimits(t, limits{header: time.Minute, body: 100 * time.Millisecond, idle: time.Minute})
	conn := dialGuarded(t, addr)
	io.WriteString(conn, "POST /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"id\":")
	rd := bufio.NewReader(conn)
	resp, err := http.ReadResponse(rd, nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), `"body_timeout"`) || !strings.Contains(string(body), "did not arrive within 100ms") {
		t.Fatalf("%d %s, want 408 body_timeout naming the timeout", resp.StatusCode, body)
	}
	// The connection's addresses are not the client's to read: behind a
	// proxy they are the server's and the proxy's ("read tcp a->b: i/o
	// timeout" was sent whole).
	if local, _, _ := net.SplitHostPort(conn.LocalAddr().String()); strings.Contains(string(body), local) || strings.Contains(string(body), "read tcp") {
		t.Fatalf("%s: the message names the connection's addresses", body)
	}
	closedByServer(t, rd, "a body too slow")
}

// A request whose body arrives in time is not cut when its handler works
// on past the body's deadline: net/http lifts it at the body's end (else
// the read it makes to watch for the client leaving would fail at it, and
// cancel the request's context).
func TestBodyDeadlineIsLiftedAtItsEnd(t *testing.T) {
	const d = 20 * time.Millisecond
	canceled := make(chan bool, 1)
	srv := httptest.NewServer(bodyDeadline(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, err := io.ReadAll(r.Body); err != nil || string(b) != "{}" {
			t.Errorf("body %q, %v", b, err)
		}
		select {
		case <-r.Context().Done():
			canceled <- true
		case <-time.After(10 * d): // past the deadline; orders nothing
			canceled <- false
		}
	}), d))
	defer srv.Close()
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if <-canceled {
		t.Fatal("the request was canceled past its body's deadline, its body read in time")
	}
}

// A kept-alive connection without a request is closed after the idle
// timeout; before, there was none, and a client could hold any number of
// connections open for ever.
func TestIdleConnectionIsClosed(t *testing.T) {
	addr := serveLimits(t, limits{header: time.Minute, body: time.Minute, idle: 100 * time.Millisecond})
	conn := dialGuarded(t, addr)
	io.WriteString(conn, "GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	rd := bufio.NewReader(conn)
	resp, err := http.ReadResponse(rd, nil)
	if err != nil || resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("answer %v, %v: want a 200 that keeps the connection", resp, err)
	}
	io.Copy(io.Discard, resp.Body)
	closedByServer(t, rd, "an idle connection")
}

// A head that never ends is cut at the header timeout.
func TestSlowHeadTimesOut(t *testing.T) {
	addr := serveLimits(t, limits{header: 100 * time.Millisecond, body: time.Minute, idle: time.Minute})
	conn := dialGuarded(t, addr)
	io.WriteString(conn, "GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n")
	closedByServer(t, conn, "a head too slow")
}

// A stream outlives every connection timeout: it is bounded by its writes
// only. (The timeouts are long enough for the test's own requests to
// send their heads and bodies within them on a loaded machine: at 10 ms
// a create was cut there.)
func TestStreamOutlivesTheTimeouts(t *testing.T) {
	addr := serveLimits(t, limits{header: 250 * time.Millisecond, body: 250 * time.Millisecond, idle: 250 * time.Millisecond})
	c := &tt.Client{T: t, URL: "http://" + addr}
	id := c.Create("allow-all")
	st := c.Open("/api/sessions/"+id+"/stream", "", false)
	defer st.Close()
	st.MustNext() // task_state idle
	// Longer than every timeout: the next request's events still come.
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // lets the timeouts pass; orders nothing
	}
	c.Must(http.StatusAccepted, "POST", "/api/sessions/"+id+"/tasks", `{"input":"hello"}`)
	st.Until(tt.TaskState("idle"))
}
