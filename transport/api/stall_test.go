package api_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/transport"
	"github.com/floehq/floe/transport/api"
	"github.com/floehq/floe/transport/server"
	"github.com/floehq/floe/transport/transporttest"
)

// smallBuffers shrinks the send buffer of every accepted connection, so a
// client that stops reading blocks the server's writes early.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(4096)
	}
	return c, err
}

// streamEnv serves the API with the given write timeout on loopback TCP;
// ended receives the path of every stream request whose handler returned.
type streamEnv struct {
	*env
	ended chan string
}

func newStreamEnv(t *testing.T, timeout time.Duration) *streamEnv {
	t.Helper()
	srv, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	h := api.New(srv.Registry, api.Options{WriteTimeout: timeout})
	ended := make(chan string, 16)
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		if strings.HasSuffix(r.URL.Path, "/stream") {
			ended <- r.URL.Path
		}
	}))
	ts.Listener = smallBuffers{ts.Listener}
	ts.Start()
	e := &env{t: t, url: ts.URL, srv: srv}
	e.Client = &transporttest.Client{T: t, URL: ts.URL}
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close(); srv.Close() })
	return &streamEnv{env: e, ended: ended}
}

// dialStream opens a stream over a raw TCP connection with a small receive
// buffer and reads up to the end of the response headers.
func (e *streamEnv) dialStream(path string) (net.Conn, *bufio.Reader) {
	e.t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	c.(*net.TCPConn).SetReadBuffer(4096)
	io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: floe\r\n\r\n")
	rd := bufio.NewReaderSize(c, 512)
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			e.t.Fatalf("reading the headers of %s: %v", path, err)
		}
		if line == "\r\n" {
			return c, rd
		}
	}
}

// publishBurst publishes n events of size bytes each and returns the id of
// the last.
func publishBurst(ch *transport.Channel, n, size int) string {
	data := []byte(`{"pad":"` + strings.Repeat("x", size) + `"}`)
	var f transport.Frame
	for range n {
		f = ch.Publish(transport.Event{Data: data})
	}
	return f.ID
}

// A client that stops reading is dropped once a write cannot complete
// within the write timeout, and its handler returns: before, the write
// blocked for good and the lag limit was never checked.
func TestStreamDropsClientThatStopsReading(t *testing.T) {
	e := newStreamEnv(t, 200*time.Millisecond)
	id := e.create("ask")
	path := "/api/sessions/" + id + "/stream"
	conn, _ := e.dialStream(path) // subscribed: the headers come after Subscribe
	ch := e.srv.Hub.Channel(id)
	publishBurst(ch, 256, 64<<10) // 16 MiB, far beyond the socket buffers, within the lag limit
	select {
	case <-e.ended:
	case <-time.After(safety):
		conn.Close() // unblock the handler so cleanup can finish
		t.Fatalf("the handler of a client that stopped reading still runs after %v", safety)
	}
	if n := ch.Subscribers(); n != 0 {
		t.Errorf("%d subscribers left, want 0", n)
	}
}

// A client that keeps reading, in small pieces through small buffers,
// gets a burst far larger than one write deadline covers, and stays
// connected.
func TestStreamKeepsClientThatReads(t *testing.T) {
	e := newStreamEnv(t, 2*time.Second)
	id := e.create("ask")
	path := "/api/sessions/" + id + "/stream"
	_, rd := e.dialStream(path)
	ch := e.srv.Hub.Channel(id)
	last := publishBurst(ch, 16, 16<<10) // 256 KiB: one Write of 16 chunks
	want := []byte("id: " + last + "\n")
	for {
		line, err := rd.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			continue // a long data line, read 512 bytes at a time
		}
		if err != nil {
			t.Fatalf("the stream ended before %s: %v", last, err)
		}
		if bytes.Equal(line, want) {
			break
		}
	}
	select {
	case p := <-e.ended:
		t.Fatalf("the handler of %s returned while its client reads", p)
	default:
	}
	if n := ch.Subscribers(); n != 1 {
		t.Errorf("%d subscribers, want 1", n)
	}
}

// bigSessionEnv serves, with the given write timeout on loopback TCP with
// small buffers, a store holding sessions sessions, the first (id "big")
// of turns turns of about 1 KiB each; ended receives the path of every
// request whose handler returned.
func bigSessionEnv(t *testing.T, timeout time.Duration, sessions, turns int) (url string, ended chan string) {
	t.Helper()
	store := &trace.MemStore{}
	pad := strings.Repeat("x", 1<<10)
	for i := range sessions {
		id := fmt.Sprintf("s%04d", i)
		if i == 0 {
			id = "big"
		}
		var b bytes.Buffer
		meta := server.NewMeta(id, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		b.Write(meta.AppendJSON(nil))
		b.WriteByte('\n')
		n := 1
		if i == 0 {
			n = turns
		}
		for j := range n {
			fmt.Fprintf(&b, `{"timestamp":"2026-01-01T00:00:01.000Z","type":"model_msg","payload":{"type":"text","role":"user","text":"prompt %d of %s %s","stop_reason":"completed"}}`+"\n", j, id, pad[:200])
			fmt.Fprintf(&b, `{"timestamp":"2026-01-01T00:00:01.000Z","type":"model_msg","payload":{"type":"text","role":"assistant","text":"%s","stop_reason":"completed"}}`+"\n", pad)
		}
		if err := store.Create(context.Background(), id, [][]byte{b.Bytes()}); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := server.New(server.Config{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	h := api.New(srv.Registry, api.Options{WriteTimeout: timeout})
	ended = make(chan string, 16)
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		ended <- r.URL.Path
	}))
	ts.Listener = smallBuffers{ts.Listener}
	ts.Start()
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close(); srv.Close() })
	return ts.URL, ended
}

// A client that asks for a long answer (the history of a big session, a
// long session list) and does not read it is dropped at the write
// timeout, as a stream's is: its handler wrote with no deadline and
// waited for good, holding the history it was writing.
func TestLongAnswerDropsClientThatStopsReading(t *testing.T) {
	for _, c := range []struct {
		path            string
		sessions, turns int
	}{
		{"/api/sessions/big/messages", 1, 4000}, // about 5 MB
		{"/api/sessions", 2000, 1},              // about 150 KB, far beyond both 4 KB buffers
	} {
		url, ended := bigSessionEnv(t, 200*time.Millisecond, c.sessions, c.turns)
		conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.(*net.TCPConn).SetReadBuffer(4096)
		io.WriteString(conn, "GET "+c.path+" HTTP/1.1\r\nHost: floe\r\n\r\n") // and nothing read
		select {
		case p := <-ended:
			if p != c.path {
				t.Fatalf("%s ended, want %s", p, c.path)
			}
		case <-time.After(safety):
			conn.Close() // unblock the handler so cleanup can finish
			t.Fatalf("%s: the handler of a client that stopped reading still runs after %v", c.path, safety)
		}
	}
}
