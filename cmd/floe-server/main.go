// Command floe-server hosts Floe sessions over HTTP and SSE (TRANSPORT.md):
// every session's Trace in a directory in the reference layout, resumed from
// it after a restart; the playground's scripted model by default, so it runs
// offline, or a provider model (the adapters of package provider over
// net/http) working in the playground's demo workspace.
//
// Usage:
//
//	floe-server [--port 8787] [--host 127.0.0.1] [--dir floe-sessions]
//	            [--model scripted|openai|openai-compatible|openai-responses|anthropic]
//	            [--model-id NAME] [--base-url URL] [--api-key-env NAME]
//	            [--system TEXT] [--context-window N]
//	            [--delay 30ms] [--mode ask|allow-all|deny-all|read-only]
//	            [--token T] [--origin https://app.example,…] [--replay-events N]
//	            [--keep-warm N] [--keep-warm-mb N] [--shutdown-grace 10s]
//	            [--log-format text|json] [--metrics-token T]
//
// --dir :memory: keeps Traces in memory. Each flag may also come from its
// environment variable (FLOE_TOKEN for --token, FLOE_MAX_STREAMS for
// --max-streams), the command line winning; a FLOE_ variable that is no
// flag's is refused. Beside the API, /healthz, /readyz and /metrics are
// the operator's (ops.go). With --port 0 the system picks a port;
// the "listening on" line names it. A provider model's key comes from the
// environment: OPENAI_API_KEY (openai, openai-responses), ANTHROPIC_API_KEY
// (anthropic), or the variable --api-key-env names (openai-compatible sends
// no key without it; with --base-url the others need none either). Bad
// flags exit with status 2.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/transport"
	"github.com/floehq/floe/transport/cors"
	"github.com/floehq/floe/transport/host"
	"github.com/floehq/floe/transport/server"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("floe-server: ")
	o, err := parseAll(os.Args[1:], os.Getenv, os.Environ())
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	var pe parseError
	if errors.As(err, &pe) {
		os.Exit(2) // the flag package has said what was wrong, with the usage
	}
	if err != nil {
		log.Print(err)
		os.Exit(2)
	}
	// The first SIGINT or SIGTERM shuts the server down (its runs aborted,
	// the requests in flight given shutdownGrace); the signals' default
	// comes back before, so that a second one ends the process at once.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() {
		select {
		case <-sig:
			signal.Reset(os.Interrupt, syscall.SIGTERM)
			stop()
		case <-ctx.Done():
		}
	}()
	ro := defaultRunOpts()
	// The log is queued (logQueue): a stderr that blocks holds no request.
	ro.logq = newLogQueue(os.Stderr, o.logFormat, defaultLogBounds)
	ro.grace, ro.metricsToken, ro.log = o.grace, o.metricsToken, newLogger(ro.logq, o.logFormat)
	if err := serve(ctx, o.cfg, o.addr, os.Stdout, ro); err != nil {
		flush, cancel := context.WithTimeout(context.Background(), logFlushGrace)
		ro.logq.Flush(flush)
		cancel()
		log.Fatal(err)
	}
}

// shutdownGrace is how long a server told to stop waits, once its runs'
// grace (--shutdown-grace) is over, for the runs it aborts and the
// requests in flight; its streams end once the runs have.
const shutdownGrace = 10 * time.Second

// runOpts are serve's settings beside the server's.
type runOpts struct {
	lim          limits
	grace        time.Duration // the runs' at a shutdown, before they are aborted
	metricsToken string        // "": the server's token
	log          *slog.Logger
	// logq, when set, is log's writer: its dropped records are counted in
	// /metrics, and what it holds is written before serve returns (within
	// what is left of shutdownGrace, and at least logFlush).
	logq *logQueue
	// shutdownGrace and logFlush are the consts of their names, a test's
	// when set.
	shutdownGrace, logFlush time.Duration
	// flushing, when set, is called before the log is flushed at the end.
	flushing func()
	now      func() time.Time
	// after is time.After; a test's fires when it says.
	after func(time.Duration) <-chan time.Time
	// draining, when set, is called once the server drains (readiness
	// 503, new runs refused), before the runs' grace.
	draining func()
	// checkDir, when set, is /readyz's check of the Trace directory (a
	// test's hangs); nil: checkDir.
	checkDir func(dir string) error
}

