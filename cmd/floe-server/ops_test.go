package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/floehq/floe/transport/server"
	tt "github.com/floehq/floe/transport/transporttest"
)

// syncBuffer is a log's output, read while the server writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// served is a server started in the test's process by serve.
type served struct {
	url  string
	stop context.CancelFunc
	done chan error
	log  *syncBuffer
	once sync.Once
	err  error
}

// wait waits for serve to return, and returns its error.
func (s *served) wait() error {
	s.once.Do(func() { s.err = <-s.done })
	return s.err
}

func serveTest(t *testing.T, cfg server.Config, ro runOpts) *served {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	s := &served{stop: stop, done: make(chan error, 1), log: &syncBuffer{}}
	if ro.log == nil {
		ro.log = newLogger(s.log, "json")
	}
	if ro.lim == (limits{}) {
		ro.lim = defaultLimits
	}
	out := make(lines, 4)
	go func() { s.done <- serve(ctx, cfg, "127.0.0.1:0", out, ro) }()
	select {
	case line := <-out:
		_, rest, _ := strings.Cut(line, "listening on ")
		s.url = strings.TrimSuffix(strings.Fields(rest)[0], "/")
	case err := <-s.done:
		s.once.Do(func() { s.err = err })
		t.Fatalf("serve: %v", err)
	}
	t.Cleanup(func() {
		stop()
		s.wait()
	})
	return s
}

func get(t *testing.T, url, token string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	return send(t, req, token)
}

