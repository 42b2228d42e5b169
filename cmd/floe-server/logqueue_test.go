package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/floehq/floe/transport/server"
)

// gateWriter is a log's writer that stalls (a log collector that stopped
// reading, a full pipe): each write waits until the gate opens. entered
// is closed at the first write's start.
type gateWriter struct {
	out     syncBuffer
	gate    chan struct{}
	entered chan struct{}
	once    sync.Once
	opened  sync.Once
}

func newGateWriter(t *testing.T) *gateWriter {
	g := &gateWriter{gate: make(chan struct{}), entered: make(chan struct{})}
	t.Cleanup(g.open) // the queue's goroutine is not left waiting
	return g
}

func (g *gateWriter) Write(p []byte) (int, error) {
	g.once.Do(func() { close(g.entered) })
	<-g.gate
	return g.out.Write(p)
}

func (g *gateWriter) open() { g.opened.Do(func() { close(g.gate) }) }

// A client whose request would hang on a blocked log fails the test
// rather than time it out.
var boundedClient = &http.Client{Timeout: 30 * time.Second}

func getBounded(t *testing.T, url string) string {
	t.Helper()
	resp, err := boundedClient.Get(url)
	if err != nil {
		t.Fatalf("GET %s while the log is blocked: %v", url, err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return b.String()
}

// TestBlockedLogHoldsNoRequest: with the log's writer blocked, requests
// complete; past the queue's bound the records are dropped and counted
// (/metrics), and once the writer takes records again the log says how
// many were dropped, then writes those it kept, in order.
func TestBlockedLogHoldsNoRequest(t *testing.T) {
	g := newGateWriter(t)
	q := newLogQueue(g, "json", logBounds{lines: 4, bytes: 1 << 20})
	s := serveTest(t, server.Config{}, runOpts{log: newLogger(q, "json"), logq: q})
	t.Cleanup(g.open) // before serveTest's: its shutdown logs
	getBounded(t, s.url+"/healthz")
	<-g.entered // the first record is being written, and waits
	// A request's record is queued before its answer is sent (logRequests
	// logs as its handler returns, before net/http flushes the answer).
	for i := 0; i < 9; i++ {
		getBounded(t, s.url+"/healthz")
	}
	m := parseExposition(t, getBounded(t, s.url+"/metrics"))
	if got := m["floe_log_lines_dropped_total"]; got != 5 {
		t.Errorf("floe_log_lines_dropped_total = %v, want 5 (10 records, 1 being written, 4 queued)", got)
	}
	g.open()
	if err := q.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(g.out.String(), "\n"), "\n")
	if len(lines) != 6 {
		t.Fatalf("the log holds %d lines, want 6 (a record, the notice, 4 records):\n%s", len(lines), g.out.String())
	}
	// /metrics's own record was dropped too.
	if !strings.Contains(lines[1], `"msg":"log lines dropped: the log's writer was blocked","dropped":6`) {
		t.Errorf("the second line is not the notice of 6 dropped: %s", lines[1])
	}
	for i, l := range append(lines[:1:1], lines[2:]...) {
		if !strings.Contains(l, `"msg":"request"`) || !strings.Contains(l, `"route":"/healthz"`) {
			t.Errorf("record %d: %s", i, l)
		}
	}
	if q.Dropped() != 6 {
		t.Errorf("Dropped() = %d, want 6", q.Dropped())
	}
}

// TestLogQueueKeepsAllWithinItsBound: records written while the writer is
// blocked, as many as the queue holds, are all written once it is not, in
// order, and nothing is said dropped.
func TestLogQueueKeepsAllWithinItsBound(t *testing.T) {
	g := newGateWriter(t)
	q := newLogQueue(g, "text", logBounds{lines: 8, bytes: 1 << 20})
	log := newLogger(q, "text")
	log.Info("record", "n", 0)
	<-g.entered
	var wg sync.WaitGroup
	for i := 1; i <= 8; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); log.Info("record", "n", i) }() // -race: writers at once
	}
	wg.Wait()
	if q.Dropped() != 0 {
		t.Fatalf("%d dropped within the bound", q.Dropped())
	}
	g.open()
	if err := q.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := g.out.String()
	if strings.Contains(out, "dropped") {
		t.Errorf("a notice of drops:\n%s", out)
	}
	for i := 0; i <= 8; i++ {
		if strings.Count(out, fmt.Sprintf("msg=record n=%d\n", i)) != 1 {
			t.Errorf("record %d not written once:\n%s", i, out)
		}
	}
	if !strings.HasPrefix(out, "time=") || !strings.Contains(strings.SplitN(out, "\n", 2)[0], "n=0") {
		t.Errorf("the first record is not first:\n%s", out)
	}
}

