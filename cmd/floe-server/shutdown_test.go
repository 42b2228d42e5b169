package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/floehq/floe/transport"
	"github.com/floehq/floe/transport/server"
	tt "github.com/floehq/floe/transport/transporttest"
)

// lines sends each line written to it on a channel.
type lines chan string

func (l lines) Write(b []byte) (int, error) {
	for _, s := range strings.SplitAfter(string(b), "\n") {
		if s != "" {
			l <- s
		}
	}
	return len(b), nil
}

// TestShutdownEndsStreamsAndFinishesRequests: told to stop (SIGINT,
// SIGTERM), the server ends its streams cleanly, lets a request in flight
// finish, and only then returns. Before, run returned as soon as it was
// told, so main exited under the request, and each stream was cut in the
// middle of its chunked body.
func TestShutdownEndsStreamsAndFinishesRequests(t *testing.T) {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	out := make(lines, 4)
	done := make(chan error, 1)
	go func() { done <- run(ctx, server.Config{}, "127.0.0.1:0", out) }()
	_, rest, _ := strings.Cut(<-out, "listening on ")
	url := strings.TrimSuffix(strings.Fields(rest)[0], "/")
	c := &tt.Client{T: t, URL: url}
	id := c.Create("ask")

	// A request in flight: its head is sent, its body not yet. The server
	// answers "100 Continue" once its handler reads the body: the request
	// is then being served. (A request whose head the server reads only
	// after it was told to stop is dropped unanswered, as net/http does:
	// waiting for the stream below to answer did not make sure the head
	// had been read, and on a busy machine at times it had not.)
	body := `{"id":"made-while-stopping"}`
	slow, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	io.WriteString(slow, "POST /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: "+
		strconv.Itoa(len(body))+"\r\n\r\n")
	slowRd := bufio.NewReader(slow)
	if cont, err := http.ReadResponse(slowRd, nil); err != nil || cont.StatusCode != http.StatusContinue {
		t.Fatalf("the request in flight was not read: %v, %v", cont, err)
	}

	resp, err := http.Get(url + "/api/sessions/" + id + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	if line, _ := rd.ReadString('\n'); !strings.HasPrefix(line, "id: ") {
		t.Fatalf("the stream began with %q", line)
	}

	stop()
	if _, err := io.ReadAll(rd); err != nil {
		t.Fatalf("the stream ended with %v, want its clean end", err)
	}
	select {
	case err := <-done:
		t.Fatalf("run returned (%v) with a request in flight", err)
	default:
	}
	io.WriteString(slow, body)
	answer, err := http.ReadResponse(slowRd, nil)
	if err != nil {
		t.Fatalf("the request in flight got no answer: %v", err)
	}
	if answer.StatusCode != http.StatusCreated {
		t.Fatalf("the request in flight answered %d, want 201", answer.StatusCode)
	}
	if err := <-done; err != nil {
		t.Fatalf("run = %v", err)
	}
}

// TestShutdownAbortsRunsInFlight: told to stop with a run in flight (its
// model streaming and silent since), the server aborts the run, its
// clients get its abort and the idle state before their stream ends, its
// Trace ends with the abort, and its session's lock file is let go.
// Before, the process exited under the run: the stream ended inside a
// fragment, the Trace at the request's start, and the lock file stayed,
// so a server started on the directory elsewhere (a container made anew,
// under another host name) answered session_busy for five minutes.
func TestShutdownAbortsRunsInFlight(t *testing.T) {
	modelURL, asked, _ := heldModel(t)
	dir := t.TempDir()
	p := start(t, "--dir", dir, "--shutdown-grace", "0", "--mode", "allow-all", "--model", "openai-compatible", "--model-id", "m", "--base-url", modelURL+"/v1")
	c := &tt.Client{T: t, URL: p.url}
	id := c.Create("")
	st := c.Open("/api/sessions/"+id+"/stream", "", false)
	defer st.Close()
	st.MustNext()
	c.Must(http.StatusAccepted, "POST", "/api/sessions/"+id+"/tasks", `{"input":"hi"}`)
	<-asked
	p.cmd.Process.Signal(syscall.SIGTERM)
	var got []transport.Received
	for ev, ok := st.Next(); ok; ev, ok = st.Next() {
		got = append(got, ev)
	}
	if n := len(got); n < 2 || !strings.Contains(got[n-2].Data, `"type":"abort"`) || !tt.TaskState("idle")(got[n-1]) {
		t.Fatalf("the stream ended on %+v, want the run's abort and task_state idle", got)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("exit: %v", err)
	}
	locks, _ := filepath.Glob(filepath.Join(dir, ".*.lock"))
	if len(locks) > 0 {
		t.Errorf("lock files left: %v", locks)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("Trace files %v", files)
	}
	trace, _ := os.ReadFile(files[0])
	if lines := strings.Split(strings.TrimSpace(string(trace)), "\n"); !strings.Contains(lines[len(lines)-1], `"type":"abort"`) {
		t.Errorf("the Trace ends with %s, want the run's abort", lines[len(lines)-1])
	}
}

// TestSecondSignalStopsAtOnce: told to stop twice, the server stops at
// the second, as the default for the signal does, rather than wait out
// the grace for a request in flight (here a body that never comes); the
// first is handled, the second was ignored until the grace ended.
func TestSecondSignalStopsAtOnce(t *testing.T) {
	p := start(t, "--dir", ":memory:")
	c := &tt.Client{T: t, URL: p.url}
	id := c.Create("")
	st := c.Open("/api/sessions/"+id+"/stream", "", false)
	defer st.Close()
	st.MustNext()
	conn, err := net.Dial("tcp", strings.TrimPrefix(p.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A request whose body does not come holds the server's shutdown.
	fmt.Fprintf(conn, "POST /api/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	p.cmd.Process.Signal(syscall.SIGTERM)
	for _, ok := st.Next(); ok; _, ok = st.Next() {
	} // the first signal is handled: its shutdown ends the streams
	p.cmd.Process.Signal(syscall.SIGTERM)
	err = p.cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() {
		t.Fatalf("after a second SIGTERM: %v, want the process ended by the signal", err)
	}
}

// heldModel is a Chat Completions server whose every reply streams
// "Thinking", then tells asked and holds until finish is called (the
// reply then ends " done.") or its request ends. The test's cleanup
// lets a held reply go before the server closes.
func heldModel(t *testing.T) (url string, asked <-chan struct{}, finish func()) {
	ask := make(chan struct{}, 1)
	gate := make(chan struct{})
	var once sync.Once
	finish = func() { once.Do(func() { close(gate) }) }
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunk(`{"index":0,"delta":{"role":"assistant","content":"Thinking"},"finish_reason":null}`))
		w.(http.Flusher).Flush()
		ask <- struct{}{}
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, chunk(`{"index":0,"delta":{"content":" done."},"finish_reason":"stop"}`))
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(model.Close)
	t.Cleanup(finish)
	return model.URL, ask, finish
}