func defaultRunOpts() runOpts {
	return runOpts{lim: defaultLimits, grace: 10 * time.Second, log: newLogger(stderr, "text"), now: time.Now, after: time.After}
}

// limits are the server's connection timeouts: a client that sends a
// request's head or body slower, or keeps a connection open without a
// request longer, is disconnected, so that clients that dribble bytes
// (slowloris) or keep idle connections cannot hold the server's
// connections and goroutines. A stream, which sends and never reads, is
// bounded by none of them (its writes are: api.DefaultWriteTimeout).
type limits struct {
	header time.Duration // a request's head, from its first byte
	body   time.Duration // a request's body, from its head's end
	idle   time.Duration // a kept-alive connection between two requests
}

var defaultLimits = limits{header: 10 * time.Second, body: 2 * time.Minute, idle: 2 * time.Minute}

// options are what the command line and the environment configure.
type options struct {
	cfg          server.Config
	addr         string
	grace        time.Duration // the runs' at a shutdown (--shutdown-grace)
	logFormat    string        // text or json
	metricsToken string        // /metrics's bearer token ("": --token's)
}

// parse is parseAll with the FLOE_ variables getenv gives a non-empty
// value, returning the server's configuration and address.
func parse(args []string, getenv func(string) string) (server.Config, string, error) {
	o, err := parseAll(args, getenv, nil)
	return o.cfg, o.addr, err
}

// envName is the variable of flag name: FLOE_ and its name in capitals,
// "-" as "_" (FLOE_MAX_STREAMS).
func envName(name string) string {
	return "FLOE_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// toolVars are FLOE_ variables the repository's build and test scripts
// read: a developer's shell may hold them, so floe-server does not refuse
// them as misspellings.
var toolVars = []string{"FLOE_SHARED", "FLOE_TEST_PORT", "FLOE_WASM_GCFLAGS", "FLOE_WASM_BUDGET", "FLOE_CHROMIUM",
	"FLOE_FIREFOX", "FLOE_PEERS", "FLOE_STATIC", "FLOE_SERVE", "FLOE_SCREENSHOT_DIR", "FLOE_BENCH_WORDS",
	"FLOE_WEBKIT_DRIVER", "FLOE_VITE_PORT", "FLOE_WORKERD_PORT", "FLOE_TRACE_LOCK_DIR", "FLOE_CONFORM_TIMEOUT_MS", "FLOE_TEST_BUILT", "FLOE_PACK_DIR", "FLOE_BROWSER_JOBS",
	"FLOE_FIREFOX_JOBS", "FLOE_WORKER_JOBS"}

// unknownVar names a FLOE_ variable of environ ("NAME=value" each) that is
// no flag's, the one --api-key-env names or toolVars' (a misspelling most
// likely: FLOE_TOKN would leave the API open), with the variables it is
// nearest to; "" when there is none. Case and a hyphen for the underscore
// are misspellings too, as the Worker says.
func unknownVar(environ []string, known []string, keyEnv string) string {
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		norm := strings.ReplaceAll(strings.ToUpper(strings.TrimSpace(name)), "-", "_")
		if !strings.HasPrefix(norm, "FLOE_") || name == keyEnv || slices.Contains(known, name) || slices.Contains(toolVars, name) {
			continue
		}
		var best []string
		bestD := 4 // at most 3 edits away
		for _, v := range known {
			if d := distance(norm, v); d < bestD {
				best, bestD = []string{v}, d
			} else if d == bestD {
				best = append(best, v)
			}
		}
		shown := strconv.Quote(name)
		if len(best) > 0 {
			return shown + ": not a variable of floe-server (did you mean " + strings.Join(best, " or ") + "?)"
		}
		return shown + ": not a variable of floe-server (it reads " + strings.Join(known, ", ") + ")"
	}
	return ""
}