// TestLogFlushIsBounded: a flush waits for a blocked writer only until its
// context ends, the queue full or not; the records it leaves queued then
// (the exit's, lost with the process) are counted dropped, and said if the
// writer takes a record again.
func TestLogFlushIsBounded(t *testing.T) {
	g := newGateWriter(t)
	q := newLogQueue(g, "text", logBounds{lines: 1, bytes: 1 << 20})
	q.Write([]byte("a\n"))
	<-g.entered
	q.Write([]byte("b\n")) // queued: the queue is full
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := q.Flush(ctx); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "1 records not written") {
		t.Errorf("Flush with the queue full: %v, want context.Canceled and 1 record not written", err)
	}
	if q.Dropped() != 1 {
		t.Errorf("Dropped() = %d after a flush left 1 record, want 1", q.Dropped())
	}
	g.open()
	if err := q.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if out := g.out.String(); !strings.HasPrefix(out, "a\n") || strings.Contains(out, "b\n") ||
		!strings.Contains(out, `msg="log lines dropped: the log's writer was blocked" dropped=1`+"\n") {
		t.Errorf("after the gate opens: %q, want a, then the notice of b dropped", out)
	}
	// A flush queued behind a blocked write, its context ended meanwhile.
	g2 := newGateWriter(t)
	q2 := newLogQueue(g2, "text", logBounds{lines: 4, bytes: 1 << 20})
	q2.Write([]byte("a\n"))
	<-g2.entered
	ctx2, cancel2 := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- q2.Flush(ctx2) }()
	cancel2()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Flush behind a blocked write: %v, want context.Canceled", err)
	}
}

// TestLogQueueBoundedByBytes: long records fill the queue by their bytes
// before its count of records; one longer than the room alone is dropped.
func TestLogQueueBoundedByBytes(t *testing.T) {
	g := newGateWriter(t)
	q := newLogQueue(g, "text", logBounds{lines: 100, bytes: 1000})
	q.Write([]byte("first\n"))
	<-g.entered
	long := strings.Repeat("x", 299) + "\n"
	for range 4 {
		q.Write([]byte(long)) // 3 fit in 1,000 bytes
	}
	if q.Dropped() != 1 {
		t.Errorf("Dropped() = %d after 4 records of 300 bytes in 1,000, want 1", q.Dropped())
	}
	q.Write([]byte("short\n")) // 906 bytes: fits
	q.Write([]byte(strings.Repeat("y", 1200) + "\n"))
	if q.Dropped() != 2 {
		t.Errorf("Dropped() = %d, want 2 (the record longer than the queue)", q.Dropped())
	}
	g.open()
	if err := q.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The notice follows the write that was blocked.
	notice := `msg="log lines dropped: the log's writer was blocked" dropped=2` + "\n"
	if got, want := g.out.String(), strings.Repeat(long, 3)+"short\n"; !strings.HasPrefix(got, "first\n") ||
		!strings.Contains(got, notice) || !strings.HasSuffix(got, notice+want) {
		t.Errorf("the log:\n%s", got)
	}
	// Once written, the bytes are room again.
	for range 3 {
		q.Write([]byte(long))
	}
	if err := q.Flush(context.Background()); err != nil || q.Dropped() != 2 || !strings.HasSuffix(g.out.String(), strings.Repeat(long, 3)) {
		t.Errorf("3 records after the queue drained: %v, %d dropped", err, q.Dropped())
	}
}

// TestLogValueCut: a value longer than logValueMax (a deep panic's stack)
// is cut with a mark, and the record stays one line of JSON.
func TestLogValueCut(t *testing.T) {
	var b syncBuffer
	newLogger(&b, "json").Error("panic", "stack", strings.Repeat("é", 20<<10))
	line := b.String()
	var rec map[string]any
	if err := json.Unmarshal([]byte(line), &rec); err != nil || strings.Count(line, "\n") != 1 {
		t.Fatalf("not one line of JSON (%v): %.200s", err, line)
	}
	stack, _ := rec["stack"].(string)
	if !strings.HasSuffix(stack, "…[cut 24576 bytes]") || len(stack) > logValueMax+32 || !strings.HasPrefix(stack, "éé") {
		t.Errorf("the stack, %d bytes, ends %q", len(stack), stack[max(0, len(stack)-40):])
	}
}

