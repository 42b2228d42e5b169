package engine

import (
	"context"
	"github.com/floehq/floe/internal/errf"
	"github.com/floehq/floe/internal/jsspace"
	"github.com/floehq/floe/internal/lock"
	"iter"
	"strings"

	"github.com/floehq/floe/clock"
	"github.com/floehq/floe/engine/omni"
)

// Session is one conversation: one engine, one Trace, one LLM context at a
// time (ENGINE.md §0). Its methods are safe for concurrent use; at most one
// run or manual compaction is in flight at a time (E-3.3).
type Session struct {
	cfg   Config
	clock Clock
	timer Timer
	stamp stamper // used by the run goroutine only

	// Run-goroutine state: touched only by the goroutine of the run in
	// flight (or between runs, under the busy reservation).
	llm              LLM
	history          []omni.Message // to inject at the first request (resume)
	carry            []omni.Message // pendingCarryOver
	summary          *omni.Message  // pendingSummary
	sessionTurns     int64
	lastRequestTotal int64
	sessionTokens    omni.TokenCounts
	metaWritten      bool
	rotatePending    bool
	toolListOwed     bool
	compacted        bool // the current context was started by a completed compaction
	announced        bool // a subagent's session_meta was streamed to its parent (E-15.4)
	noUsageSaid      bool // a request completed without token_usage was reported (written by its driver's end, which the run waits for)

	mu        lock.Mutex // guards the fields below
	running   bool
	steerOpen bool // a run (not a manual compaction) is in flight: Steer queues (E-11.1)
	closed    bool
	abortRun  context.CancelFunc // aborts the run in flight (Close)
	pub       Snapshot           // the state as of the end of the last run
	pubEmpty  bool               // pub was taken in a context started by compaction
	steering  []steerEntry
	steerSeq  SteerID            // the last SteerID handed out
	backoff   context.CancelFunc // wakes a pending reconnect wait (SkipReconnectWait)
}

type steerEntry struct {
	input []omni.Message // a copy: the caller may reuse its slice
	key   *omni.Message  // the first element of the caller's slice, which Unsteer names
	id    SteerID        // 0 for entries queued by Steer
}

// New validates cfg and returns a Session. It refuses, naming the field,
// a Meta that is no session_meta or has no session id (and, natively, for
// a new session, without Resume, one PROTOCOL.md §2 refuses: no provider
// or model_id, [omni.Validate]; a resumed session keeps its Trace's), a
// nil LLM (and, natively, a typed nil LLM, Environment, Clock or Timer), an
// unknown Compaction.Mode, a ToolList entry with no name, of a name an
// earlier entry has, or whose Parameters is not a JSON object, and a
// Trace that could only fail (a *trace.Writer of a nil Store, of an id
// that cannot name Trace files or of another session: that error wraps
// trace.ErrInvalid). The errors are for a person to read; New starts
// nothing and holds no resource until Start.
func New(cfg Config) (*Session, error) {
	if cfg.Meta.Type != omni.TypeSessionMeta {
		return nil, errf.Errorf("engine: Config.Meta: want a %s message, got type %q", omni.TypeSessionMeta, cfg.Meta.Type)
	}
	if cfg.Meta.Payload.SessionID() == "" {
		return nil, errf.Errorf("engine: Config.Meta: payload.session_id is empty")
	}
	if cfg.LLM == nil {
		return nil, errf.Errorf("engine: Config.LLM is nil")
	}
	if c := cfg.Compaction; c != nil && c.Mode != omni.ModeSummarize && c.Mode != omni.ModeDiscard {
		return nil, errf.Errorf("engine: Config.Compaction.Mode: %q is not one of summarize|discard", c.Mode)
	}
	for i := range cfg.ToolList {
		t := &cfg.ToolList[i]
		if t.Name == "" {
			return nil, errf.Errorf("engine: Config.ToolList[%d]: the name is empty", i)
		}
		if p := t.Parameters; len(p) != 0 && !omni.IsJSONObject(p) {
			return nil, errf.Errorf("engine: Config.ToolList[%d] (%q): parameters: want a JSON Schema object, got %q", i, t.Name, string(p))
		}
		for j := range i {
			if cfg.ToolList[j].Name == t.Name { // a call could mean either; APIs refuse such a list (floe.mjs does too)
				return nil, errf.Errorf("engine: Config.ToolList[%d] (%q): ToolList[%d] has that name too", i, t.Name, j)
			}
		}
	}
	if err := checkTrace(cfg); err != nil {
		return nil, err
	}
	r := cfg.Resume
	// The session keeps cfg, not the snapshot: what it points into (the
	// history, a host's whole Trace read) is the model's once handed over.
	cfg.Resume = nil
	s := &Session{cfg: cfg, clock: cfg.Clock, llm: cfg.LLM}
	if s.clock == nil {
		s.clock = clock.System{}
	}
	switch {
	case cfg.AbortGrace < 0:
		s.timer = neverTimer{}
	case cfg.Timer != nil:
		s.timer = cfg.Timer
	default:
		s.timer = systemTimer{}
	}
	s.toolListOwed = cfg.ToolList != nil
	if r != nil {
		s.history = r.History
		s.carry = append([]omni.Message(nil), r.CarryOver...)
		s.summary = r.PendingSummary
		s.sessionTurns = r.SessionTurns
		s.sessionTokens = r.SessionTokens
		s.lastRequestTotal = r.LastRequestTotal
		s.rotatePending = r.ContextClosed
		s.metaWritten = r.MetaWritten
		s.compacted = r.Compacted
	}
	s.publish()
	return s, nil
}

