package conformance

import (
	"strings"
	"testing"
)

func stream(t *testing.T, msgs ...string) []any {
	t.Helper()
	out := make([]any, len(msgs))
	for i, m := range msgs {
		out[i] = normMessage(mustJSON(t, m))
	}
	return out
}

const (
	msgReqEnd   = `{"type":"event_msg","payload":{"type":"request_end","status":"completed"}}`
	msgChildEnd = `{"type":"event_msg","payload":{"type":"request_end","status":"completed"},"origin":["c"]}`
	msgOutB     = `{"type":"model_msg","payload":{"type":"tool_call_output","role":"user","output":"42","tool_call_id":"B"}}`
)

func TestConditionHolds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		cond      string
		stream    []string
		aborted   bool
		want      bool
		usesAbort bool
	}{
		{"seen default nth", `{"seen":{"payload":{"type":"request_end"}}}`, []string{msgOutB, msgReqEnd}, false, true, false},
		{"seen not yet", `{"seen":{"payload":{"type":"request_end"}}}`, []string{msgOutB}, false, false, false},
		{"seen nth 2 of 1", `{"seen":{"payload":{"type":"request_end"}},"nth":2}`, []string{msgReqEnd}, false, false, false},
		{"seen nth 2 of 2", `{"seen":{"payload":{"type":"request_end"}},"nth":2}`, []string{msgReqEnd, msgOutB, msgReqEnd}, false, true, false},
		{"seen ignores origin-tagged", `{"seen":{"payload":{"type":"request_end"}}}`, []string{msgChildEnd}, false, false, false},
		{"seen with origin", `{"seen":{"payload":{"type":"request_end"},"origin":["c"]}}`, []string{msgChildEnd}, false, true, false},
		{"abort not fired", `{"abort":true}`, []string{msgReqEnd}, false, false, true},
		{"abort fired", `{"abort":true}`, nil, true, true, true},
		{"any first", `{"any":[{"seen":{"payload":{"tool_call_id":"B"}}},{"abort":true}]}`, []string{msgOutB}, false, true, true},
		{"any second", `{"any":[{"seen":{"payload":{"tool_call_id":"B"}}},{"abort":true}]}`, nil, true, true, true},
		{"any none", `{"any":[{"seen":{"payload":{"tool_call_id":"B"}}},{"abort":true}]}`, []string{msgReqEnd}, false, false, true},
		{"any without abort", `{"any":[{"seen":{"payload":{"tool_call_id":"B"}}}]}`, nil, true, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := parseCondition([]byte(tc.cond))
			if err != nil {
				t.Fatal(err)
			}
			if got := c.holds(stream(t, tc.stream...), tc.aborted); got != tc.want {
				t.Errorf("holds = %v, want %v", got, tc.want)
			}
			if got := c.usesAbort(); got != tc.usesAbort {
				t.Errorf("usesAbort = %v, want %v", got, tc.usesAbort)
			}
		})
	}
}

func TestParseConditionErrors(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"not an object":  `[]`,
		"empty":          `{}`,
		"abort false":    `{"abort":false}`,
		"nth zero":       `{"seen":{},"nth":0}`,
		"nth string":     `{"seen":{},"nth":"1"}`,
		"extra key":      `{"seen":{},"after":1}`,
		"two forms":      `{"seen":{},"abort":true}`,
		"empty any":      `{"any":[]}`,
		"bad nested":     `{"any":[{"abort":1}]}`,
		"matcher scalar": `{"seen":1}`,
	}
	for name, raw := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, err := parseCondition([]byte(raw)); err == nil {
				t.Errorf("parseCondition(%s) accepted", raw)
			}
		})
	}
}

func TestParseTrigger(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw  string
		want trigger
		err  bool
	}{
		{raw: `{"seen":{"type":"event_msg"},"nth":3}`, want: trigger{kind: onSeen, nth: 3}},
		{raw: `{"seen":{"type":"event_msg"}}`, want: trigger{kind: onSeen, nth: 1}},
		{raw: `{"approval":"Y"}`, want: trigger{kind: onApproval, approval: "Y"}},
		{raw: `{"backoff":2}`, want: trigger{kind: onBackoff, backoff: 2}},
		{raw: `{"llm_request":{"session":"s","index":2}}`, want: trigger{kind: onLLMRequest, session: "s", index: 2}},
		{raw: `{"approval":""}`, err: true},
		{raw: `{"backoff":0}`, err: true},
		{raw: `{"llm_request":{"session":"s"}}`, err: true},
		{raw: `{"llm_request":{"session":"s","index":1,"x":1}}`, err: true},
		{raw: `{"approval":"Y","nth":1}`, err: true},
		{raw: `{"abort":true}`, err: true},
	}
	for _, tc := range tests {
		got, err := parseTrigger([]byte(tc.raw))
		if tc.err {
			if err == nil {
				t.Errorf("parseTrigger(%s) accepted", tc.raw)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseTrigger(%s): %v", tc.raw, err)
			continue
		}
		if got.kind != tc.want.kind || got.nth != tc.want.nth || got.approval != tc.want.approval ||
			got.backoff != tc.want.backoff || got.session != tc.want.session || got.index != tc.want.index {
			t.Errorf("parseTrigger(%s) = %+v, want %+v", tc.raw, *got, tc.want)
		}
	}
}

func TestParseAction(t *testing.T) {
	t.Parallel()
	steer := `{"type":"model_msg","payload":{"type":"text","role":"user","text":"go","stop_reason":"completed"}}`
	tests := []struct {
		raw    string
		abort  bool
		steers int
		expect bool
		err    string
	}{
		{raw: `{"action":"abort"}`, abort: true},
		{raw: `{"action":"steer","input":[` + steer + `],"expect":true}`, steers: 1, expect: true},
		{raw: `{"action":"steer","input":[` + steer + `],"expect":false}`, steers: 1, expect: false},
		{raw: `{"action":"steer","input":[` + steer + `]}`, steers: 1, expect: true},
		{raw: `{"action":"steer"}`, err: "missing input"},
		{raw: `{"action":"steer","input":[{"type":"model_msg"}]}`, err: "input[0]"},
		{raw: `{"action":"abort","expect":true}`, err: "no input"},
		{raw: `{"action":"pause"}`, err: "want abort or steer"},
		{raw: `{"action":"abort","why":1}`, err: "unknown field"},
	}
	for _, tc := range tests {
		a, err := parseAction([]byte(tc.raw))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseAction(%s) error = %v, want one containing %q", tc.raw, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseAction(%s): %v", tc.raw, err)
			continue
		}
		if a.abort != tc.abort || len(a.steer) != tc.steers || a.expect != tc.expect {
			t.Errorf("parseAction(%s) = abort %v steers %d expect %v", tc.raw, a.abort, len(a.steer), a.expect)
		}
	}
}
