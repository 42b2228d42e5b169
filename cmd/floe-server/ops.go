package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/floehq/floe/transport"
	"github.com/floehq/floe/transport/host"
	"github.com/floehq/floe/transport/request"
)

// newLogger is the server's log on w in format ("text" or "json"): one
// record per line, every value quoted or escaped by log/slog, so that
// nothing a client or a model sent forges a line, and none longer than
// logValueMax. On a logQueue, error records go to its errors' room.
func newLogger(w io.Writer, format string) *slog.Logger {
	if q, ok := w.(*logQueue); ok {
		return slog.New(levelSplit{low: logHandler(q, format), high: logHandler(errorWriter{q}, format)})
	}
	return slog.New(logHandler(w, format))
}

func logHandler(w io.Writer, format string) slog.Handler {
	o := &slog.HandlerOptions{ReplaceAttr: cutValue}
	if format == "json" {
		return slog.NewJSONHandler(w, o)
	}
	return slog.NewTextHandler(w, o)
}

// cutValue cuts a string value longer than logValueMax, saying so.
func cutValue(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindString {
		if s := a.Value.String(); len(s) > logValueMax {
			a.Value = slog.StringValue(strings.ToValidUTF8(s[:logValueMax], "") + "…[cut " + strconv.Itoa(len(s)-logValueMax) + " bytes]")
		}
	}
	return a
}

// levelSplit hands error records to high, the others to low.
type levelSplit struct{ low, high slog.Handler }

func (h levelSplit) Enabled(ctx context.Context, l slog.Level) bool {
	return h.low.Enabled(ctx, l)
}

func (h levelSplit) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		return h.high.Handle(ctx, r)
	}
	return h.low.Handle(ctx, r)
}

func (h levelSplit) WithAttrs(as []slog.Attr) slog.Handler {
	return levelSplit{h.low.WithAttrs(as), h.high.WithAttrs(as)}
}

func (h levelSplit) WithGroup(name string) slog.Handler {
	return levelSplit{h.low.WithGroup(name), h.high.WithGroup(name)}
}

// ops are the routes of this server's own, beside TRANSPORT.md's /api/…:
// /healthz, /readyz and /metrics.
type ops struct {
	reg     *host.Registry
	metrics *transport.Metrics
	dir     string // the Trace directory; "" = memory
	token   string // /metrics's bearer token; "" = none
	start   time.Time
	now     func() time.Time
	log     *slog.Logger
	// logDropped counts the log's records dropped (logQueue); nil: none.
	logDropped func() int64
	// draining is set at a shutdown's start: /readyz answers 503 from
	// then on, so that a load balancer sends no more.
	draining atomic.Bool
	// dirOK is the last /readyz's finding on the directory, so that a
	// failure is logged when it begins, not at every probe.
	dirOK atomic.Bool
	// check is checkDir; after is time.After (a test's hang and fire
	// when it says).
	check func(dir string) error
	after func(time.Duration) <-chan time.Time
	// The directory's last check (dirStatus): its end and finding, and
	// the one under way's end (nil: none).
	dirMu   sync.Mutex
	dirAt   time.Time
	dirErr  error
	dirDone chan struct{}
}

// dirCheckTTL is how long /readyz answers with the Trace directory's last
// check's finding before it checks again; dirCheckTimeout is how long it
// waits for a check (a probe's own timeout is a second by default).
const (
	dirCheckTTL     = time.Second
	dirCheckTimeout = 800 * time.Millisecond
)

// errDirSlow is /readyz's finding on a directory whose check did not end
// within dirCheckTimeout.
var errDirSlow = errors.New("the Trace directory did not answer within " + dirCheckTimeout.String() + " (a file system that hangs?)")

// dirStatus is the Trace directory's check (checkDir), one at a time, its
// finding kept for dirCheckTTL: /readyz answers whoever asks, without a
// token, and each check creates and removes a file. A check that hangs (a
// file system that stopped answering) is waited for dirCheckTimeout at
// most, errDirSlow then, and the probes after it wait for the same check
// rather than start their own: one goroutine, not one a probe, is stuck
// in the file system.
func (o *ops) dirStatus() error {
	o.dirMu.Lock()
	if o.dirDone == nil && !o.dirAt.IsZero() && o.now().Sub(o.dirAt) < dirCheckTTL {
		err := o.dirErr
		o.dirMu.Unlock()
		return err
	}
	if o.dirDone == nil {
		done := make(chan struct{})
		o.dirDone = done
		go func() {
			err := o.check(o.dir)
			o.dirMu.Lock()
			o.dirAt, o.dirErr, o.dirDone = o.now(), err, nil
			o.dirMu.Unlock()
			close(done)
		}()
	}
	done := o.dirDone
	o.dirMu.Unlock()
	select {
	case <-done:
		o.dirMu.Lock()
		defer o.dirMu.Unlock()
		return o.dirErr
	case <-o.after(dirCheckTimeout):
		return errDirSlow
	}
}