// distance is the Levenshtein distance of a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// parseAll parses args, then takes each flag not given there from its
// FLOE_ variable (envName): from environ ("NAME=value" each, os.Environ)
// when it is not nil, else the ones getenv gives a non-empty value.
// getenv also reads a provider's API key.
func parseAll(args []string, getenv func(string) string, environ []string) (options, error) {
	fail := func(err error) (options, error) { return options{}, err }
	fs := flag.NewFlagSet("floe-server", flag.ContinueOnError)
	port := fs.Int("port", 8787, "port to listen on (0: any free port)")
	hostname := fs.String("host", "127.0.0.1", "interface to listen on")
	dir := fs.String("dir", "floe-sessions", "Trace directory (:memory: keeps Traces in memory)")
	model := fs.String("model", "scripted", "model of new and resumed sessions: "+server.ModelNames)
	modelID := fs.String("model-id", "", "provider model: the model name the provider knows (required)")
	baseURL := fs.String("base-url", "", "provider model: the API base URL (required for openai-compatible)")
	keyEnv := fs.String("api-key-env", "", "provider model: the environment variable holding the API key")
	system := fs.String("system", "", "provider model: the system prompt of new sessions (default: one for the demo workspace)")
	window := fs.String("context-window", "", "provider model: its context window in tokens, for session_meta (default 0: unknown)")
	idle := fs.String("idle-timeout", "", "provider model: end a request that waits this long on the provider without a byte, then retry it (a duration: 90s, 5m; 0: never; default 5m)")
	gemini := fs.Bool("gemini", false, "provider model openai or openai-compatible: speak the dialect of Gemini's OpenAI-compatible endpoint (thought signatures sent back on tool calls) at any base URL; Google's own host is known without it")
	imageBytes := fs.String("max-image-bytes", "", "provider model: what a request's images may take, in bytes of their data: URLs' base64 (a PDF's counts too); past it, or past --max-images, the oldest go as a text saying so (0: no limit; default 24000000 for anthropic, 40000000 for openai, 16000000 to Gemini)")
	images := fs.String("max-images", "", "provider model: how many images a request may carry, as --max-image-bytes (0: no limit; default 100 for anthropic, 500 for openai)")
	noImages := fs.Bool("no-images", false, "provider model: a model without vision (DeepSeek's): each image goes as a text saying the model takes none")
	opened := fs.Bool("starts-in-thinking", false, "provider model openai, openai-compatible or openai-responses: the model's chat template opens the thinking (<think> ends the prompt: DeepSeek-R1's, QwQ's): a reply is thinking until its </think>")
	delay := fs.Duration("delay", 30*time.Millisecond, "scripted model: wait between two streamed deltas (a duration: 30ms, 1s)")
	mode := fs.String("mode", "ask", "default approval mode: ask, allow-all, deny-all or read-only")
	// Not the flag's default: -h would print the token.
	token := fs.String("token", "", "bearer token required on every route (default: $FLOE_TOKEN; empty: none)")
	origins := fs.String("origin", "", "comma-separated CORS origins (* for any)")
	replay := fs.Int("replay-events", 0, "replay buffer bound in events (0: 10,000)")
	maxStreams := fs.Int("max-streams", transport.DefaultMaxSubscribers, "streams of one session open at once (and of /api/events); past it a stream is refused, 429 too_many_streams (0: no bound)")
	keepWarm := fs.Int("keep-warm", host.DefaultKeepWarm, "idle sessions that keep their model context in memory between runs; the others resume from their Trace at their next run (0: none)")
	keepWarmMB := fs.Int("keep-warm-mb", 0, "bound of the idle sessions kept warm by their Traces' size, in MB of their current files (past it, the one idle the longest lets its context go); 0: no bound")
	grace := fs.Duration("shutdown-grace", 10*time.Second, "at SIGTERM or SIGINT, how long the runs in flight may go on before they are aborted (0: aborted at once); /readyz answers 503 and new runs are refused meanwhile")
	logFormat := fs.String("log-format", "text", "the log's format on stderr: text or json (one record per line)")
	metricsToken := fs.String("metrics-token", "", "bearer token of GET /metrics (default: --token's; empty, with no --token: none)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage of floe-server (each flag may also come from its variable, FLOE_PORT for --port, FLOE_MAX_STREAMS for --max-streams; the command line wins):\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return fail(err)
		}
		return fail(parseError{err})
	}
	if fs.NArg() > 0 {
		return fail(fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	// Each flag not on the command line from its variable; a flag's name
	// in an error is then the variable's (named), as NAME=value.
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	lookup := func(name string) (string, bool) {
		v := getenv(name)
		return v, v != ""
	}
	if environ != nil {
		env := map[string]string{}
		for _, kv := range environ {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		lookup = func(name string) (string, bool) { v, ok := env[name]; return v, ok }
	}
	var known []string
	fromEnv := map[string]bool{}
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		known = append(known, envName(f.Name))
		v, ok := lookup(envName(f.Name))
		if set[f.Name] || !ok || envErr != nil {
			return
		}
		if err := fs.Set(f.Name, v); err != nil {
			envErr = fmt.Errorf("%s=%s: %s", envName(f.Name), strconv.Quote(v), want(f, err))
			return
		}
		set[f.Name], fromEnv[f.Name] = true, true
	})
	if envErr != nil {
		return fail(envErr)
	}
	if msg := unknownVar(environ, known, *keyEnv); msg != "" {
		return fail(errors.New(msg))
	}
	// named is how an error names a flag's value: --port 70000, or
	// FLOE_PORT=70000 when it came from there.
	named := func(name, value string) string {
		if fromEnv[name] {
			return envName(name) + "=" + value
		}
		return "--" + name + " " + value
	}
	if *port < 0 || *port > 65535 {
		return fail(fmt.Errorf("%s: out of range", named("port", strconv.Itoa(*port))))
	}
	if !host.ValidMode(*mode) {
		return fail(fmt.Errorf("%s: want ask, allow-all, deny-all or read-only", named("mode", strconv.Quote(*mode))))
	}
	if *dir == "" {
		// An empty value (an unset variable in a script) kept the Traces
		// in memory: every session was lost at the next restart.
		name := "--dir"
		if fromEnv["dir"] {
			name = envName("dir")
		}
		return fail(fmt.Errorf("%s: empty; want a directory, or :memory: to keep the Traces in memory", name))
	}
	if *hostname == "" {
		// Go listens on every interface at an empty host: an unset
		// variable in a script opened the server to the network.
		name := "--host"
		if fromEnv["host"] {
			name = envName("host")
		}
		return fail(fmt.Errorf("%s: empty; want an address to listen on, such as 127.0.0.1 (or 0.0.0.0 for every interface)", name))
	}
	if *delay < 0 {
		return fail(fmt.Errorf("%s: want 0 or more", named("delay", delay.String())))
	}
	if *grace < 0 {
		return fail(fmt.Errorf("%s: want 0 or more", named("shutdown-grace", grace.String())))
	}
	for _, tk := range []struct{ flag, value string }{{"token", *token}, {"metrics-token", *metricsToken}} {
		if msg := tokenProblem(tk.value); msg != "" {
			name := "--" + tk.flag
			if fromEnv[tk.flag] {
				name = envName(tk.flag)
			}
			return fail(fmt.Errorf("%s: %s", name, msg)) // never the token itself
		}
	}
	if *logFormat != "text" && *logFormat != "json" {
		return fail(fmt.Errorf("%s: want text or json", named("log-format", strconv.Quote(*logFormat))))
	}
	if *replay < 0 {
		return fail(fmt.Errorf("%s: want 0 or more (0: 10,000)", named("replay-events", strconv.Itoa(*replay))))
	}
	if *maxStreams < 0 {
		return fail(fmt.Errorf("%s: want 0 (no bound) or more", named("max-streams", strconv.Itoa(*maxStreams))))
	}
	if *maxStreams == 0 {
		*maxStreams = -1 // transport.Options: no bound
	}
	if *keepWarm < 0 {
		return fail(fmt.Errorf("%s: want 0 or more", named("keep-warm", strconv.Itoa(*keepWarm))))
	}
	if *keepWarmMB < 0 {
		return fail(fmt.Errorf("%s: want 0 (no bound) or more", named("keep-warm-mb", strconv.Itoa(*keepWarmMB))))
	}
	if *keepWarmMB > 1<<30 {
		return fail(fmt.Errorf("%s: want at most %d (1 PB)", named("keep-warm-mb", strconv.Itoa(*keepWarmMB)), 1<<30))
	}
	if *keepWarm == 0 {
		*keepWarm = -1 // host.Config: none
	}
	mc, err := modelFlags(*model, *modelID, *baseURL, *keyEnv, *system, *window, *idle, strconv.FormatBool(*gemini), *imageBytes, *images, strconv.FormatBool(*noImages), strconv.FormatBool(*opened), set, fromEnv, getenv)
	if err != nil {
		return fail(err)
	}
	cfg := server.Config{Dir: *dir, Delay: *delay, Mode: *mode, Token: *token,
		Channel: transport.Options{MaxEvents: *replay, MaxSubscribers: *maxStreams}, KeepWarm: *keepWarm,
		KeepWarmBytes: int64(*keepWarmMB) << 20}
	if *dir == ":memory:" {
		cfg.Dir = ""
	}
	if *origins != "" {
		cfg.Origins = cors.ParseOrigins(*origins)
		for _, o := range cfg.Origins {
			if !validOrigin(o) {
				return fail(fmt.Errorf("%s: want origins such as https://app.example or http://127.0.0.1:8080 (scheme, host and port, no path), comma-separated, or *", named("origin", strconv.Quote(o))))
			}
			// Without a token, every page a browser opens would list,
			// read, run and delete the sessions, on the server's model
			// key: the origin is all that stops a page.
			if o == "*" && *token == "" {
				return fail(fmt.Errorf("%s: any origin, without a --token: every web page a browser opens could then read and run the sessions; name the pages' origins, or give a --token as well", named("origin", strconv.Quote(*origins))))
			}
		}
	}
	if err := applyModel(mc, &cfg, named("model", mc.Kind)); err != nil {
		return fail(err)
	}
	return options{cfg: cfg, addr: net.JoinHostPort(*hostname, strconv.Itoa(*port)), grace: *grace, logFormat: *logFormat, metricsToken: *metricsToken}, nil
}