// ID returns the session id of the session_meta.
func (s *Session) ID() string { return s.cfg.Meta.Payload.SessionID() }

// Meta returns the session's session_meta message.
func (s *Session) Meta() omni.Message { return s.cfg.Meta }

// Start begins a run with newMessages as its input (E-3.6). The returned Run
// must be consumed (Next or All) or closed: the session stays busy until the
// run has ended. ErrBusy if a run is in flight; nothing is streamed or traced
// then. A message that is not a valid OmniMessage is refused with an error
// wrapping ErrInvalidInput; a nil ctx, or a Session that New did not make
// (its zero value), with an error naming it (as by Run, Compact and a
// SubagentHandle's Start).
func (s *Session) Start(ctx context.Context, newMessages []omni.Message, opts RunOptions) (*Run, error) {
	if err := validateInput(newMessages); err != nil {
		return nil, err
	}
	if err := s.reserve(ctx, true); err != nil {
		return nil, err
	}
	input := append([]omni.Message(nil), newMessages...)
	return newRun(ctx, s, opts, func(ctx context.Context, r *run) { r.runLoop(ctx, input) }), nil
}

// validateInput checks the messages handed to Start or Steer: each a valid
// OmniMessage the Trace can keep (E-3.6 writes the input; a partial_* or
// a message with origin is never written, E-16.4, so a resumed session's
// model would not see what this one's did).
func validateInput(input []omni.Message) error {
	for i := range input {
		m := &input[i]
		if err := omni.Validate(*m); err != nil {
			return errf.Errorf("%w: input[%d]: %w", ErrInvalidInput, i, err)
		}
		if len(m.Origin) > 0 {
			return errf.Errorf("%w: input[%d]: a message with origin is a subagent's, never written to the Trace: input is the session's own", ErrInvalidInput, i)
		}
		if m.IsPartial() {
			return errf.Errorf("%w: input[%d]: %s is a fragment, never written to the Trace: give the complete message", ErrInvalidInput, i, m.Payload.Type)
		}
		if m.IsModel(omni.ImageURL) {
			if err := checkImageURL(i, m.Payload.ImageURL()); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkImageURL refuses u, the image_url of input[i], when it is not
// what PROTOCOL.md §3 says (a web URL or a data: URL): every adapter sends
// it as it is, and one of another form was dropped ("") or refused by the
// provider, in every later request of the session.
//
//go:noinline
func checkImageURL(i int, u string) error {
	why := " is not a web URL (http or https) or a data: URL"
	n := 0 // the length of "http://" or "https://"
	if prefixFold(u, "data:") {
		if strings.IndexByte(u, ',') > 0 {
			return nil
		}
		why = " is a data: URL without a comma before its data"
	} else if prefixFold(u, "http://") {
		n = 7
	} else if prefixFold(u, "https://") {
		n = 8
	}
	for j := n; n > 0 && j < len(u) && u[j] > ' ' && u[j] != 0x7f && u[n] != '/'; j++ {
		if j == len(u)-1 {
			return nil
		}
	}
	q := u
	if len(q) > 64 {
		q = q[:64]
		for len(q) > 0 && u[len(q)]&0xc0 == 0x80 { // not the start of a character
			q = q[:len(q)-1]
		}
	}
	if q = errf.Quote(q); len(u) > 64 {
		q += "…"
	}
	return errf.Errorf("%w: input[%d].payload.image_url: %s%s", ErrInvalidInput, i, q, why)
}

// prefixFold reports whether s starts with prefix, ASCII in lower case,
// the case of s's ASCII letters ignored (only theirs: a control byte is
// not the ":" or "/" it is one bit off).
func prefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A' // a letter alone: c|0x20 made "\x1a" a ":" and "\x0f" a "/"
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}

// Run is Start followed by Run.All. The sequence must be ranged, once:
// until it is, the session stays busy (ErrBusy), as with a Run of Start
// that is neither consumed nor closed.
func (s *Session) Run(ctx context.Context, newMessages []omni.Message, opts RunOptions) (iter.Seq[omni.Message], error) {
	r, err := s.Start(ctx, newMessages, opts)
	if err != nil {
		return nil, err
	}
	return r.All(), nil
}

// reserve marks the session busy; run says it is a run, which Steer may
// join, rather than a manual compaction, which it may not (E-11.1). It
// refuses a Session that New did not make (its zero value: every Session
// of New has a clock) and a nil ctx, which would panic later.
func (s *Session) reserve(ctx context.Context, run bool) error {
	if s == nil || s.clock == nil {
		return errNotNew
	}
	if ctx == nil {
		return errNilContext
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return ErrClosed
	case s.running:
		return ErrBusy
	}
	s.running = true
	s.steerOpen = run
	return nil
}

func (s *Session) release() {
	s.publish()
	s.mu.Lock()
	s.running = false
	s.steerOpen = false
	s.abortRun = nil
	s.steering = nil // E-3.7
	s.mu.Unlock()
}

// Close closes the session: a run in flight is aborted (as by its
// context), also one that a Start or Compact under way has not returned
// yet, and later Start and Compact calls return ErrClosed. Close does
// not wait for that run: its consumer still receives the rest of its
// stream, ending with the abort (Run.Close waits). A Session holds no
// goroutine between runs, so one that is dropped without Close leaks
// nothing; Close only aborts and refuses. Safe to call more than once.
func (s *Session) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.abortRun != nil {
		s.abortRun()
	}
}

// Steer queues steering input for the run in flight (E-11.1). It returns
// false when no run is in flight. Input without steering content (no
// image_url, no non-blank text) queues nothing and returns true. A message
// that is not a valid OmniMessage is refused, as by Start, with an error
// wrapping ErrInvalidInput, and nothing is queued. Steer copies input, as
// Start does, so the caller may reuse its slice (Unsteer still names the
// entry by it). Steer never waits for the run and may be called from
// inside the run's callbacks.
func (s *Session) Steer(input []omni.Message) (bool, error) {
	if err := validateInput(input); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.steerOpen {
		return false, nil
	}
	if hasSteeringContent(input) {
		s.steering = append(s.steering, steerEntry{input: append([]omni.Message(nil), input...), key: &input[0]})
	}
	return true, nil
}

// Unsteer removes a not yet delivered Steer entry, matched by identity (the
// same slice passed to Steer: its first element's address) (E-11.2).
func (s *Session) Unsteer(input []omni.Message) bool {
	if len(input) == 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, e := range s.steering {
		if e.key == &input[0] {
			s.steering = append(s.steering[:i:i], s.steering[i+1:]...)
			return true
		}
	}
	return false
}

// SkipReconnectWait wakes a pending backoff early as if it had elapsed; it
// returns false if no wait is pending (E-10.7).
func (s *Session) SkipReconnectWait() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.backoff == nil {
		return false
	}
	s.backoff()
	s.backoff = nil
	return true
}

