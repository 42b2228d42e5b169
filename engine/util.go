package engine

import (
	"context"
	"github.com/floehq/floe/internal/errf"
	"runtime"
	"strconv"
	"time"

	"github.com/floehq/floe/engine/omni"
)

// stamper formats timestamps (P-1), reusing the last string within the same
// millisecond. Not safe for concurrent use: one per producer.
type stamper struct {
	ms  int64
	str string
}

func (st *stamper) stamp(c Clock, m *omni.Message) {
	if m.Timestamp != "" {
		return
	}
	st.stampAt(c.Now(), m)
}

// stampAt stamps m with t (a batch of messages entering the stream at one
// instant shares one clock read).
func (st *stamper) stampAt(t time.Time, m *omni.Message) {
	ms := t.UnixMilli()
	if ms != st.ms || st.str == "" {
		st.ms = ms
		st.str = omni.FormatTimestamp(t)
	}
	m.Timestamp = st.str
}

// stampMsg stamps a message on the run goroutine.
func (s *Session) stampMsg(m *omni.Message) { s.stamp.stamp(s.clock, m) }

// diag reports a diagnostic, if anyone listens.
func (s *Session) diag(kind string, err error) {
	if f := s.cfg.OnDiagnostic; f != nil {
		f(Diagnostic{Kind: kind, Err: err})
	}
}

// recoverTo is the one recover helper, deferred at goroutine roots and
// callback boundaries: a panic is reported as a "panic" diagnostic with its
// stack, then handed to onPanic to become a protocol answer.
func recoverTo(s *Session, where string, onPanic func(any)) {
	v := recover()
	if v == nil {
		return
	}
	if f := s.cfg.OnDiagnostic; f != nil {
		f(Diagnostic{Kind: "panic", Err: errf.Errorf("%s: panic: %s", where, panicText(v)), Stack: stack()})
	}
	onPanic(v)
}

func panicText(v any) string { return errf.Sprintf("%v", v) }

// traceWrite writes one record, performing a pending rotation first
// (E-13.11). Failures are diagnostics only (E-16.7).
func (s *Session) traceWrite(m omni.Message) {
	if s.rotatePending {
		s.rotatePending = false
		if s.cfg.Trace != nil {
			if err := s.cfg.Trace.Rotate(); err != nil {
				s.diag("trace", errf.Errorf("trace: rotate: %w", err))
			}
		}
		meta := s.cfg.Meta
		s.stampMsg(&meta)
		s.write(meta)
		if s.cfg.ToolList != nil {
			tl := omni.ToolListReadyMsg(s.cfg.ToolList)
			s.stampMsg(&tl)
			s.write(tl)
		}
	}
	s.write(m)
}

func (s *Session) write(m omni.Message) {
	if s.cfg.Trace == nil {
		return
	}
	if err := s.cfg.Trace.Write(m); err != nil {
		s.diag("trace", errf.Errorf("trace: write %s: %w", describe(&m), err))
	}
}

func describe(m *omni.Message) string {
	if m.Payload.Type == "" {
		return m.Type
	}
	return m.Payload.Type
}

// ensureMeta writes the session_meta once (E-3.6.1, E-14.1).
func (s *Session) ensureMeta() {
	if s.metaWritten {
		return
	}
	s.metaWritten = true
	meta := s.cfg.Meta
	s.stampMsg(&meta)
	s.traceWrite(meta)
}

// injectHistory hands a resumed history to the LLM before its first
// request, once, and only when non-empty (E-17.6).
func (s *Session) injectHistory(ctx context.Context) {
	h := s.history
	if len(h) == 0 {
		return
	}
	s.history = nil
	if l, ok := s.llm.(HistoryLoader); ok {
		if err := l.LoadHistory(ctx, h); err != nil {
			s.diag("llm", errf.Errorf("load history: %w", err))
		}
	}
}

func (s *Session) maxReconnects() int { return orDefault(s.cfg.MaxReconnects, 5) }

func (s *Session) compactionMaxReconnects() int {
	if s.cfg.CompactionMaxReconnects == 0 {
		return s.maxReconnects()
	}
	return orDefault(s.cfg.CompactionMaxReconnects, 5)
}

// orDefault maps 0 to def and negatives to 0.
func orDefault(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// delayMs is min(base × 2^(n−1), max) for the n-th retry (§2).
func (s *Session) delayMs(n int) int {
	base := orDefault(s.cfg.ReconnectBackoffMs, 2000)
	ceil := orDefault(s.cfg.ReconnectBackoffMaxMs, 30000)
	d := base
	for i := 1; i < n && d < ceil; i++ {
		d *= 2
	}
	return min(d, ceil)
}

func (s *Session) delay(n int) time.Duration { return time.Duration(s.delayMs(n)) * time.Millisecond }

func itoa(n int) string { return strconv.Itoa(n) }

func contextWithCancel(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithCancel(ctx)
}

// stack is the calling goroutine's stack (runtime/debug.Stack without the
// os package it imports, which the WebAssembly build does without).
func stack() []byte {
	buf := make([]byte, 16<<10)
	return buf[:runtime.Stack(buf, false)]
}