// run serves cfg on addr until ctx is done, then shuts down: it stops
// accepting, aborts the runs in flight and waits for them to end, ends
// every stream after what was queued for it (streams never end on their
// own), lets the other requests in flight finish (all for at most
// shutdownGrace) and returns. The "listening on" line goes to out.
func run(ctx context.Context, cfg server.Config, addr string, out io.Writer) error {
	return serve(ctx, cfg, addr, out, defaultRunOpts())
}

// serve is run with ro.
func serve(ctx context.Context, cfg server.Config, addr string, out io.Writer, ro runOpts) error {
	if ro.log == nil {
		ro.log = newLogger(stderr, "text")
	}
	if ro.now == nil {
		ro.now = time.Now
	}
	if ro.after == nil {
		ro.after = time.After
	}
	if cfg.Dir != "" {
		if err := checkDir(cfg.Dir); err != nil {
			return err
		}
	}
	if cfg.Metrics == nil {
		cfg.Metrics = &transport.Metrics{}
	}
	if cfg.OnDiagnostic == nil {
		cfg.OnDiagnostic = logDiagnostic(ro.log)
	}
	if cfg.OnRunEnd == nil {
		cfg.OnRunEnd = logRunEnd(ro.log)
	}
	srv, err := server.New(cfg)
	if err != nil {
		return err
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	o := &ops{reg: srv.Registry, metrics: cfg.Metrics, dir: cfg.Dir, token: cfg.Token, start: ro.now(), now: ro.now, log: ro.log,
		check: checkDir, after: ro.after}
	if ro.checkDir != nil {
		o.check = ro.checkDir
	}
	if ro.metricsToken != "" {
		o.token = ro.metricsToken
	}
	if ro.logq != nil {
		o.logDropped = ro.logq.Dropped
	}
	o.dirOK.Store(true)
	api := srv.Handler
	metrics := http.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { o.route(w, r) }))
	if h, _, _ := net.SplitHostPort(addr); loopbackName(h) || cfg.Token == "" {
		api = namedHostsOnly(api, h, cfg.Origins)
		metrics = namedHostsOnly(metrics, h, cfg.Origins)
	}
	// /healthz and /readyz answer whoever asks (a probe sends no token and
	// may name any host); /metrics, as the API, is for the operator only.
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			metrics.ServeHTTP(w, r)
		} else if !o.route(w, r) {
			api.ServeHTTP(w, r)
		}
	})
	lim := ro.lim
	hs := &http.Server{Handler: logRequests(bodyDeadline(handler, lim.body), ro.log, ro.now), ReadHeaderTimeout: lim.header, IdleTimeout: lim.idle,
		// net/http's own complaints (a handshake that failed, an accept
		// error) are records of the log too, queued as the others.
		ErrorLog: slog.NewLogLogger(ro.log.Handler(), slog.LevelWarn)}
	where := cfg.Dir
	if where == "" {
		where = "memory"
	}
	if h, _, _ := net.SplitHostPort(addr); cfg.Token == "" && !loopbackName(h) {
		// As the Worker without FLOE_TOKEN: the API is open, as asked, and
		// the log says so once. On a loopback address only this machine's
		// programs reach it.
		ro.log.Warn("no --token: the API answers whoever reaches this address; give a --token, or listen on a loopback --host", "addr", ln.Addr().String())
	}
	fmt.Fprintf(out, "floe-server: listening on http://%s/ (Traces in %s, model %s)\n", ln.Addr(), where, cfg.Model)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// Draining: /readyz answers 503 so that a load balancer sends no
	// more, no run starts (503 shutting_down), and the runs in flight
	// have ro.grace to end on their own.
	o.draining.Store(true)
	srv.Registry.Drain()
	ro.log.Info("draining", "grace", ro.grace.String(), "running", srv.Registry.Counts().Running)
	if ro.draining != nil {
		ro.draining()
	}
	if ro.grace > 0 {
		idle, over := context.WithCancel(context.Background())
		timer := ro.after(ro.grace)
		go func() {
			select {
			case <-timer:
				over()
			case <-idle.Done():
			}
		}()
		srv.Registry.Idle(idle)
		over()
	}
	if n := srv.Registry.Counts().Running; n > 0 {
		ro.log.Info("aborting the runs left", "running", n)
	}
	if ro.shutdownGrace == 0 {
		ro.shutdownGrace = shutdownGrace
	}
	grace, cancel := context.WithTimeout(context.Background(), ro.shutdownGrace)
	defer cancel()
	// The runs in flight are aborted and end (their Traces written, their
	// sessions' locks let go), then the streams, which the HTTP server
	// waits for with the other requests in flight.
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		srv.Shutdown(grace)
	}()
	if hs.Shutdown(grace) != nil {
		hs.Close()
	}
	<-served // Serve returned ErrServerClosed at once
	<-stopped
	ro.log.Info("stopped")
	if ro.logq != nil {
		// What the log holds, written before the process exits: within
		// what is left of shutdownGrace, and at least logFlushGrace (a
		// server whose requests took all of it still writes its last
		// records). A writer still blocked then loses them, counted.
		if ro.logFlush == 0 {
			ro.logFlush = logFlushGrace
		}
		d, _ := grace.Deadline()
		flush, cancel := context.WithTimeout(context.Background(), max(time.Until(d), ro.logFlush))
		defer cancel()
		if ro.flushing != nil {
			ro.flushing()
		}
		ro.logq.Flush(flush)
	}
	return nil
}

