package trace_test

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

// Fakes and JSON comparison for the interop tests.

// toolList is the tools of the first tool_list_ready of the session's first
// file: the host configuration the fixture ran with.
func toolList(t *testing.T, first []byte) []omni.ToolDefinition {
	p, _ := trace.ReadFile(first)
	for _, m := range p.Records {
		if m.IsEvent(omni.ToolListReady) {
			return m.Payload.Tools()
		}
	}
	t.Fatal("no tool_list_ready in the first file")
	return nil
}

// recordingLLM is the fixtures' follow-up model: it records the history it
// is handed and its requests, answers "Resumed." and reports 10 tokens.
type recordingLLM struct {
	mu       sync.Mutex
	tokens   omni.TokenCounts // session cumulative
	created  omni.TokenCounts // the tokens the context was created with
	injected bool
	history  []omni.Message
	requests [][]omni.Message
}

func newRecordingLLM(sessionTokens omni.TokenCounts) *recordingLLM {
	return &recordingLLM{tokens: sessionTokens, created: sessionTokens}
}

func (l *recordingLLM) LoadHistory(ctx context.Context, history []omni.Message) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.injected, l.history = true, slices.Clone(history)
	return nil
}

func (l *recordingLLM) StreamGenerate(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
	l.mu.Lock()
	l.requests = append(l.requests, slices.Clone(p.NewMessages))
	request := omni.TokenCounts{Output: 3, Total: 10}
	l.tokens = l.tokens.Add(request)
	session := l.tokens
	l.mu.Unlock()
	emit(omni.AssistantText("Resumed.", omni.StatusCompleted))
	emit(omni.TokenUsageMsg(session, request))
	return engine.Outcome{Status: omni.StatusCompleted}
}

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time                                  { return c.t }
func (c fixedClock) Sleep(ctx context.Context, _ time.Duration) bool { return ctx.Err() == nil }

// recordingStore records every successful Append, grouping consecutive
// appends to one file as the fixtures do.
type recordingStore struct {
	trace.Store
	mu      sync.Mutex
	appends []trace.Written
}

func (s *recordingStore) Append(ctx context.Context, id string, index int, data []byte) (trace.AppendResult, error) {
	res, err := s.Store.Append(ctx, id, index, data)
	if err != nil {
		return res, err
	}
	p, _ := trace.ReadFile(data)
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.appends); n > 0 && s.appends[n-1].Index == index && !res.Created && !res.Healed {
		s.appends[n-1].Records = append(s.appends[n-1].Records, p.Records...)
	} else {
		s.appends = append(s.appends, trace.Written{Index: index, NewFile: res.Created, HealNewline: res.Healed, Records: p.Records})
	}
	return res, nil
}

func (s *recordingStore) take(t *testing.T) []trace.Written {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.appends
	s.appends = nil
	return out
}

// JSON comparison, ignoring timestamps.

func messageJSON(m omni.Message) any {
	var v any
	if err := json.Unmarshal(m.AppendJSON(nil), &v); err != nil {
		panic(err)
	}
	return v
}

func messagesJSON(msgs []omni.Message) []any {
	out := []any{}
	for _, m := range msgs {
		out = append(out, messageJSON(m))
	}
	return out
}

func writtenJSON(ws []trace.Written) []any {
	out := []any{}
	for _, w := range ws {
		out = append(out, map[string]any{"index": w.Index, "new_file": w.NewFile, "heal_newline": w.HealNewline, "records": messagesJSON(w.Records)})
	}
	return out
}

func decodeMessages(t *testing.T, raw json.RawMessage) []omni.Message {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		t.Fatal(err)
	}
	var out []omni.Message
	for _, it := range items {
		m, err := omni.Decode(it)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameJSON compares got (a Go value) with want (JSON) as JSON values,
// dropping every envelope's "timestamp".
func sameJSON(t *testing.T, what string, got any, want json.RawMessage) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(mustJSON(t, got), &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: expected JSON: %v", what, err)
	}
	g, w = dropTimestamps(g), dropTimestamps(w)
	if !reflect.DeepEqual(g, w) {
		gb, _ := json.MarshalIndent(g, "", "  ")
		wb, _ := json.MarshalIndent(w, "", "  ")
		t.Errorf("%s differs\n got: %s\nwant: %s", what, gb, wb)
	}
}

func dropTimestamps(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["payload"]; ok {
			delete(x, "timestamp")
		}
		for k, e := range x {
			x[k] = dropTimestamps(e)
		}
	case []any:
		for i, e := range x {
			x[i] = dropTimestamps(e)
		}
	}
	return v
}
