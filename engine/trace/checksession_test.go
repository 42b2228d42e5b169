//go:build !wasm

package trace_test

import (
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/enginetest"
	"github.com/floehq/floe/engine/trace"
)

// (The WebAssembly build leaves engine.New's check out: engine/checktrace_wasm.go.)

// engine.New refuses a Writer that could only fail: a nil one, one of a
// nil Store (every write panicked, recovered as a diagnostic), one of an
// id that cannot name Trace files, one of another session.
func TestNewRefusesAWriterThatCannotWrite(t *testing.T) {
	llm := enginetest.NewLLM()
	for _, tc := range []struct {
		id   string
		sink engine.TraceSink
		says string
	}{
		{"s1", (*trace.Writer)(nil), "engine: Config.Trace: invalid argument: a nil *trace.Writer"},
		{"s1", trace.NewWriter(nil, "s1", 1), "engine: Config.Trace: invalid argument: the Writer's Store is nil (trace.NewWriter(nil, …))"},
		{"a/b", trace.NewWriter(&trace.MemStore{}, "a/b", 1), `engine: Config.Trace: invalid argument: session id "a/b"`},
		{"s1", trace.NewWriter(&trace.MemStore{}, "s2", 1), `engine: Config.Trace: invalid argument: the Writer writes session "s2", the session is "s1"`},
	} {
		_, err := engine.New(engine.Config{Meta: enginetest.Meta(tc.id), LLM: llm, Trace: tc.sink})
		if err == nil || !strings.HasPrefix(err.Error(), tc.says) {
			t.Errorf("%s: New = %v, want %q…", tc.id, err, tc.says)
		}
	}
	if _, err := engine.New(engine.Config{Meta: enginetest.Meta("s1"), LLM: llm, Trace: trace.NewWriter(&trace.MemStore{}, "s1", 1)}); err != nil {
		t.Errorf("a good Writer: %v", err)
	}
}
