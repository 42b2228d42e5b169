package conformance

import (
	"testing"

	"github.com/floehq/floe/engine/omni"
)

func mustJSON(t *testing.T, s string) any {
	t.Helper()
	v, err := decodeJSON([]byte(s))
	if err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

func TestJSONEqual(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a, b string
		want bool
	}{
		{"key order", `{"a":1,"b":2}`, `{"b":2,"a":1}`, true},
		{"number spelling", `{"n":200000}`, `{"n":2e5}`, true},
		{"number fraction", `1.0`, `1`, true},
		{"different numbers", `1`, `2`, false},
		{"absent vs null", `{"a":null}`, `{}`, false},
		{"null vs null", `{"a":null}`, `{"a":null}`, true},
		{"null vs empty string", `null`, `""`, false},
		{"extra key", `{"a":1}`, `{"a":1,"b":1}`, false},
		{"array order", `[1,2]`, `[2,1]`, false},
		{"array length", `[1]`, `[1,1]`, false},
		{"nested", `{"a":{"b":[{"c":true}]}}`, `{"a":{"b":[{"c":true}]}}`, true},
		{"bool vs string", `true`, `"true"`, false},
		{"number vs string", `1`, `"1"`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, b := mustJSON(t, tc.a), mustJSON(t, tc.b)
			if got := jsonEqual(a, b); got != tc.want {
				t.Errorf("jsonEqual(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
			}
			if got := jsonEqual(b, a); got != tc.want {
				t.Errorf("jsonEqual(%s, %s) = %v, want %v (not symmetric)", tc.b, tc.a, got, tc.want)
			}
		})
	}
}

func TestDecodeJSONTrailing(t *testing.T) {
	t.Parallel()
	if _, err := decodeJSON([]byte(`{} {}`)); err == nil {
		t.Error("two values accepted")
	}
}

func TestMatches(t *testing.T) {
	t.Parallel()
	const (
		reqEnd      = `{"type":"event_msg","payload":{"type":"request_end","status":"completed"}}`
		childReqEnd = `{"type":"event_msg","payload":{"type":"request_end","status":"completed"},"origin":["child"]}`
		deepReqEnd  = `{"type":"event_msg","payload":{"type":"request_end","status":"completed"},"origin":["child","grand"]}`
		output      = `{"type":"model_msg","payload":{"type":"tool_call_output","role":"user","output":"x","images":["a","b"],"tool_call_id":"B"}}`
	)
	tests := []struct {
		name    string
		matcher string
		msg     string
		want    bool
	}{
		{"subset of payload", `{"type":"event_msg","payload":{"type":"request_end"}}`, reqEnd, true},
		{"wrong value", `{"payload":{"status":"failed"}}`, reqEnd, false},
		{"missing key", `{"payload":{"attempt":1}}`, reqEnd, false},
		{"null is not absent", `{"payload":{"attempt":null}}`, reqEnd, false},
		{"empty matcher", `{}`, reqEnd, true},
		{"no origin key rejects origin", `{"payload":{"type":"request_end"}}`, childReqEnd, false},
		{"star accepts origin", `{"payload":{"type":"request_end"},"origin":"*"}`, childReqEnd, true},
		{"star accepts none", `{"payload":{"type":"request_end"},"origin":"*"}`, reqEnd, true},
		{"exact origin", `{"payload":{"type":"request_end"},"origin":["child"]}`, childReqEnd, true},
		{"origin is not a prefix", `{"payload":{"type":"request_end"},"origin":["child"]}`, deepReqEnd, false},
		{"origin needs one", `{"origin":["child"]}`, reqEnd, false},
		{"arrays are not subsets", `{"payload":{"images":["a"]}}`, output, false},
		{"arrays equal", `{"payload":{"images":["a","b"]}}`, output, true},
		{"object vs scalar", `{"payload":"x"}`, output, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := parseMatcher([]byte(tc.matcher))
			if err != nil {
				t.Fatal(err)
			}
			msg := normMessage(mustJSON(t, tc.msg))
			if got := matches(m, msg); got != tc.want {
				t.Errorf("matches(%s, %s) = %v, want %v", tc.matcher, tc.msg, got, tc.want)
			}
		})
	}
}

func TestParseMatcherErrors(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{`[]`, `"x"`, `{"origin":"child"}`, `{"origin":[1]}`, `{"origin":{}}`} {
		if _, err := parseMatcher([]byte(raw)); err == nil {
			t.Errorf("parseMatcher(%s) accepted", raw)
		}
	}
}

func TestNormMessage(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`{"timestamp":"2025-01-01T00:00:00.000Z","type":"event_msg","payload":{}}`, `{"type":"event_msg","payload":{}}`},
		{`{"type":"event_msg","payload":{},"origin":[]}`, `{"type":"event_msg","payload":{}}`},
		{`{"type":"event_msg","payload":{},"origin":null}`, `{"type":"event_msg","payload":{}}`},
		{`{"type":"event_msg","payload":{"timestamp":1},"origin":["a"]}`, `{"type":"event_msg","payload":{"timestamp":1},"origin":["a"]}`},
	}
	for _, tc := range tests {
		got := normMessage(mustJSON(t, tc.in))
		if !jsonEqual(got, mustJSON(t, tc.want)) {
			t.Errorf("normMessage(%s) = %s, want %s", tc.in, show(got), tc.want)
		}
	}
}

func TestValueOf(t *testing.T) {
	t.Parallel()
	m := omni.AbortMsg("aborted by user").WithOrigin("child")
	m.Timestamp = "2025-01-01T00:00:00.000Z"
	want := mustJSON(t, `{"type":"event_msg","payload":{"type":"abort","reason":"aborted by user"},"origin":["child"]}`)
	if got := valueOf(m); !jsonEqual(got, want) {
		t.Errorf("valueOf = %s", show(got))
	}
}

func TestDiffPath(t *testing.T) {
	t.Parallel()
	tests := []struct{ want, got, path string }{
		{`{"a":1}`, `{"a":1}`, ""},
		{`{"payload":{"status":"failed"}}`, `{"payload":{"status":"completed"}}`, "payload.status"},
		{`{"payload":{"attempt":1}}`, `{"payload":{}}`, "payload.attempt (missing)"},
		{`{"payload":{}}`, `{"payload":{"attempt":1}}`, "payload.attempt (unexpected)"},
		{`{"origin":["a"]}`, `{"origin":["a","b"]}`, "origin (length)"},
		{`{"origin":["a","x"]}`, `{"origin":["a","b"]}`, "origin[1]"},
		{`1`, `2`, "(value)"},
		{`{"a":{}}`, `{"a":[]}`, "a"},
	}
	for _, tc := range tests {
		if got := diffPath(mustJSON(t, tc.want), mustJSON(t, tc.got), ""); got != tc.path {
			t.Errorf("diffPath(%s, %s) = %q, want %q", tc.want, tc.got, got, tc.path)
		}
	}
}

func TestShow(t *testing.T) {
	t.Parallel()
	if got := show(mustJSON(t, `{"b":"<x>","a":1.50}`)); got != `{"a":1.50,"b":"<x>"}` {
		t.Errorf("show = %s", got)
	}
}
