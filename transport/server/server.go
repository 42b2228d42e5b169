// Package server assembles the native Floe session server: a host.Registry
// over a Trace directory (trace.FileStore, the reference layout) or memory,
// the HTTP API of package transport/api, and the model the sessions use
// (the playground's scripted model by default, so it runs offline).
package server

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/playground"
	"github.com/floehq/floe/transport"
	"github.com/floehq/floe/transport/api"
	"github.com/floehq/floe/transport/host"
)

// Config configures a Server.
type Config struct {
	Dir   string      // Trace directory; "" = in memory
	Store trace.Store // overrides Dir (a Durable Object's SQLite storage)
	Model string      // "scripted" (default)
	// Wire, when set, wires every session instead of Model (the native
	// server's provider models).
	Wire func(meta omni.Message) (host.Wiring, error)
	// NewMeta, when set, replaces NewMeta (the session_meta of new sessions).
	NewMeta func(id string, now time.Time) omni.Message
	Delay   time.Duration // scripted model: wait between two deltas; 0 = none
	Mode    string        // default approval mode; "" = ask
	Token   string        // bearer token; "" = no authentication
	Origins []string      // CORS origins
	Channel transport.Options
	Clock   engine.Clock // nil = the system clock
	// WriteTimeout bounds each write to a stream (api.Options.WriteTimeout):
	// 0 = api.DefaultWriteTimeout.
	WriteTimeout time.Duration
	// ReadOnly overrides which tools read-only mode allows (nil: the
	// demo workspace's tools that only read, playground.ReadsOnly).
	ReadOnly func(tool string) bool
	// KeepWarm is host.Config.KeepWarm: how many idle sessions keep their
	// model context between runs (0: host.DefaultKeepWarm; < 0: none).
	KeepWarm int
	// KeepWarmBytes is host.Config.KeepWarmBytes: the bound, in bytes of
	// their Traces' current files, of the idle sessions kept warm (0: none).
	KeepWarmBytes int64
	// OnDiagnostic receives every session's diagnostics (a failed Trace
	// write, say: the run goes on without it; a queued task that could
	// not start, host.DiagTask); nil drops them. The native
	// server logs them, the session object hands them to console.warn.
	OnDiagnostic func(engine.Diagnostic)
	// Metrics, when set, is counted into by the sessions and the API
	// (host.Config.Metrics, api.Options.Metrics).
	Metrics *transport.Metrics
	// OnRunEnd is host.Config.OnRunEnd.
	OnRunEnd func(host.RunEnd)
}

// Server is an assembled server.
type Server struct {
	Registry *host.Registry
	Hub      *transport.Hub
	Handler  http.Handler
	cancel   context.CancelFunc
}

// New assembles a server; Close stops its background work.
func New(cfg Config) (*Server, error) {
	wire := cfg.Wire
	if wire == nil {
		var err error
		if wire, err = Wire(cfg.Model, cfg.Delay); err != nil {
			return nil, err
		}
	}
	newMeta := cfg.NewMeta
	if newMeta == nil {
		newMeta = NewMeta
	}
	now := time.Now
	if cfg.Clock != nil {
		now = cfg.Clock.Now
	}
	// Stamped, so that the session list has each session's last activity.
	var store trace.Store = &trace.MemStore{Now: now}
	if cfg.Dir != "" {
		if store = dirStore(cfg.Dir); store == nil {
			return nil, errors.New("server: Config.Dir: no file system in this build (set Config.Store)")
		}
	}
	if cfg.Store != nil {
		store = cfg.Store
	}
	chOpts := cfg.Channel
	if cfg.Clock != nil {
		chOpts.Clock = cfg.Clock
	}
	hub := transport.NewHub(chOpts)
	readOnly := cfg.ReadOnly
	if readOnly == nil {
		readOnly = playground.ReadsOnly
	}
	reg, err := host.NewRegistry(host.Config{
		Store: store, Hub: hub, Wire: wire, NewMeta: newMeta, Mode: cfg.Mode, Clock: cfg.Clock, ReadOnly: readOnly,
		KeepWarm: cfg.KeepWarm, KeepWarmBytes: cfg.KeepWarmBytes, OnDiagnostic: cfg.OnDiagnostic,
		Metrics: cfg.Metrics, OnRunEnd: cfg.OnRunEnd,
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	go hub.Run(ctx)
	return &Server{Registry: reg, Hub: hub, Handler: api.New(reg, api.Options{Token: cfg.Token, Origins: cfg.Origins, WriteTimeout: cfg.WriteTimeout, Metrics: cfg.Metrics}), cancel: cancel}, nil
}

// Shutdown stops the server's sessions (host.Registry.Shutdown: no run
// starts, those in flight are aborted and waited for, or ctx is done),
// then closes it as Close does: a stream gets its run's end, then ends.
// It returns host.Registry.Shutdown's error: nil, or ctx's. Call it before
// the http.Server's Shutdown, which waits for the streams, or beside it
// (ExampleServer_Shutdown). The Server does not start again.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.Registry.Shutdown(ctx)
	s.Close()
	return err
}

// Close stops the channel reclaimer and ends every stream, after what was
// queued for it (transport.Hub.Close). Safe to call more than once.
func (s *Server) Close() {
	s.cancel()
	s.Hub.Close()
}

// Wire returns the session wiring of a model name.
func Wire(model string, delay time.Duration) (func(omni.Message) (host.Wiring, error), error) {
	switch model {
	case "", "scripted":
		return func(omni.Message) (host.Wiring, error) { return Scripted(delay), nil }, nil
	}
	return nil, errors.New("model " + model + ": not available (want scripted)")
}

// Scripted is the playground's scripted model and demo workspace, waiting
// delay between two deltas (0: no waiting), with manual compaction in
// discard mode.
func Scripted(delay time.Duration) host.Wiring {
	var pace playground.Pace
	if delay > 0 {
		pace = playground.RealTime
	}
	ws := playground.NewWorkspace(pace)
	ws.LineDelay = delay
	newModel := func() *playground.Model {
		m := playground.NewModel(ws, pace)
		m.WordDelay = delay
		return m
	}
	return host.Wiring{
		LLM:         newModel(),
		NewLLM:      func(omni.TokenCounts) engine.LLM { return newModel() },
		Environment: ws,
		Tools:       ws.Tools(),
		Compaction:  &engine.Compaction{Mode: omni.ModeDiscard},
		MaxTurns:    8,
	}
}

// NewMeta is the session_meta of a new scripted session (id "" = a new
// reference-format id).
func NewMeta(id string, now time.Time) omni.Message {
	m := playground.Meta(now)
	if id != "" {
		m.Payload.Edit().SessionID = id
	}
	return m
}
