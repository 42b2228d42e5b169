package conformance

import (
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

func TestCompareMessages(t *testing.T) {
	t.Parallel()
	const (
		begin = `{"type":"event_msg","payload":{"type":"request_begin"}}`
		end   = `{"type":"event_msg","payload":{"type":"request_end","status":"completed"}}`
		endTS = `{"timestamp":"2025-01-01T00:00:00.001Z","type":"event_msg","payload":{"type":"request_end","status":"completed"}}`
		fail  = `{"type":"event_msg","payload":{"type":"request_end","status":"failed"}}`
	)
	tests := []struct {
		name      string
		want, got []string
		diff      string
	}{
		{"equal", []string{begin, end}, []string{begin, end}, ""},
		{"timestamps ignored", []string{end}, []string{endTS}, ""},
		{"both empty", nil, nil, ""},
		{"value differs", []string{begin, end}, []string{begin, fail},
			`run 1 stream [1] (payload.status): expected {"payload":{"status":"completed","type":"request_end"},"type":"event_msg"} got {"payload":{"status":"failed","type":"request_end"},"type":"event_msg"}`},
		{"missing", []string{begin, end}, []string{begin},
			`run 1 stream length: expected 2 got 1; first missing [1]: {"payload":{"status":"completed","type":"request_end"},"type":"event_msg"}`},
		{"extra", []string{begin}, []string{begin, end},
			`run 1 stream length: expected 1 got 2; first extra [1]: {"payload":{"status":"completed","type":"request_end"},"type":"event_msg"}`},
		{"first difference wins over length", []string{end}, []string{fail, end},
			`run 1 stream [0] (payload.status): expected {"payload":{"status":"completed","type":"request_end"},"type":"event_msg"} got {"payload":{"status":"failed","type":"request_end"},"type":"event_msg"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := compareMessages("run 1 stream", stream(t, tc.want...), stream(t, tc.got...)); got != tc.diff {
				t.Errorf("diff:\n got %s\nwant %s", got, tc.diff)
			}
		})
	}
}

func TestCompareLists(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		diff string
		want string
	}{
		{"sleeps equal", compareList("sleeps_ms", []int64{2000, 4000}, []int64{2000, 4000}), ""},
		{"sleeps empty vs nil", compareList("sleeps_ms", []int64{}, nil), ""},
		{"sleeps differ", compareList("sleeps_ms", []int64{2000}, nil), "sleeps_ms: expected [2000] got []"},
		{"approver order matters", compareList("approver_calls", []string{"A", "B"}, []string{"B", "A"}), `approver_calls: expected ["A","B"] got ["B","A"]`},
		{"multiset any order", compareMultiset("tool_executions", []string{"A", "B", "A"}, []string{"A", "A", "B"}), ""},
		{"multiset counts", compareMultiset("tool_executions", []string{"A", "B"}, []string{"A", "B", "B"}), `tool_executions (any order): expected ["A","B"] got ["A","B","B"]`},
		{"tokens extra session", compareTokens(map[string][]omni.TokenCounts{}, map[string][]omni.TokenCounts{"s": {{Total: 3}}}),
			`new_llm_tokens s: expected [] got [{"cache_read":0,"cache_write":0,"output":0,"total":3}]`},
	}
	for _, tc := range tests {
		if tc.diff != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, tc.diff, tc.want)
		}
	}
}

func TestCompareLLMInputs(t *testing.T) {
	t.Parallel()
	prompt := stream(t, `{"type":"model_msg","payload":{"type":"text","role":"user","text":"hi","stop_reason":"completed"}}`)
	other := stream(t, `{"type":"model_msg","payload":{"type":"text","role":"user","text":"ho","stop_reason":"completed"}}`)
	tests := []struct {
		name      string
		want, got map[string][]llmInput
		diff      string
	}{
		{"equal", map[string][]llmInput{"s": {{1, prompt}}}, map[string][]llmInput{"s": {{1, prompt}}}, ""},
		{"context", map[string][]llmInput{"s": {{1, prompt}, {2, nil}}}, map[string][]llmInput{"s": {{1, prompt}, {1, nil}}},
			"llm_inputs s request 2 context: expected 2 got 1"},
		{"messages", map[string][]llmInput{"s": {{1, prompt}}}, map[string][]llmInput{"s": {{1, other}}},
			`llm_inputs s request 1 messages [0] (payload.text): expected {"payload":{"role":"user","stop_reason":"completed","text":"hi","type":"text"},"type":"model_msg"} got {"payload":{"role":"user","stop_reason":"completed","text":"ho","type":"text"},"type":"model_msg"}`},
		{"count", map[string][]llmInput{"s": {{1, prompt}}}, map[string][]llmInput{"s": {{1, prompt}, {1, nil}}},
			"llm_inputs s: expected 1 requests got 2"},
		{"unexpected session", map[string][]llmInput{}, map[string][]llmInput{"child": {{1, prompt}}},
			"llm_inputs child: expected 0 requests got 1"},
	}
	for _, tc := range tests {
		if got := compareLLMInputs(tc.want, tc.got); got != tc.diff {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.diff)
		}
	}
}

func TestConfigApply(t *testing.T) {
	t.Parallel()
	n := func(v int) *int { return &v }
	tests := []struct {
		name string
		spec configSpec
		want engine.Config
	}{
		{"absent keys are engine defaults", configSpec{}, engine.Config{}},
		{"explicit zero means none", configSpec{maxReconnects: n(0), backoffMs: n(0), backoffMaxMs: n(0), compactionMaxReconnects: n(0)},
			engine.Config{MaxReconnects: -1, ReconnectBackoffMs: -1, ReconnectBackoffMaxMs: -1, CompactionMaxReconnects: -1}},
		{"values pass through", configSpec{maxTurns: n(1), maxReconnects: n(3), backoffMs: n(100), backoffMaxMs: n(400), compactionMaxReconnects: n(2)},
			engine.Config{MaxTurns: 1, MaxReconnects: 3, ReconnectBackoffMs: 100, ReconnectBackoffMaxMs: 400, CompactionMaxReconnects: 2}},
		{"max_turns -1 and 0 are no cap", configSpec{maxTurns: n(-1)}, engine.Config{MaxTurns: -1}},
	}
	for _, tc := range tests {
		var got engine.Config
		tc.spec.apply(&got)
		if got.MaxTurns != tc.want.MaxTurns || got.MaxReconnects != tc.want.MaxReconnects ||
			got.ReconnectBackoffMs != tc.want.ReconnectBackoffMs || got.ReconnectBackoffMaxMs != tc.want.ReconnectBackoffMaxMs ||
			got.CompactionMaxReconnects != tc.want.CompactionMaxReconnects || got.Compaction != nil {
			t.Errorf("%s: got %+v", tc.name, got)
		}
	}
}