// TestLogErrorsHaveARoom: with the queue full of ordinary records, a
// handler's panic is still logged (its record, an error, has a room of its
// own) while its request's record is dropped; past that room errors are
// dropped too, and the notice says how many of the dropped were errors.
func TestLogErrorsHaveARoom(t *testing.T) {
	g := newGateWriter(t)
	q := newLogQueue(g, "json", logBounds{lines: 2, bytes: 1 << 20, errLines: 1, errBytes: 1 << 20})
	log := newLogger(q, "json")
	log.Info("first")
	<-g.entered
	log.Info("a")
	log.Info("b")
	h := logRequests(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("the handler's bug") }), log, time.Now)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/sessions", nil))
	if rec.Code != 500 {
		t.Errorf("the panic's answer: %d", rec.Code)
	}
	log.Error("a second error") // the room is full
	if q.Dropped() != 2 {
		t.Errorf("Dropped() = %d, want 2 (the request's record, the second error)", q.Dropped())
	}
	g.open()
	if err := q.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(g.out.String(), "\n"), "\n")
	want := []string{`"msg":"first"`, `"msg":"log lines dropped: the log's writer was blocked","dropped":2,"errors":1`,
		`"msg":"a"`, `"msg":"b"`, `"msg":"panic","route":"/api/sessions","panic":"the handler's bug"`}
	if len(lines) != len(want) {
		t.Fatalf("the log:\n%s", g.out.String())
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d: %s, want %s", i, lines[i], w)
		}
	}
}

// TestShutdownFlushesTheLog: serve returns once what its log queued, its
// "stopped" record included, is written.
func TestShutdownFlushesTheLog(t *testing.T) {
	g := newGateWriter(t)
	q := newLogQueue(g, "json", logBounds{lines: 64, bytes: 1 << 20})
	s := serveTest(t, server.Config{}, runOpts{log: newLogger(q, "json"), logq: q})
	getBounded(t, s.url+"/healthz")
	<-g.entered
	s.stop()
	g.open()
	if err := s.wait(); err != nil {
		t.Fatal(err)
	}
	if out := g.out.String(); !strings.Contains(out, `"msg":"stopped"`) {
		t.Errorf("serve returned before its log was written:\n%s", out)
	}
}

// TestShutdownLogOutlivesTheGrace: a shutdown whose requests took all of
// shutdownGrace still waits for its log (logFlush), so its last records
// are written once the writer takes them again.
func TestShutdownLogOutlivesTheGrace(t *testing.T) {
	g := newGateWriter(t)
	q := newLogQueue(g, "json", logBounds{lines: 64, bytes: 1 << 20})
	flushing := make(chan struct{})
	s := serveTest(t, server.Config{}, runOpts{log: newLogger(q, "json"), logq: q,
		shutdownGrace: time.Nanosecond, logFlush: time.Minute, flushing: func() { close(flushing) }})
	getBounded(t, s.url+"/healthz")
	<-g.entered
	s.stop()
	<-flushing // shutdownGrace is over
	g.open()
	if err := s.wait(); err != nil {
		t.Fatal(err)
	}
	if out := g.out.String(); !strings.Contains(out, `"msg":"stopped"`) || q.Dropped() != 0 {
		t.Errorf("serve returned before its log was written (%d dropped):\n%s", q.Dropped(), out)
	}
}

// TestBlockedStderr: the server's stderr a pipe nobody reads (a stalled
// log collector): requests go on being answered, the records past the
// pipe's and the queue's room are counted dropped, and once the pipe is
// read the log says how many were.
func TestBlockedStderr(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command(binary, "--port", "0", "--dir", ":memory:")
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	p := &proc{cmd: cmd}
	t.Cleanup(p.kill)
	line, err := bufio.NewReader(out).ReadString('\n')
	_, rest, ok := strings.Cut(line, "listening on ")
	if err != nil || !ok {
		t.Fatalf("server said %q, %v", line, err)
	}
	url := strings.TrimSuffix(strings.Fields(rest)[0], "/")
	// A pipe holds 64 KiB (about 600 records) and the queue 4,096.
	for range 6000 {
		getBounded(t, url+"/healthz")
	}
	dropped := parseExposition(t, getBounded(t, url+"/metrics"))["floe_log_lines_dropped_total"]
	if dropped < 1 {
		t.Fatalf("floe_log_lines_dropped_total = %v after 6,000 records on a blocked stderr", dropped)
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if _, n, ok := strings.Cut(sc.Text(), `msg="log lines dropped: the log's writer was blocked" dropped=`); ok {
			if got, _ := strconv.ParseFloat(n, 64); got < dropped {
				t.Errorf("the log says %v dropped, /metrics said %v", got, dropped)
			}
			return
		}
	}
	t.Errorf("the log never says records were dropped: %v", sc.Err())
}
