package conformance

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// problems lists every failure of a finished scenario, in this order: what
// went wrong while it ran, each run's stream, the expect keys (llm_inputs,
// trace, sleeps_ms, approver_calls, tool_executions, new_llm_tokens), then
// scripts left unused.
func (w *world) problems() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	ps := slices.Clone(w.failures)
	for i, rs := range w.s.runs {
		if !rs.checkStream {
			continue
		}
		var got []any
		if i < len(w.streams) {
			got = w.streams[i]
		}
		if d := compareMessages(fmt.Sprintf("run %d stream", i+1), rs.expectStream, got); d != "" {
			ps = append(ps, d)
		}
	}
	ps = append(ps, w.expectLocked()...)
	return append(ps, w.unusedLocked()...)
}

// expectLocked checks every key listed under the scenario's expect.
func (w *world) expectLocked() []string {
	var ps []string
	add := func(d string) {
		if d != "" {
			ps = append(ps, d)
		}
	}
	e := w.s.expect
	if e.llmInputs != nil {
		got := map[string][]llmInput{}
		for id, st := range w.sessions {
			if len(st.inputs) > 0 {
				got[id] = st.inputs
			}
		}
		add(compareLLMInputs(e.llmInputs, got))
	}
	if e.trace != nil {
		ps = append(ps, w.compareTraces(e.trace)...)
	}
	if e.sleepsMs != nil {
		add(compareList("sleeps_ms", *e.sleepsMs, w.sleeps))
	}
	if e.approverCalls != nil {
		add(compareList("approver_calls", *e.approverCalls, w.approverCalls))
	}
	if e.toolExecutions != nil {
		add(compareMultiset("tool_executions", *e.toolExecutions, w.toolOrder))
	}
	if e.newLLMTokens != nil {
		got := map[string][]omni.TokenCounts{}
		for id, st := range w.sessions {
			if len(st.newTokens) > 0 {
				got[id] = st.newTokens
			}
		}
		add(compareTokens(e.newLLMTokens, got))
	}
	return ps
}

// unusedLocked reports scripted LLM requests never made and tool scripts
// never executed.
func (w *world) unusedLocked() []string {
	var ps []string
	for _, id := range slices.Sorted(maps.Keys(w.s.llm)) {
		calls := 0
		if st := w.sessions[id]; st != nil {
			calls = st.calls
		}
		if n := len(w.s.llm[id]); calls < n {
			ps = append(ps, fmt.Sprintf("llm %s: %d of %d scripted requests never made (first unused: request %d)", id, n-calls, n, calls+1))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(w.s.tools)) {
		if w.toolRuns[id] == 0 {
			ps = append(ps, fmt.Sprintf("tool %s: script never executed", id))
		}
	}
	return ps
}

// compareMessages compares two message lists position by position and
// names the first difference; "" if equal.
func compareMessages(where string, want, got []any) string {
	for i := range min(len(want), len(got)) {
		if d := diffPath(want[i], got[i], ""); d != "" {
			return fmt.Sprintf("%s [%d] (%s): expected %s got %s", where, i, d, show(want[i]), show(got[i]))
		}
	}
	switch {
	case len(got) < len(want):
		return fmt.Sprintf("%s length: expected %d got %d; first missing [%d]: %s", where, len(want), len(got), len(got), show(want[len(got)]))
	case len(got) > len(want):
		return fmt.Sprintf("%s length: expected %d got %d; first extra [%d]: %s", where, len(want), len(got), len(want), show(got[len(want)]))
	}
	return ""
}

// compareLLMInputs compares the recorded StreamGenerate calls per session.
func compareLLMInputs(want, got map[string][]llmInput) string {
	for _, id := range unionKeys(want, got) {
		w, g := want[id], got[id]
		where := "llm_inputs " + id
		for i := range min(len(w), len(g)) {
			at := fmt.Sprintf("%s request %d", where, i+1)
			if w[i].context != g[i].context {
				return fmt.Sprintf("%s context: expected %d got %d", at, w[i].context, g[i].context)
			}
			if d := compareMessages(at+" messages", w[i].messages, g[i].messages); d != "" {
				return d
			}
		}
		if len(w) != len(g) {
			return fmt.Sprintf("%s: expected %d requests got %d", where, len(w), len(g))
		}
	}
	return ""
}

// compareTraces compares every session's trace files; the sinks must be
// readable.
func (w *world) compareTraces(want map[string][][]any) []string {
	var ps []string
	got := map[string][][]any{}
	for id, st := range w.sessions {
		files, err := readTrace(st.sink)
		if err != nil {
			ps = append(ps, fmt.Sprintf("trace %s: %v", id, err))
			continue
		}
		if len(files) > 0 {
			got[id] = files
		}
	}
	for _, id := range unionKeys(want, got) {
		wf, gf := want[id], got[id]
		for i := range min(len(wf), len(gf)) {
			if d := compareMessages(fmt.Sprintf("trace %s file %d", id, i+1), wf[i], gf[i]); d != "" {
				ps = append(ps, d)
				return ps
			}
		}
		if len(wf) != len(gf) {
			return append(ps, fmt.Sprintf("trace %s files: expected %d got %d", id, len(wf), len(gf)))
		}
	}
	return ps
}

// readTrace reads back a sink as comparable values.
func readTrace(sink engine.TraceSink) ([][]any, error) {
	if sink == nil {
		return nil, fmt.Errorf("no trace sink")
	}
	r, ok := sink.(TraceReader)
	if !ok {
		return nil, fmt.Errorf("sink %T cannot be read back (no Files method)", sink)
	}
	files, err := r.Files()
	if err != nil {
		return nil, err
	}
	out := make([][]any, len(files))
	for i, f := range files {
		out[i] = make([]any, len(f))
		for j, m := range f {
			out[i][j] = valueOf(m)
		}
	}
	return out, nil
}

func compareList[T comparable](where string, want, got []T) string {
	if slices.Equal(want, got) {
		return ""
	}
	return fmt.Sprintf("%s: expected %s got %s", where, showJSON(want), showJSON(got))
}

// compareMultiset compares ids regardless of order.
func compareMultiset(where string, want, got []string) string {
	w, g := slices.Sorted(slices.Values(want)), slices.Sorted(slices.Values(got))
	if slices.Equal(w, g) {
		return ""
	}
	return fmt.Sprintf("%s (any order): expected %s got %s", where, showJSON(w), showJSON(g))
}

func compareTokens(want, got map[string][]omni.TokenCounts) string {
	for _, id := range unionKeys(want, got) {
		if d := compareList("new_llm_tokens "+id, want[id], got[id]); d != "" {
			return d
		}
	}
	return ""
}

// unionKeys returns the keys of both maps, sorted.
func unionKeys[V any](a, b map[string]V) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// showJSON renders a Go value as JSON; nil slices as [].
func showJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	if string(b) == "null" {
		return "[]"
	}
	return string(b)
}