// bodyDeadline gives the body of each request a read deadline d after its
// head; a body that misses it fails its reads with an error that names the
// timeout. (net/http lifts the deadline at the body's end, as it starts
// the read that watches for the client leaving; http.Server's ReadTimeout
// would bound the streams as well, whose requests it ends then.)
func bodyDeadline(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			if http.NewResponseController(w).SetReadDeadline(time.Now().Add(d)) == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, d: d}
			}
		}
		h.ServeHTTP(w, r)
	})
}

// deadlineBody is a request body under a read deadline (bodyDeadline);
// its error at the deadline says so, and names no address.
type deadlineBody struct {
	io.ReadCloser
	d time.Duration
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		// Not err itself: a *net.OpError names the connection's two
		// addresses, behind a proxy the server's and the proxy's.
		err = fmt.Errorf("the request body did not arrive within %s: %w", b.d, os.ErrDeadlineExceeded)
	}
	return n, err
}

// validOrigin reports whether o can match a browser's Origin header: "*",
// or a scheme, "://" and a host with an optional port.
func validOrigin(o string) bool {
	if o == "*" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.Path == "" && u.User == nil && u.RawQuery == "" && u.Fragment == "" && !strings.ContainsAny(o, " \t")
}

// loopbackName reports whether host (without a port) is a loopback name:
// localhost, a name under .localhost (which browsers resolve to loopback
// themselves) or a loopback IP.
func loopbackName(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// namedHostsOnly wraps the handler of a server that listens on host, a
// loopback address or another without a --token: it answers only requests
// sent to a loopback name, to the host of one of origins or, on another
// address, to an IP address or host itself (421 otherwise). A page on a
// name of someone else's that resolves to the server's address (DNS
// rebinding) is of the same origin as the server for its browser, so
// neither the Origin check nor CORS stops it; its Host names it. On a
// loopback address that page could be any site the machine's user visits;
// on another address without a token, any site a user of its network
// visits, and the server has nothing else to refuse it with (a name needs
// a --token). A reverse proxy in front of the server may pass on the
// public name its pages are served under (Caddy and Go's
// httputil.NewSingleHostReverseProxy do by default): that name is the
// operator's, and --origin names it ("*" names no host).
func namedHostsOnly(h http.Handler, host string, origins []string) http.Handler {
	var named []string
	for _, o := range origins {
		if u, err := url.Parse(o); err == nil && o != "*" && u.Hostname() != "" {
			named = append(named, u.Hostname())
		}
	}
	loopback := loopbackName(host)
	if !loopback && net.ParseIP(strings.Trim(host, "[]")) == nil {
		named = append(named, strings.TrimSuffix(host, ".")) // --host gave a name of the operator's
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.Host
		if h, _, err := net.SplitHostPort(name); err == nil {
			name = h
		}
		// An IP address is no rebinding: a page of it is of the server.
		ok := loopbackName(name) || !loopback && net.ParseIP(strings.Trim(name, "[]")) != nil
		for _, n := range named {
			ok = ok || strings.EqualFold(strings.TrimSuffix(name, "."), n)
		}
		if !ok {
			var body struct {
				Error struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			body.Error.Code = "host_not_allowed"
			if loopback {
				body.Error.Message = "Host " + strconv.Quote(r.Host) + ": this server listens on a loopback address and answers requests to localhost, a loopback IP or the host of an --origin only; behind a reverse proxy, start it with --origin and the origin of its pages (https://example.com); to serve other names directly, with --host and a --token"
			} else {
				body.Error.Message = "Host " + strconv.Quote(r.Host) + ": this server has no --token and answers requests to an IP address, localhost, its --host or the host of an --origin only (a page on another name may have had that name resolve to this server, to drive it); to serve other names, start it with a --token; behind a reverse proxy, with --origin and the origin of its pages (https://example.com)"
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusMisdirectedRequest)
			json.NewEncoder(w).Encode(body)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// want says what a flag's variable should hold, its value refused by the
// flag with err.
func want(f *flag.Flag, err error) string {
	switch f.Value.(flag.Getter).Get().(type) {
	case bool:
		return "want true or false (1, 0)"
	case int:
		return "want an integer"
	case time.Duration:
		return "want a duration (10s, 1m30s)"
	}
	return err.Error()
}

// tokenProblem says why token can never match an Authorization header,
// or "": HTTP drops the white space around a header's value (and a
// Bearer's own leading spaces), and a header carries no control character.
// A token read from a file with its line feed (a mounted secret) refused
// every request with a 401 that did not say why.
func tokenProblem(token string) string {
	if strings.TrimSpace(token) != token {
		return "the token starts or ends with white space (a line feed from the file it was read from?), which no Authorization header carries: every request would be refused"
	}
	if strings.IndexFunc(token, func(r rune) bool { return r < ' ' || r == 0x7f }) >= 0 {
		return "the token holds a control character, which no Authorization header carries: every request would be refused"
	}
	return ""
}

// parseError is an error of the flag package, which has printed it with the
// usage.
type parseError struct{ error }

func (e parseError) Unwrap() error { return e.error }

// checkDir makes the Trace directory and makes sure the server can list,
// write and remove files there: a directory it cannot read or write
// started the server, which then refused every request with a 500.
func checkDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--dir: %w", err)
	}
	if _, err := os.ReadDir(dir); err != nil {
		return fmt.Errorf("--dir %s: cannot list the Traces: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, ".floe-check-*")
	if err != nil {
		return fmt.Errorf("--dir %s: cannot write Traces: %w", dir, err)
	}
	f.Close()
	if err := os.Remove(f.Name()); err != nil {
		return fmt.Errorf("--dir %s: cannot remove a file: %w", dir, err)
	}
	return nil
}

// logDiagnostic logs a session's diagnostic (a Trace write that failed on
// a full disk, say), which the run goes on without, as one record: a model
// or a tool names what a diagnostic quotes (a tool call's id), and a line
// break in it would forge a line of the log; log/slog quotes it.
func logDiagnostic(log *slog.Logger) func(engine.Diagnostic) {
	return func(d engine.Diagnostic) {
		msg := "<nil>"
		if d.Err != nil {
			msg = d.Err.Error()
		}
		log.Warn("diagnostic", "kind", string(d.Kind), "err", msg)
	}
}