// route serves path's route of ops; false for a path of the API's.
func (o *ops) route(w http.ResponseWriter, r *http.Request) bool {
	switch r.URL.Path {
	case "/healthz":
		if probeMethod(w, r) {
			probe(w, http.StatusOK, "ok")
		}
	case "/readyz":
		if probeMethod(w, r) {
			o.ready(w)
		}
	case "/metrics":
		if !probeMethod(w, r) {
			break
		}
		if o.token != "" && !request.Authorized(r.Header.Get("Authorization"), o.token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="floe-metrics"`)
			probe(w, http.StatusUnauthorized, "missing or wrong bearer token")
			break
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if r.Method == http.MethodGet {
			o.writeMetrics(w)
		}
	default:
		return false
	}
	return true
}

// probeMethod reports whether r is a GET or a HEAD, else answers 405.
func probeMethod(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	probe(w, http.StatusMethodNotAllowed, "method not allowed; use GET or HEAD")
	return false
}

// probe answers a line of text, never cached.
func probe(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	io.WriteString(w, text+"\n")
}

// ready answers /readyz: 503 while the server drains or when the Trace
// directory cannot be listed or written (a disk gone read-only, full, or
// unmounted), which the log says once, with the reason; 200 otherwise.
func (o *ops) ready(w http.ResponseWriter) {
	if o.draining.Load() {
		probe(w, http.StatusServiceUnavailable, "draining: the server is shutting down")
		return
	}
	if o.dir != "" {
		if err := o.dirStatus(); err != nil {
			if o.dirOK.Swap(false) {
				o.log.Error("not ready: the Trace directory", "err", err.Error())
			}
			probe(w, http.StatusServiceUnavailable, "not ready: the Trace directory cannot be used (the log says why)")
			return
		}
		if !o.dirOK.Swap(true) {
			o.log.Info("ready: the Trace directory can be used")
		}
	}
	probe(w, http.StatusOK, "ready")
}

// family is one metric family of /metrics.
type family struct {
	name, kind, help string
	series           []series
}

type series struct {
	labels string // {status="completed"}, or ""
	value  float64
}

func one(v int64) []series { return []series{{value: float64(v)}} }

func byStatus(c *[len(transport.Statuses)]atomic.Int64) []series {
	out := make([]series, len(transport.Statuses))
	for i, s := range transport.Statuses {
		out[i] = series{labels: `{status="` + labelValue(s) + `"}`, value: float64(c[i].Load())}
	}
	return out
}

// labelValue escapes a label value as the text format wants: \, " and a
// line feed.
func labelValue(v string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v)
}

// families are the server's metrics as of now.
func (o *ops) families() []family {
	m := o.metrics
	c := o.reg.Counts()
	draining := int64(0)
	if o.draining.Load() {
		draining = 1
	}
	dropped := int64(0)
	if o.logDropped != nil {
		dropped = o.logDropped()
	}
	return []family{
		{"floe_sessions_open", "gauge", "Sessions held in memory (opened or created since the start).", one(int64(c.Open))},
		{"floe_sessions_running", "gauge", "Sessions with a run or compaction in flight.", one(int64(c.Running))},
		{"floe_sessions_warm", "gauge", "Idle sessions keeping their model context (--keep-warm).", one(int64(c.Warm))},
		{"floe_runs_started_total", "counter", "Runs and compactions started.", one(m.RunsStarted.Load())},
		{"floe_runs_ended_total", "counter", "Runs and compactions ended, by status (aborted after an abort, else the last request's).", byStatus(&m.RunsEnded)},
		{"floe_model_requests_total", "counter", "Model requests ended (request_end), subagents' included, by status.", byStatus(&m.ModelRequests)},
		{"floe_tool_calls_total", "counter", "Tool calls of the models, subagents' included.", one(m.ToolCalls.Load())},
		{"floe_approvals_pending", "gauge", "Tool calls waiting for an approval decision.", one(m.ApprovalsPending.Load())},
		{"floe_streams_open", "gauge", "SSE streams being served.", one(m.StreamsOpen.Load())},
		{"floe_streams_refused_total", "counter", "Streams refused with 429 too_many_streams (--max-streams).", one(m.StreamsRefused.Load())},
		{"floe_stream_events_replayed_total", "counter", "Events replayed to streams that reconnected with a Last-Event-ID.", one(m.EventsReplayed.Load())},
		{"floe_stream_resyncs_total", "counter", "Streams that reconnected past the replay buffer (resync_required).", one(m.Resyncs.Load())},
		{"floe_trace_written_bytes_total", "counter", "Bytes written to Traces.", one(m.TraceBytes.Load())},
		{"floe_trace_write_errors_total", "counter", "Trace writes that failed (the run goes on without them).", one(m.TraceErrors.Load())},
		{"floe_log_lines_dropped_total", "counter", "Log records dropped while the log's writer (stderr) was blocked and its queue full, or left queued at the exit.", one(dropped)},
		{"floe_draining", "gauge", "1 while the server shuts down, else 0.", one(draining)},
		{"floe_uptime_seconds", "gauge", "Seconds since the server started.", []series{{value: o.now().Sub(o.start).Seconds()}}},
	}
}

// writeMetrics writes the families in the Prometheus text exposition
// format, version 0.0.4.
func (o *ops) writeMetrics(w io.Writer) {
	var b []byte
	for _, f := range o.families() {
		b = append(b, "# HELP "+f.name+" "+f.help+"\n# TYPE "+f.name+" "+f.kind+"\n"...)
		for _, s := range f.series {
			b = append(b, f.name+s.labels+" "...)
			b = strconv.AppendFloat(b, s.value, 'g', -1, 64)
			b = append(b, '\n')
		}
	}
	w.Write(b)
}

// route is the template of an /api/… path for the log, its session and
// tool call ids left out (a client chooses them): /api/sessions/{id}/stream.
// Another path is "other", so that a scan of random paths does not fill
// the log with them.
func routeTemplate(path string) string {
	switch path {
	case "/healthz", "/readyz", "/metrics", "/api/sessions", "/api/events":
		return path
	}
	parts := strings.Split(path, "/")
	if len(parts) < 4 || parts[0] != "" || parts[1] != "api" || parts[2] != "sessions" {
		return "other"
	}
	switch {
	case len(parts) == 4:
		return "/api/sessions/{id}"
	case len(parts) == 5:
		if _, ok := sessionActions[parts[4]]; ok {
			return "/api/sessions/{id}/" + parts[4]
		}
	case len(parts) == 6 && parts[4] == "approvals":
		return "/api/sessions/{id}/approvals/{callId}"
	}
	return "other"
}

var sessionActions = map[string]struct{}{"stream": {}, "messages": {}, "tasks": {}, "steer": {}, "abort": {}, "retry-now": {}, "compact": {}}

// statusWriter records a response's status for the log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (the streams'
// flushes and write deadlines).
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// logRequests logs one line per request, at its end: its method, its
// route's template (no ids, no query), its status and its duration. No
// header, body or query is logged: they hold the token, prompts and keys.
func logRequests(h http.Handler, log *slog.Logger, now func() time.Time) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := now()
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			p := recover()
			if p != nil && p != http.ErrAbortHandler {
				// A handler's bug: logged with its stack, and the client
				// gets a 500 rather than a connection closed unanswered
				// (the request was logged 200).
				log.Error("panic", "route", routeTemplate(r.URL.Path), "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if sw.status == 0 {
					w.Header().Set("Content-Type", "application/json")
					sw.WriteHeader(http.StatusInternalServerError)
					io.WriteString(w, `{"error":{"code":"internal","message":"internal error: the server's log says more"}}`+"\n")
					p = nil
				}
			}
			status := sw.status
			if status == 0 {
				status = http.StatusOK
			}
			method := r.Method
			switch method {
			case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
			default:
				method = "other"
			}
			attrs := []any{"method", method, "route", routeTemplate(r.URL.Path), "status", status, "duration_ms", now().Sub(start).Milliseconds()}
			if p != nil {
				attrs = append(attrs, "cut_off", true) // the response begun, then the handler panicked
			}
			log.Info("request", attrs...)
			if p != nil {
				// A response begun: net/http closes the connection, so
				// that the client does not take it for a whole one.
				panic(http.ErrAbortHandler)
			}
		}()
		h.ServeHTTP(sw, r)
	})
}

// logRunEnd logs a run's or a compaction's end.
func logRunEnd(log *slog.Logger) func(host.RunEnd) {
	return func(e host.RunEnd) {
		kind := "run"
		if e.Compaction {
			kind = "compaction"
		}
		log.Info(kind+" ended", "session", e.SessionID, "status", e.Status, "duration_ms", e.Duration.Milliseconds())
	}
}

var stderr io.Writer = os.Stderr