// Compactability answers CompactOK, CompactUnsupported, CompactEmpty or
// CompactJustCompacted (E-13.13), as of the end of the last run.
func (s *Session) Compactability() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.compactability(s.pub.SessionTurns, s.pubEmpty)
}

func (s *Session) compactability(turns int64, compacted bool) string {
	switch {
	case s.cfg.Compaction == nil || s.cfg.NewLLM == nil:
		return CompactUnsupported
	case turns == 0 && compacted:
		return CompactJustCompacted
	case turns == 0:
		return CompactEmpty
	}
	return CompactOK
}

// Snapshot returns the session's state as of the end of the last run (or
// its creation): carry-over, pending summary, counters and tokens. History
// is not included: the LLM context holds it. Safe to call at any time.
func (s *Session) Snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := s.pub
	snap.CarryOver = append([]omni.Message(nil), snap.CarryOver...)
	if snap.PendingSummary != nil {
		m := *snap.PendingSummary
		snap.PendingSummary = &m
	}
	return snap
}

// publish copies the run-goroutine state for Snapshot and Compactability.
// Called by the goroutine that owns that state (New, the end of a run).
func (s *Session) publish() {
	snap := Snapshot{
		CarryOver:        append([]omni.Message(nil), s.carry...),
		SessionTurns:     s.sessionTurns,
		SessionTokens:    s.sessionTokens,
		LastRequestTotal: s.lastRequestTotal,
		ContextClosed:    s.rotatePending,
		MetaWritten:      s.metaWritten,
		Compacted:        s.compacted,
	}
	if s.summary != nil {
		m := *s.summary
		snap.PendingSummary = &m
	}
	s.mu.Lock()
	s.pub, s.pubEmpty = snap, s.compacted
	s.mu.Unlock()
}

func hasSteeringContent(input []omni.Message) bool {
	for i := range input {
		p := &input[i].Payload
		if input[i].Type != omni.TypeModelMsg {
			continue
		}
		if p.Type == omni.ImageURL {
			return true
		}
		if p.Type == omni.Text && trimmedNonEmpty(p.Text) {
			return true
		}
	}
	return false
}

// trimmedNonEmpty reports whether s has a character that JavaScript's
// String.prototype.trim keeps, the reference's notion of blank (E-11.1).
func trimmedNonEmpty(s string) bool { return jsTrim(s) != "" }

// jsTrim trims s as JavaScript's trim does: white space (Zs, tab, vertical
// tab, form feed, U+FEFF) and line terminators (LF, CR, U+2028, U+2029).
// Unlike strings.TrimSpace it keeps U+0085 and removes U+FEFF.
func jsTrim(s string) string { return strings.TrimFunc(s, jsspace.Is) }