// send sends req, with the bearer token when there is one: the status,
// the body and the headers of the answer.
func send(t *testing.T, req *http.Request, token string) (int, string, http.Header) {
	t.Helper()
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// TestHealthAndReadiness: /healthz and /readyz answer without the token
// the API wants, and /readyz says 503 while the Trace directory cannot be
// written, and again 200 once it can.
func TestHealthAndReadiness(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root writes a directory without the permission")
	}
	dir := t.TempDir()
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	s := serveTest(t, server.Config{Dir: dir, Token: "sekret"}, runOpts{now: clock.now})
	if st, body, _ := get(t, s.url+"/healthz", ""); st != 200 || body != "ok\n" {
		t.Errorf("/healthz: %d %q", st, body)
	}
	if st, body, _ := get(t, s.url+"/readyz", ""); st != 200 || body != "ready\n" {
		t.Errorf("/readyz: %d %q", st, body)
	}
	if st, _, _ := get(t, s.url+"/api/sessions", ""); st != http.StatusUnauthorized {
		t.Errorf("/api/sessions without the token: %d", st)
	}
	if st, _, _ := get(t, s.url+"/metrics", ""); st != http.StatusUnauthorized {
		t.Errorf("/metrics without the token: %d", st)
	}
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o755)
	if st, _, _ := get(t, s.url+"/readyz", ""); st != 200 {
		t.Errorf("/readyz within a second of its last check: %d, want its finding again", st)
	}
	clock.add(time.Second - time.Millisecond) // the README's "kept a second", written out
	if st, _, _ := get(t, s.url+"/readyz", ""); st != 200 {
		t.Errorf("/readyz 999 ms after its last check: %d, want its finding again", st)
	}
	clock.add(time.Millisecond)
	if st, body, _ := get(t, s.url+"/readyz", ""); st != 503 || strings.Contains(body, dir) {
		t.Errorf("/readyz with a directory it cannot write: %d %q", st, body)
	}
	if !strings.Contains(s.log.String(), "not ready: the Trace directory") {
		t.Errorf("the log does not say why: %s", s.log)
	}
	os.Chmod(dir, 0o755)
	clock.add(dirCheckTTL)
	if st, _, _ := get(t, s.url+"/readyz", ""); st != 200 {
		t.Errorf("/readyz once it can write again: %d", st)
	}
	resp, err := http.Post(s.url+"/healthz", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /healthz: %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

// fakeClock is a server's clock, which a test moves on.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestReadinessOnAHangingDirectory: /readyz, which answers without a
// token, checks the Trace directory once at a time and once a second at
// most: a check that hangs (a file system that stopped answering) gives
// 503 at its timeout, and the probes after it wait for the same check
// rather than each leave one more goroutine stuck in the file system.
func TestReadinessOnAHangingDirectory(t *testing.T) {
	var checks atomic.Int32
	release := make(chan struct{})
	var slow atomic.Bool
	slow.Store(true)
	fired := make(chan time.Time)
	close(fired)
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	var waits sync.Map // the timeouts the probes waited for
	s := serveTest(t, server.Config{Dir: t.TempDir()}, runOpts{now: clock.now,
		checkDir: func(string) error { checks.Add(1); <-release; return nil },
		after: func(d time.Duration) <-chan time.Time {
			waits.Store(d, true)
			if slow.Load() {
				return fired // the check's timeout is over at once
			}
			return nil
		}})
	client := &http.Client{Timeout: 10 * time.Second} // a probe that hangs fails the test, not the run
	probe := func() (int, string) {
		t.Helper()
		resp, err := client.Get(s.url + "/readyz")
		if err != nil {
			t.Fatalf("/readyz: %v", err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for i := range 5 {
		if st, body := probe(); st != 503 {
			t.Errorf("/readyz %d while the check hangs: %d %q", i, st, body)
		}
	}
	if n := checks.Load(); n != 1 {
		t.Errorf("%d checks of the directory under way at once, want 1", n)
	}
	if log := s.log.String(); strings.Count(log, "did not answer") != 1 {
		t.Errorf("the log does not say once that the directory hangs:\n%s", log)
	}
	waits.Range(func(d, _ any) bool { // the README's 800 ms, written out
		if d != 800*time.Millisecond {
			t.Errorf("a probe waited %v for the directory's check, want 800ms", d)
		}
		return true
	})
	if _, ok := waits.Load(800 * time.Millisecond); !ok {
		t.Error("no probe waited 800ms for the directory's check")
	}
	slow.Store(false)
	close(release)
	if st, _ := probe(); st != 200 { // the same check, ended
		t.Errorf("/readyz once the check ended: %d", st)
	}
	if st, _ := probe(); st != 200 {
		t.Errorf("/readyz again: %d", st)
	}
	if n := checks.Load(); n != 1 {
		t.Errorf("%d checks within a second, want 1", n)
	}
	clock.add(time.Second - time.Millisecond) // the README's "kept a second", written out
	if st, _ := probe(); st != 200 {
		t.Errorf("/readyz 999 ms later: %d", st)
	}
	if n := checks.Load(); n != 1 {
		t.Errorf("%d checks within 999 ms, want 1", n)
	}
	clock.add(time.Millisecond)
	if st, _ := probe(); st != 200 {
		t.Errorf("/readyz a second later: %d", st)
	}
	if n := checks.Load(); n != 2 {
		t.Errorf("%d checks after a second, want 2", n)
	}
}

// TestMetricsAfterARun: /metrics, scraped after a scripted run with a
// tool call waiting for its approval and a stream refused, counts them,
// in the text format's rules.
func TestMetricsAfterARun(t *testing.T) {
	cfg := server.Config{Dir: t.TempDir(), Token: "api"}
	cfg.Channel.MaxSubscribers = 1
	s := serveTest(t, cfg, runOpts{metricsToken: "scrape"})
	c := &tt.Client{T: t, URL: s.url, Token: "api"}
	id := c.Create("ask")
	st := c.Open("/api/sessions/"+id+"/stream", "", false)
	defer st.Close()
	st.MustNext()
	if code, _ := c.Do("GET", "/api/sessions/"+id+"/stream", ""); code != http.StatusTooManyRequests {
		t.Fatalf("a second stream: %d, want 429", code)
	}
	// The scripted model lists the files (a tool that asks) for this.
	c.Must(http.StatusAccepted, "POST", "/api/sessions/"+id+"/tasks", `{"input":"list the files"}`)
	st.Until(tt.ServerEvent("approval_request"))
	if code, _, _ := get(t, s.url+"/metrics", "api"); code != http.StatusUnauthorized {
		t.Errorf("/metrics with the API's token, not --metrics-token: %d", code)
	}
	code, body, hdr := get(t, s.url+"/metrics", "scrape")
	if code != 200 || hdr.Get("Content-Type") != "text/plain; version=0.0.4; charset=utf-8" {
		t.Fatalf("/metrics: %d %s", code, hdr.Get("Content-Type"))
	}
	m := parseExposition(t, body)
	for name, want := range map[string]float64{
		"floe_sessions_open": 1, "floe_sessions_running": 1, "floe_runs_started_total": 1,
		"floe_approvals_pending": 1, "floe_streams_open": 1, "floe_streams_refused_total": 1,
		`floe_runs_ended_total{status="completed"}`: 0, "floe_tool_calls_total": 1, "floe_draining": 0,
	} {
		if got, ok := m[name]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", name, got, ok, want)
		}
	}
	if m["floe_trace_written_bytes_total"] <= 0 || m["floe_uptime_seconds"] < 0 {
		t.Errorf("bytes written %v, uptime %v", m["floe_trace_written_bytes_total"], m["floe_uptime_seconds"])
	}

	c.Must(http.StatusAccepted, "POST", "/api/sessions/"+id+"/abort", "")
	st.Until(tt.TaskState("idle"))
	// Its end is counted before idle is told (Host.end).
	_, body, _ = get(t, s.url+"/metrics", "scrape")
	m = parseExposition(t, body)
	requests := 0.0
	for k, v := range m {
		if strings.HasPrefix(k, "floe_model_requests_total{") {
			requests += v
		}
	}
	if m[`floe_runs_ended_total{status="aborted"}`] != 1 || m["floe_approvals_pending"] != 0 || m["floe_sessions_running"] != 0 || requests != 1 {
		t.Errorf("after the abort:\n%s", body)
	}
	// A stream that resumes from an id of no channel's is resynced.
	st2 := c.Open("/api/sessions/"+c.Create("")+"/stream", "x", true)
	st2.MustNext()
	st2.Close()
	_, body, _ = get(t, s.url+"/metrics", "scrape")
	if m = parseExposition(t, body); m["floe_stream_resyncs_total"] != 1 {
		t.Errorf("a Last-Event-ID of no channel's: resyncs %v", m["floe_stream_resyncs_total"])
	}
}

var (
	metricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	labelName  = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
)

// parseExposition parses the Prometheus text format (0.0.4) as a scraper
// would, failing the test on a break of its rules: a HELP and a TYPE per
// family, before its samples; a family's samples together; valid names;
// label values quoted with \\, \" and \n escaped only; no series twice; a
// value Go parses as a float. It returns each series' value by its name
// and labels as written.
func parseExposition(t testing.TB, text string) map[string]float64 {
	t.Helper()
	if !strings.HasSuffix(text, "\n") {
		t.Fatalf("the exposition does not end with a line feed")
	}
	out := map[string]float64{}
	help, typ := map[string]bool{}, map[string]string{}
	done := map[string]bool{} // families whose samples have ended
	current := ""
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		fail := func(why string) { t.Fatalf("line %d %q: %s", i+1, line, why) }
		if strings.HasPrefix(line, "# ") {
			f := strings.SplitN(line, " ", 4)
			if len(f) < 4 || (f[1] != "HELP" && f[1] != "TYPE") {
				fail("a comment that is neither HELP nor TYPE")
			}
			if !metricName.MatchString(f[2]) {
				fail("bad metric name")
			}
			if f[1] == "HELP" {
				if help[f[2]] {
					fail("a second HELP")
				}
				help[f[2]] = true
			} else {
				if typ[f[2]] != "" {
					fail("a second TYPE")
				}
				if f[3] != "counter" && f[3] != "gauge" {
					fail("a type this server does not write")
				}
				typ[f[2]] = f[3]
			}
			continue
		}
		name, rest := line, ""
		if j := strings.IndexAny(line, "{ "); j >= 0 {
			name, rest = line[:j], line[j:]
		}
		if !metricName.MatchString(name) || !strings.HasPrefix(name, "floe_") {
			fail("bad metric name")
		}
		if typ[name] == "" || !help[name] {
			fail("a sample before its family's HELP and TYPE")
		}
		if typ[name] == "counter" && !strings.HasSuffix(name, "_total") {
			fail("a counter not named _total")
		}
		if name != current {
			if done[name] {
				fail("the family's samples are not together")
			}
			if current != "" {
				done[current] = true
			}
			current = name
		}
		labels := ""
		if strings.HasPrefix(rest, "{") {
			end := parseLabels(t, rest, fail)
			labels, rest = rest[:end], rest[end:]
		}
		v := strings.TrimPrefix(rest, " ")
		if v == rest || strings.Contains(v, " ") {
			fail("want one space and a value")
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			fail("bad value")
		}
		key := name + labels
		if _, dup := out[key]; dup {
			fail("a series twice")
		}
		out[key] = f
	}
	for name := range typ {
		if !help[name] {
			t.Errorf("%s has a TYPE and no HELP", name)
		}
	}
	return out
}

// parseLabels checks the label set at the start of s ({a="x",b="y"}) and
// returns its length.
func parseLabels(t testing.TB, s string, fail func(string)) int {
	i := 1
	seen := map[string]bool{}
	for {
		j := strings.IndexByte(s[i:], '=')
		if j < 0 {
			fail("a label without =")
		}
		name := s[i : i+j]
		if !labelName.MatchString(name) || strings.HasPrefix(name, "__") || seen[name] {
			fail("bad or repeated label name " + name)
		}
		seen[name] = true
		i += j + 1
		if i >= len(s) || s[i] != '"' {
			fail("an unquoted label value")
		}
		for i++; ; i++ {
			if i >= len(s) {
				fail("an unterminated label value")
			}
			if s[i] == '\\' {
				if i+1 >= len(s) || !strings.ContainsRune(`\"n`, rune(s[i+1])) {
					fail("a bad escape in a label value")
				}
				i++
				continue
			}
			if s[i] == '\n' {
				fail("a line feed in a label value")
			}
			if s[i] == '"' {
				break
			}
		}
		i++
		if i < len(s) && s[i] == ',' {
			i++
			continue
		}
		if i < len(s) && s[i] == '}' {
			return i + 1
		}
		fail("a label set not closed")
	}
}

// TestExpositionParserRefuses: the test's parser fails on what the format
// forbids, so that TestMetricsAfterARun would see it.
func TestExpositionParserRefuses(t *testing.T) {
	for _, bad := range []string{
		"floe_x 1\n", // no HELP, TYPE
		"# HELP floe_x a\n# TYPE floe_x gauge\n# HELP floe_x b\nfloe_x 1\n",
		"# HELP floe_x a\n# TYPE floe_x gauge\nfloe_x 1\nfloe_x 2\n",
		"# HELP floe_x_total a\n# TYPE floe_x_total counter\nfloe_x_total{s=\"a\\q\"} 1\n",
		"# HELP floe_x_total a\n# TYPE floe_x_total counter\nfloe_x_total{s=a} 1\n",
		"# HELP floe-x a\n# TYPE floe-x gauge\nfloe-x 1\n",
		"# HELP floe_x a\n# TYPE floe_x counter\nfloe_x 1\n",
	} {
		ft := &fakeT{}
		func() {
			defer func() { recover() }()
			parseExposition(ft, bad)
		}()
		if !ft.failed {
			t.Errorf("accepted %q", bad)
		}
	}
	if got := labelValue("a\\b\"c\nd"); got != `a\\b\"c\nd` {
		t.Errorf("labelValue = %q", got)
	}
}

// fakeT records a failure; its Fatalf stops the parser by a panic.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed = true
	panic(fmt.Sprintf(format, args...))
}
func (f *fakeT) Errorf(format string, args ...any) { f.failed = true }

// TestRequestLogHoldsNoSecrets: the log has a line per request with its
// method, route template, status and duration, one per run end, and none
// of the token, the API key, the prompt or a session id in a path.
func TestRequestLogHoldsNoSecrets(t *testing.T) {
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunk(`{"index":0,"delta":{"role":"assistant","content":"Done."},"finish_reason":"stop"}`))
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer model.Close()
	env := map[string]string{"MY_KEY": "sk-very-secret-key"}
	cfg, _, err := parse([]string{"--dir", t.TempDir(), "--token", "tok-secret", "--model", "openai-compatible", "--model-id", "m",
		"--base-url", model.URL + "/v1", "--api-key-env", "MY_KEY"}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	s := serveTest(t, cfg, runOpts{})
	c := &tt.Client{T: t, URL: s.url, Token: "tok-secret"}
	c.Must(http.StatusCreated, "POST", "/api/sessions", `{"id":"my-private-id"}`)
	st := c.Open("/api/sessions/my-private-id/stream", "", false)
	defer st.Close()
	st.MustNext()
	c.Must(http.StatusAccepted, "POST", "/api/sessions/my-private-id/tasks", `{"input":"the prompt is private"}`)
	st.Until(tt.TaskState("idle"))
	c.Do("GET", "/api/sessions/my-private-id/messages?token=tok-secret", "")
	c.Do("GET", "/no/such/route", "", "Authorization", "Bearer wrong-secret")
	st.Close()
	s.stop()
	s.wait()
	log := s.log.String()
	for _, secret := range []string{"tok-secret", "sk-very-secret-key", "the prompt is private", "wrong-secret", "Bearer"} {
		if strings.Contains(log, secret) {
			t.Errorf("the log holds %q:\n%s", secret, log)
		}
	}
	for _, want := range []string{
		`"msg":"request","method":"POST","route":"/api/sessions/{id}/tasks","status":202,"duration_ms":`,
		`"msg":"request","method":"GET","route":"/api/sessions/{id}/messages","status":200`,
		`"msg":"request","method":"GET","route":"other","status":401`,
		`"msg":"request","method":"GET","route":"/api/sessions/{id}/stream","status":200`,
		`"msg":"run ended","session":"my-private-id","status":"completed","duration_ms":`,
		`"msg":"draining"`, `"msg":"stopped"`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %s:\n%s", want, log)
		}
	}
	// The session's id is named by its run's end, never by a request's.
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, `"msg":"request"`) && strings.Contains(line, "my-private-id") {
			t.Errorf("a request's line names the session: %s", line)
		}
	}
}

// TestShutdownDrainsThenAborts: told to stop, the server drains at once
// (/readyz 503, /healthz still 200, a new task refused 503 shutting_down,
// the run in flight going on), and when the grace is over it aborts the
// run, whose clients get its end, and returns nil.
func TestShutdownDrainsThenAborts(t *testing.T) {
	modelURL, asked, _ := heldModel(t)
	cfg, _, err := parse([]string{"--dir", t.TempDir(), "--mode", "allow-all", "--model", "openai-compatible", "--model-id", "m", "--base-url", modelURL + "/v1"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	over := make(chan time.Time)
	drained := make(chan struct{})
	var asked0 time.Duration
	s := serveTest(t, cfg, runOpts{grace: 7 * time.Second, draining: func() { close(drained) },
		after: func(d time.Duration) <-chan time.Time { asked0 = d; return over }})
	c := &tt.Client{T: t, URL: s.url}
	id, other := c.Create(""), c.Create("")
	st := c.Open("/api/sessions/"+id+"/stream", "", false)
	defer st.Close()
	st.MustNext()
	c.Must(http.StatusAccepted, "POST", "/api/sessions/"+id+"/tasks", `{"input":"hi"}`)
	<-asked
	s.stop()
	<-drained
	if code, _, _ := get(t, s.url+"/readyz", ""); code != 503 {
		t.Errorf("/readyz while draining: %d", code)
	}
	if code, _, _ := get(t, s.url+"/healthz", ""); code != 200 {
		t.Errorf("/healthz while draining: %d", code)
	}
	if code, body := c.Do("POST", "/api/sessions/"+other+"/tasks", `{"input":"hi"}`); code != 503 || !strings.Contains(string(body), "shutting_down") {
		t.Errorf("a new task while draining: %d %s", code, body)
	}
	_, body, _ := get(t, s.url+"/metrics", "")
	if m := parseExposition(t, body); m["floe_draining"] != 1 || m["floe_sessions_running"] != 1 {
		t.Errorf("while draining:\n%s", body)
	}
	select {
	case err := <-s.done:
		s.once.Do(func() { s.err = err })
		t.Fatalf("serve returned within the grace: %v", err)
	default:
	}
	close(over)
	var got []string
	for ev, ok := st.Next(); ok; ev, ok = st.Next() {
		got = append(got, ev.Data)
	}
	if n := len(got); n < 2 || !strings.Contains(got[n-2], `"type":"abort"`) {
		t.Errorf("the stream ended on %q, want the run's abort", got)
	}
	if err := s.wait(); err != nil {
		t.Errorf("serve = %v", err)
	}
	if asked0 != 7*time.Second {
		t.Errorf("the grace waited for %v", asked0)
	}
	if log := s.log.String(); !strings.Contains(log, `"status":"aborted"`) {
		t.Errorf("the run's end is not logged aborted:\n%s", log)
	}
}

// TestShutdownLetsARunFinish: a run that ends within the grace ends on its
// own (completed), and the server then returns without the grace's end.
func TestShutdownLetsARunFinish(t *testing.T) {
	modelURL, asked, finish := heldModel(t)
	cfg, _, err := parse([]string{"--dir", t.TempDir(), "--model", "openai-compatible", "--model-id", "m", "--base-url", modelURL + "/v1"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	drained := make(chan struct{})
	s := serveTest(t, cfg, runOpts{grace: time.Hour, draining: func() { close(drained) },
		after: func(time.Duration) <-chan time.Time { return nil }}) // never over
	c := &tt.Client{T: t, URL: s.url}
	id := c.Create("")
	st := c.Open("/api/sessions/"+id+"/stream", "", false)
	defer st.Close()
	st.MustNext()
	c.Must(http.StatusAccepted, "POST", "/api/sessions/"+id+"/tasks", `{"input":"hi"}`)
	<-asked
	s.stop()
	<-drained
	finish()
	if err := s.wait(); err != nil {
		t.Errorf("serve = %v", err)
	}
	if log := s.log.String(); !strings.Contains(log, `"msg":"run ended","session":"`+id+`","status":"completed"`) {
		t.Errorf("the run did not end completed:\n%s", log)
	}
	files, _ := filepath.Glob(filepath.Join(cfg.Dir, "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("Trace files %v", files)
	}
	if trace, _ := os.ReadFile(files[0]); !strings.Contains(string(trace), " done.") || strings.Contains(string(trace), `"type":"abort"`) {
		t.Errorf("the Trace:\n%s", trace)
	}
}

// TestFlagsFromEnvironment: each flag may come from its FLOE_ variable, the
// command line winning; a bad value names the variable; a FLOE_ variable
// that is no flag's is refused, naming the nearest.
func TestFlagsFromEnvironment(t *testing.T) {
	env := func(kv ...string) ([]string, func(string) string) {
		m := map[string]string{}
		for _, e := range kv {
			k, v, _ := strings.Cut(e, "=")
			m[k] = v
		}
		return kv, func(k string) string { return m[k] }
	}
	environ, getenv := env("FLOE_PORT=9001", "FLOE_DIR=:memory:", "FLOE_MODE=allow-all", "FLOE_TOKEN=t", "FLOE_SHUTDOWN_GRACE=3s",
		"FLOE_LOG_FORMAT=json", "FLOE_ORIGIN=https://a.example", "FLOE_MAX_STREAMS=0", "FLOE_METRICS_TOKEN=m", "FLOE_SHARED=/x", "PATH=/bin")
	o, err := parseAll(nil, getenv, environ)
	if err != nil {
		t.Fatal(err)
	}
	if o.addr != "127.0.0.1:9001" || o.cfg.Dir != "" || o.cfg.Mode != "allow-all" || o.cfg.Token != "t" || o.grace != 3*time.Second ||
		o.logFormat != "json" || len(o.cfg.Origins) != 1 || o.cfg.Channel.MaxSubscribers != -1 || o.metricsToken != "m" {
		t.Errorf("from the environment: %+v", o)
	}
	o, err = parseAll([]string{"--port", "9002", "--mode", "ask", "--token", ""}, getenv, environ)
	if err != nil || o.addr != "127.0.0.1:9002" || o.cfg.Mode != "ask" || o.cfg.Token != "" {
		t.Errorf("the command line does not win: %+v, %v", o, err)
	}
	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{[]string{"FLOE_PORT=abc"}, nil, `FLOE_PORT="abc": want an integer`},
		{[]string{"FLOE_PORT=70000"}, nil, `FLOE_PORT=70000: out of range`},
		{[]string{"FLOE_MODE=yolo"}, nil, `FLOE_MODE="yolo": want ask`},
		{[]string{"FLOE_DIR="}, nil, `FLOE_DIR: empty`},
		// Go listens on every interface at an empty host: an unset
		// variable in a script opened the server to the network.
		{[]string{"FLOE_HOST="}, nil, `FLOE_HOST: empty; want an address to listen on, such as 127.0.0.1 (or 0.0.0.0 for every interface)`},
		{nil, []string{"--host", ""}, `--host: empty; want an address`},
		// Any origin and no token: any page a browser opens reads and
		// runs the sessions (it was served).
		{nil, []string{"--origin", "*"}, `--origin "*": any origin, without a --token: every web page a browser opens could then read and run the sessions; name the pages' origins, or give a --token as well`},
		{[]string{"FLOE_ORIGIN=https://a.example, *"}, nil, `FLOE_ORIGIN="https://a.example, *": any origin, without a --token`},
		{[]string{"FLOE_ORIGIN=*", "FLOE_TOKEN=t"}, nil, ""},
		{[]string{"FLOE_GEMINI=perhaps"}, nil, `FLOE_GEMINI="perhaps": want true or false`},
		{[]string{"FLOE_STARTS_IN_THINKING=yes"}, nil, `FLOE_STARTS_IN_THINKING="yes": want true or false (1, 0)`},
		{[]string{"FLOE_MODEL=anthropic", "FLOE_MODEL_ID=m", "ANTHROPIC_API_KEY=k", "FLOE_STARTS_IN_THINKING=true"}, nil, `FLOE_STARTS_IN_THINKING: only with FLOE_MODEL=openai, openai-compatible or openai-responses (a chat template that opens the thinking), not FLOE_MODEL=anthropic`},
		{[]string{"FLOE_SHUTDOWN_GRACE=10"}, nil, `FLOE_SHUTDOWN_GRACE="10": want a duration`},
		{[]string{"FLOE_LOG_FORMAT=xml"}, nil, `FLOE_LOG_FORMAT="xml": want text or json`},
		{[]string{"FLOE_ORIGIN=app.example"}, nil, `FLOE_ORIGIN="app.example": want origins`},
		{[]string{"FLOE_MODEL_ID=m"}, nil, `FLOE_MODEL_ID`},
		{[]string{"FLOE_MODEL=openai"}, []string{"--dir", ":memory:"}, `FLOE_MODEL=openai`},
		// A setting not given, the model from FLOE_MODEL: named as a
		// variable and as a flag (it was --model-id alone).
		{[]string{"FLOE_MODEL=openai"}, nil, `FLOE_MODEL_ID or --model-id: required with FLOE_MODEL=openai (the model name the provider knows)`},
		{[]string{"FLOE_MODEL=openai-compatible", "FLOE_MODEL_ID=m"}, nil, `FLOE_BASE_URL or --base-url: required with FLOE_MODEL=openai-compatible`},
		{[]string{"FLOE_MODEL=anthropic", "FLOE_MODEL_ID=m"}, nil, `FLOE_MODEL=anthropic: the environment variable ANTHROPIC_API_KEY is empty or unset (set it, or name another with FLOE_API_KEY_ENV or --api-key-env)`},
		{[]string{"FLOE_MODEL=openai", "OPENAI_API_KEY=k"}, []string{"--model-id", "m", "--delay", "1ms"}, `--delay: only with FLOE_MODEL=scripted`},
		// The adapter's own refusal names the setting that chose it.
		{[]string{"FLOE_MODEL=openai", "FLOE_MODEL_ID=m", "OPENAI_API_KEY=k\n"}, nil, `FLOE_MODEL=openai: openai: Options.APIKey`},
		{[]string{"FLOE_TOKN=x"}, nil, `"FLOE_TOKN": not a variable of floe-server (did you mean FLOE_TOKEN?)`},
		{[]string{"FLOE_ORIGINS=*"}, nil, `"FLOE_ORIGINS": not a variable of floe-server (did you mean FLOE_ORIGIN?)`},
		{[]string{"floe_token=x"}, nil, `"floe_token": not a variable of floe-server (did you mean FLOE_TOKEN?)`},
		{[]string{"FLOE_SOMETHING_ELSE=x"}, nil, `"FLOE_SOMETHING_ELSE": not a variable of floe-server (it reads FLOE_API_KEY_ENV, `},
		{[]string{"FLOE_TOKEN=s3cret\n"}, nil, `FLOE_TOKEN: the token starts or ends with white space`},
		{[]string{"FLOE_METRICS_TOKEN= s3cret"}, nil, `FLOE_METRICS_TOKEN: the token starts or ends with white space`},
		{nil, []string{"--token", "s3\x00cret"}, `--token: the token holds a control character`},
		{nil, []string{"--metrics-token", "s3cret\r"}, `--metrics-token: the token starts or ends`},
		{[]string{"FLOE_TOKEN=s3 cret"}, nil, ""},                   // a space within is carried
		{[]string{"FLOE_MODE=yolo"}, []string{"--mode", "ask"}, ""}, // the command line wins, the variable unread
	} {
		environ, getenv := env(c.env...)
		_, err := parseAll(c.args, getenv, environ)
		if c.want == "" {
			if err != nil {
				t.Errorf("%v %v: %v", c.env, c.args, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %v: %v, want %q", c.env, c.args, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "s3") {
			t.Errorf("%v %v: the error names the token: %v", c.env, c.args, err)
		}
	}
	// The variable --api-key-env names may start with FLOE_.
	environ, getenv = env("FLOE_KEY=k")
	if _, err := parseAll([]string{"--model", "openai-compatible", "--model-id", "m", "--base-url", "http://127.0.0.1:1/v1", "--api-key-env", "FLOE_KEY"}, getenv, environ); err != nil {
		t.Errorf("a key in FLOE_KEY: %v", err)
	}
}

// TestPanicInAHandler: a handler's panic before it answered is a 500 with
// the API's error body, logged as one with the panic; one after its
// response began cuts the connection, logged so, never as a whole 200.
func TestPanicInAHandler(t *testing.T) {
	buf := &syncBuffer{}
	h := logRequests(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/sessions/late/stream" {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, ": begun\n\n")
			w.(http.Flusher).Flush()
		}
		var m map[string]int
		m["x"]++ // a nil map: panics
	}), newLogger(buf, "json"), time.Now)
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.Start()
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/sessions/early")
	if err != nil {
		t.Fatalf("a panic before the answer: %v, want a 500", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 500 || !strings.Contains(string(b), `"code":"internal"`) {
		t.Errorf("a panic before the answer: %d %s", resp.StatusCode, b)
	}
	resp, err = http.Get(srv.URL + "/api/sessions/late/stream")
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if err == nil {
		t.Errorf("a panic after the answer began: the response ended whole")
	}
	out := buf.String()
	for _, want := range []string{
		`"msg":"panic","route":"/api/sessions/{id}","panic":"assignment to entry in nil map"`,
		`"msg":"request","method":"GET","route":"/api/sessions/{id}","status":500`,
		`"msg":"request","method":"GET","route":"/api/sessions/{id}/stream","status":200,`,
		`"cut_off":true`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %s:\n%s", want, out)
		}
	}
}

// TestToolVarsAreTheScripts: every FLOE_ variable the repository's
// scripts and tests read from their environment (a developer's shell may
// hold it) is a flag's or one of toolVars: floe-server refused to start
// in a shell that had set FLOE_WEBKIT_DRIVER. The Worker's variables
// (wasm/) are not read from a shell.
func TestToolVarsAreTheScripts(t *testing.T) {
	read := regexp.MustCompile(`(?:process\.env\.|process\.env\[["']|\$\{|\$|Getenv\(")(FLOE_[A-Z0-9_]+)`)
	root := filepath.Join("..", "..")
	found := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch rel {
			case ".git", "node_modules", "wasm", "jsbridge", filepath.Join("cmd", "floe-server"):
				return filepath.SkipDir
			}
			if d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".sh", ".mjs", ".js", ".go":
		default:
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		// The pattern matches within a line: only the lines naming FLOE_
		// are searched (the whole tree took the regexp over a minute under
		// the race detector).
		for line := range bytes.Lines(b) {
			if !bytes.Contains(line, []byte("FLOE_")) {
				continue
			}
			for _, m := range read.FindAllSubmatch(line, -1) {
				found[string(m[1])] = rel
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) < 10 {
		t.Fatalf("found %d variables only: %v", len(found), found)
	}
	for name, file := range found {
		_, err := parseAll(nil, func(string) string { return "" }, []string{name + "=1"})
		if err != nil && strings.Contains(err.Error(), "not a variable of floe-server") {
			t.Errorf("%s, which %s reads, is refused: %v", name, file, err)
		}
	}
}
