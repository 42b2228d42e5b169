package omni

import (
	"encoding/json"
	"errors"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// canonical holds one envelope per payload type of PROTOCOL.md, written the
// way the reference writes them: keys in reference order, JSON.stringify
// escaping, no white space.
var canonical = []struct{ name, json string }{
	{"session_meta", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"session_meta","payload":{"session_id":"session-2026-07-18-11-10-22-3f8a1c2d","provider":"anthropic","model_id":"claude","model_context_window":200000,"system_prompt":"You are\na test agent.","agent_state":"/agents/a","workspace":"/ws"}}`},
	{"session_meta/string_window_source", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"session_meta","payload":{"session_id":"s1","provider":"p","model_id":"m","model_context_window":"200k","system_prompt":"","agent_state":"","workspace":"","source":"subagent"},"origin":["parent"]}`},
	{"text/user", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"model_msg","payload":{"type":"text","role":"user","text":"hi <b> & ` + "\u2028" + `","stop_reason":"completed"}}`},
	{"text/sender", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"model_msg","payload":{"type":"text","role":"user","text":"[user_steering]\nx\n[/user_steering]","stop_reason":"completed","sender":"harness"}}`},
	{"text/assistant_fidelity", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"model_msg","payload":{"type":"text","role":"assistant","text":"ok","stop_reason":"completed","fidelity":{"signature":"abc","n":[1,2.5e3,null,true]}}}`},
	{"image_url", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"model_msg","payload":{"type":"image_url","role":"user","image_url":"https://example.com/a.png","stop_reason":"completed"}}`},
	{"inline_data", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"model_msg","payload":{"type":"inline_data","role":"assistant","data":"aGVsbG8=","mime_type":"image/png","stop_reason":"completed","fidelity":{}}}`},
	{"thinking", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"model_msg","payload":{"type":"thinking","role":"assistant","thinking":"Two tools are needed.","stop_reason":"completed","fidelity":{"sig":"x"}}}`},
	{"inline_thinking", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"model_msg","payload":{"type":"inline_thinking","role":"assistant","data":"ZW5j","mime_type":"application/octet-stream","stop_reason":"completed"}}`},
	{"tool_call", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"model_msg","payload":{"type":"tool_call","role":"assistant","name":"list_files","arguments":"{\"path\":\".\"}","tool_call_id":"A","stop_reason":"completed","fidelity":{"k":"v"}}}`},
	{"tool_call_output", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"model_msg","payload":{"type":"tool_call_output","role":"user","output":"a\nb\tc","images":["data:image/png;base64,AAAA"],"tool_call_id":"A","stop_reason":"failed"}}`},
	{"partial_text", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"model_msg","payload":{"type":"partial_text","role":"assistant","event_type":"delta","text":"I will run both tools.","stop_reason":"completed"}}`},
	{"partial_thinking", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"model_msg","payload":{"type":"partial_thinking","role":"assistant","event_type":"start","thinking":"","stop_reason":"completed"}}`},
	{"partial_tool_call", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"model_msg","payload":{"type":"partial_tool_call","role":"assistant","event_type":"delta","name":"list_files","arguments":"{\"path\":","tool_call_id":"A","stop_reason":"completed"}}`},
	{"partial_tool_call_output", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"model_msg","payload":{"type":"partial_tool_call_output","role":"user","event_type":"delta","output":"line\n","images":["data:image/png;base64,AAAA","data:image/jpeg;base64,BBBB"],"tool_call_id":"A","stop_reason":"completed"}}`},
	{"request_begin", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"event_msg","payload":{"type":"request_begin"}}`},
	{"request_end", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"event_msg","payload":{"type":"request_end","status":"timeout","error_message":"upstream timed out","attempt":2,"retry_in_ms":4000}}`},
	{"request_end/completed", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"event_msg","payload":{"type":"request_end","status":"completed"}}`},
	{"approval_decision", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"event_msg","payload":{"type":"approval_decision","decision":"forbidden","tool_call_id":"B"}}`},
	{"token_usage", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"event_msg","payload":{"type":"token_usage","session":{"cache_read":10,"cache_write":20,"output":30,"total":160},"request":{"cache_read":1,"cache_write":2,"output":3,"total":16}}}`},
	{"compaction_begin", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"event_msg","payload":{"type":"compaction_begin","reason":"context","mode":"summarize","context":120000,"turns":7}}`},
	{"compaction_end", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"event_msg","payload":{"type":"compaction_end","reason":"manual","mode":"summarize","status":"failed","attempt":3,"error_message":"no summary"}}`},
	{"abort", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"event_msg","payload":{"type":"abort","reason":"aborted by user"}}`},
	{"abort/null", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"event_msg","payload":{"type":"abort","reason":null}}`},
	{"subagent", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"event_msg","payload":{"type":"subagent","session_id":"child-1"}}`},
	{"tool_list_ready", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"event_msg","payload":{"type":"tool_list_ready","tools":[{"name":"list_files","description":"List files","parameters":{"type":"object","properties":{"path":{"type":"string"}}}},{"name":"noop","description":""}]}}`},
	{"tool_list_ready/empty", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"event_msg","payload":{"type":"tool_list_ready","tools":[]}}`},
	{"mcp_connect_begin", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"event_msg","payload":{"type":"mcp_connect_begin","servers":["fs","web"]}}`},
	{"mcp_connect_end", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"event_msg","payload":{"type":"mcp_connect_end","status":"completed","results":[{"server":"fs","transport":"stdio","status":"completed","duration_ms":12,"tools":3}]}}`},
	{"goal_finished", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"event_msg","payload":{"type":"goal_finished","outcome":"budget_limited","rounds":4,"tokens_used":12345}}`},
	{"origin", `{"timestamp":"2026-07-18T03:10:22.531Z","type":"model_msg","payload":{"type":"partial_text","role":"assistant","event_type":"stop","text":"","stop_reason":"aborted"},"origin":["child","grandchild"]}`},
	{"no_timestamp", `{"type":"model_msg","payload":{"type":"text","role":"assistant","text":"x"}}`},
}

func TestRoundTripCanonical(t *testing.T) {
	t.Parallel()
	for _, tc := range canonical {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Decode([]byte(tc.json))
			if err != nil {
				t.Fatal(err)
			}
			if err := Validate(m); err != nil {
				t.Errorf("Validate: %v", err)
			}
			out, err := m.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tc.json {
				t.Fatalf("encode differs\n got %s\nwant %s", out, tc.json)
			}
			m2, err := Decode(out)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(m, m2) {
				t.Fatalf("decode(encode(m)) != m\n%#v\n%#v", m, m2)
			}
			// encoding/json agrees that it is one valid value.
			var v any
			if err := json.Unmarshal(out, &v); err != nil {
				t.Fatalf("encoding/json rejects output: %v", err)
			}
		})
	}
}

// TestBuiltMatchesCanonical checks that messages built in Go (no decode
// bookkeeping) encode to the same bytes as the reference.
func TestBuiltMatchesCanonical(t *testing.T) {
	t.Parallel()
	ts := "2026-07-18T03:10:22.531Z"
	stamp := func(m Message) Message { m.Timestamp = ts; return m }
	retry := 4000
	cases := []struct {
		name string
		m    Message
	}{
		{"partial_text", stamp(Partial(PartialText, EventDelta, "I will run both tools.", "", "", StatusCompleted))},
		{"partial_tool_call", stamp(Partial(PartialToolCall, EventDelta, `{"path":`, "A", "list_files", StatusCompleted))},
		{"request_begin", stamp(RequestBeginMsg())},
		{"request_end", stamp(Event(Payload{Type: RequestEnd, Rest: &Rest{Status: StatusTimeout, ErrorMessage: "upstream timed out", Attempt: 2, RetryInMs: &retry}}))},
		{"request_end/completed", stamp(Event(Payload{Type: RequestEnd, Rest: &Rest{Status: StatusCompleted}}))},
		{"approval_decision", stamp(ApprovalDecisionMsg(DecisionForbidden, "B"))},
		{"token_usage", stamp(TokenUsageMsg(TokenCounts{CacheRead: 10, CacheWrite: 20, Output: 30, Total: 160}, TokenCounts{CacheRead: 1, CacheWrite: 2, Output: 3, Total: 16}))},
		{"abort", stamp(AbortMsg("aborted by user"))},
		{"subagent", stamp(SubagentMsg("child-1"))},
		{"tool_list_ready/empty", stamp(ToolListReadyMsg(nil))},
	}
	want := map[string]string{}
	for _, c := range canonical {
		want[c.name] = c.json
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, _ := tc.m.MarshalJSON()
			if string(out) != want[tc.name] {
				t.Fatalf("\n got %s\nwant %s", out, want[tc.name])
			}
			if err := Validate(tc.m); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func TestBuiltRequiredKeys(t *testing.T) {
	t.Parallel()
	// A built text with an empty body still carries "text"; a built tool
	// output with an empty output still carries "output".
	cases := []struct {
		m    Message
		want string
	}{
		{UserText(""), `{"type":"model_msg","payload":{"type":"text","role":"user","text":"","stop_reason":"completed"}}`},
		{ToolOutput("A", "", StatusFailed), `{"type":"model_msg","payload":{"type":"tool_call_output","role":"user","output":"","tool_call_id":"A","stop_reason":"failed"}}`},
		{Partial(PartialToolCallOutput, EventStop, "", "A", "", StatusCompleted), `{"type":"model_msg","payload":{"type":"partial_tool_call_output","role":"user","event_type":"stop","output":"","tool_call_id":"A","stop_reason":"completed"}}`},
	}
	for _, tc := range cases {
		if out, _ := tc.m.MarshalJSON(); string(out) != tc.want {
			t.Errorf("\n got %s\nwant %s", out, tc.want)
		}
	}
}

func TestPreservesUnknownAndFidelity(t *testing.T) {
	t.Parallel()
	in := `{"timestamp":"2026-11-30T04:09:45.258Z","type":"model_msg","unknown_env":1,"payload":{"type":"text","role":"user","text":"a\u003c\"\n\u0001 é","stop_reason":"completed","fidelity":{ "x" : [1, 2.50, "\u00e9"] },"zz":{"k": 1},"a_b":[ ],"n":-0.0e+1},"origin":["c1"]}`
	m, err := Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(m.Payload.Fidelity()), `{ "x" : [1, 2.50, "\u00e9"] }`; got != want {
		t.Errorf("fidelity %s, want %s", got, want)
	}
	wantExtra := []RawField{{"zz", RawJSON(`{"k": 1}`)}, {"a_b", RawJSON(`[ ]`)}, {"n", RawJSON(`-0.0e+1`)}}
	if !reflect.DeepEqual(m.Payload.Extra(), wantExtra) {
		t.Errorf("extra %q", m.Payload.Extra())
	}
	out, _ := m.MarshalJSON()
	want := `{"timestamp":"2026-11-30T04:09:45.258Z","type":"model_msg","payload":{"type":"text","role":"user","text":"a<\"\n\u0001 é","stop_reason":"completed","fidelity":{ "x" : [1, 2.50, "\u00e9"] },"zz":{"k": 1},"a_b":[ ],"n":-0.0e+1},"origin":["c1"]}`
	if string(out) != want {
		t.Fatalf("\n got %s\nwant %s", out, want)
	}
}

// TestTokenCountsExtraKept checks that a token_usage's counts keep the keys
// a producer added beyond the four, as they came and in their order
// (P-5), after the four, which a missing one's zero completes.
func TestTokenCountsExtraKept(t *testing.T) {
	t.Parallel()
	in := `{"type":"event_msg","payload":{"type":"token_usage","session":{"input": 4,"cache_read":1,"cache_write":2,"output":3,"total":10,"details":{ "r" : [1, 2.50] }},"request":{"total":7,"x":null}}}`
	m, err := Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Payload.Session().Extra, `"input": 4,"details":{ "r" : [1, 2.50] }`; got != want {
		t.Errorf("session extra %s, want %s", got, want)
	}
	out, _ := m.MarshalJSON()
	want := `{"type":"event_msg","payload":{"type":"token_usage","session":{"cache_read":1,"cache_write":2,"output":3,"total":10,"input": 4,"details":{ "r" : [1, 2.50] }},"request":{"cache_read":0,"cache_write":0,"output":0,"total":7,"x":null}}}`
	if string(out) != want {
		t.Fatalf("\n got %s\nwant %s", out, want)
	}
	if again, err := Decode(out); err != nil || *again.Payload.Session() != *m.Payload.Session() || *again.Payload.Request() != *m.Payload.Request() {
		t.Errorf("written back and decoded again: %v, %+v", err, again.Payload.Session())
	}
	if sum := m.Payload.Session().Add(*m.Payload.Request()); sum.Extra != "" || sum.Total != 17 {
		t.Errorf("Add = %+v: want the counts summed and no extra keys", sum)
	}
	if got := string(m.Payload.Request().AppendJSON([]byte("x"))); got != `x{"cache_read":0,"cache_write":0,"output":0,"total":7,"x":null}` {
		t.Errorf("AppendJSON = %s", got)
	}
}

// TestDecodedKeysKept checks that a decoded payload is written back with
// exactly its keys: missing required keys are not invented, keys outside
// the type's layout are kept.
func TestDecodedKeysKept(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{"type":"model_msg","payload":{"type":"text"}}`,
		`{"type":"model_msg","payload":{"type":"text","role":"user","text":"","tool_call_id":"x","attempt":0}}`,
		`{"type":"session_meta","payload":{"type":"text","session_id":"s"}}`,
		`{"type":"model_msg","payload":{}}`,
		`{"type":"bogus","payload":{"type":"nope","text":"t"}}`,
	} {
		m, err := Decode([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if out, _ := m.MarshalJSON(); string(out) != in {
			t.Errorf("\n got %s\nwant %s", out, in)
		}
	}
}

func TestEscapingMatchesJSONStringify(t *testing.T) {
	t.Parallel()
	// Expected values were produced by JavaScript's JSON.stringify.
	cases := []struct{ in, want string }{
		{"a<b>&", `"a<b>&"`},
		{"\u2028\u2029", "\"\u2028\u2029\""},
		{"\x00\x01\x1f\x7f", `"\u0000\u0001\u001f` + "\x7f\""},
		{`"\/`, `"\"\\/"`},
		{"\b\f\n\r\t", `"\b\f\n\r\t"`},
		{"é😀\ufeff", "\"é😀\ufeff\""},
		{"bad\xffutf8", `"bad\ufffdutf8"`},
	}
	for _, tc := range cases {
		if got := string(appendString(nil, tc.in)); got != tc.want {
			t.Errorf("appendString(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestDecodeStrings(t *testing.T) {
	t.Parallel()
	cases := []struct{ json, want string }{
		{`"plain"`, "plain"},
		{`"\u00e9\u00E9"`, "éé"},
		{`"\ud83d\ude00"`, "😀"},
		{`"\ud83d"`, "\ufffd"},
		{`"\ude00x"`, "\ufffdx"},
		{`"\ud83d\u0041"`, "\ufffdA"},
		{`"\ud83d\ud83d\ude00"`, "\ufffd😀"},
		{`"\"\\\/\b\f\n\r\t"`, "\"\\/\b\f\n\r\t"},
		{"\"raw\xffbyte\"", "raw\ufffdbyte"},
		{"\"\xed\xa0\x80\"", "\ufffd\ufffd\ufffd"},
		{"\"\u2028\"", "\u2028"},
	}
	for _, tc := range cases {
		in := `{"type":"model_msg","payload":{"type":"text","text":` + tc.json + `}}`
		m, err := Decode([]byte(in))
		if err != nil {
			t.Errorf("%s: %v", tc.json, err)
			continue
		}
		if m.Payload.Text != tc.want {
			t.Errorf("%s: got %q, want %q", tc.json, m.Payload.Text, tc.want)
		}
		var std string
		json.Unmarshal([]byte(tc.json), &std)
		if std != tc.want {
			t.Errorf("%s: encoding/json gives %q, test wants %q", tc.json, std, tc.want)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	env := func(payload string) string { return `{"type":"model_msg","payload":` + payload + `}` }
	cases := []struct{ name, in, want string }{
		{"empty", ``, `omni: invalid JSON: unexpected end of input`},
		{"not_object", `[1]`, `omni: message is not a JSON object (got array)`},
		{"garbage", `}`, `omni: invalid JSON: unexpected '}' at offset 0`},
		{"trailing", `{"type":"x","payload":{}} x`, `omni: invalid JSON: trailing data at offset 26`},
		{"missing_payload", `{"type":"x"}`, `omni: payload: missing`},
		{"missing_type", `{"payload":{}}`, `omni: type: missing`},
		{"dup_envelope", `{"type":"x","type":"y","payload":{}}`, `omni: type: duplicate key`},
		{"dup_unknown_envelope", `{"q":1,"q":2,"type":"x","payload":{}}`, `omni: q: duplicate key`},
		{"dup_payload_key", env(`{"text":"a","text":"b"}`), `omni: payload.text: duplicate key`},
		{"dup_escaped_key", env(`{"text":"a","\u0074ext":"b"}`), `omni: payload.text: duplicate key`},
		{"dup_extra", env(`{"zz":1,"zz":2}`), `omni: payload.zz: duplicate key`},
		{"text_number", env(`{"text":12}`), `omni: payload.text: want string, got number`},
		{"timestamp_null", `{"timestamp":null,"type":"x","payload":{}}`, `omni: timestamp: want string, got null`},
		{"payload_null", `{"type":"x","payload":null}`, `omni: payload: want object, got null`},
		{"fidelity_array", env(`{"fidelity":[]}`), `omni: payload.fidelity: want object, got array`},
		{"origin_number", `{"type":"x","payload":{},"origin":["a",1]}`, `omni: origin[1]: want string, got number`},
		{"images_elem", env(`{"images":[true]}`), `omni: payload.images[0]: want string, got boolean`},
		{"attempt_float", env(`{"attempt":1.5}`), `omni: payload.attempt: want integer, got 1.5`},
		{"attempt_huge", env(`{"attempt":1e30}`), `omni: payload.attempt: want integer, got 1e30`},
		{"attempt_string", env(`{"attempt":"1"}`), `omni: payload.attempt: want integer, got string`},
		{"counts_field", env(`{"session":{"total":"x"}}`), `omni: payload.session.total: want integer, got string`},
		{"counts_dup", env(`{"request":{"total":1,"total":2}}`), `omni: payload.request.total: duplicate key`},
		{"tools_elem", env(`{"tools":[{"name":"a"},3]}`), `omni: payload.tools[1]: want object, got number`},
		{"tools_name", env(`{"tools":[{"name":7}]}`), `omni: payload.tools[0].name: want string, got number`},
		{"window_bool", `{"type":"session_meta","payload":{"model_context_window":true}}`, `omni: payload.model_context_window: want number or string, got boolean`},
		{"reason_number", env(`{"reason":1}`), `omni: payload.reason: want string, got number`},
		{"bad_escape", env(`{"text":"\x"}`), `omni: payload.text: invalid JSON: unexpected 'x' at offset 40`},
		{"bad_u_escape", env(`{"text":"\u12"}`), `omni: payload.text: invalid JSON: bad \u escape at offset 39`},
		{"control_char", env("{\"text\":\"a\nb\"}"), `omni: payload.text: invalid JSON: unexpected '\n' at offset 40`},
		{"unterminated", env(`{"text":"abc`), `omni: payload.text: invalid JSON: unexpected end of input`},
		{"bad_number", env(`{"zz":01}`), `omni: payload: invalid JSON: unexpected '1' at offset 37`},
		{"bad_literal", env(`{"zz":nul}`), `omni: payload.zz: invalid JSON: unexpected '}' at offset 39`},
		{"deep", env(`{"zz":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`), `omni: payload.zz: invalid JSON: nesting deeper than 512 levels at offset 546`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]byte(tc.in))
			if err == nil {
				t.Fatalf("no error, want %s", tc.want)
			}
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("%T is not a *DecodeError", err)
			}
			if err.Error() != tc.want {
				t.Fatalf("\n got %s\nwant %s", err, tc.want)
			}
		})
	}
}

func TestDecodeAccepts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in string
		check    func(Message) bool
	}{
		{"origin_null", `{"type":"x","payload":{},"origin":null}`, func(m Message) bool { return m.Origin == nil }},
		{"origin_empty", `{"type":"x","payload":{},"origin":[]}`, func(m Message) bool { return m.Origin != nil && len(m.Origin) == 0 }},
		{"reason_null", `{"type":"event_msg","payload":{"type":"abort","reason":null}}`, func(m Message) bool { return m.Payload.ReasonNull() && m.Payload.Has("reason") }},
		{"attempt_exp", `{"type":"x","payload":{"attempt":3e0,"context":-9223372036854775808}}`, func(m Message) bool { return m.Payload.Attempt() == 3 && m.Payload.Context() == -1<<63 }},
		{"window_raw", `{"type":"session_meta","payload":{"model_context_window":2.0E5}}`, func(m Message) bool { return string(m.Payload.ModelContextWindow()) == "2.0E5" }},
		{"whitespace", " \t\r\n{ \"type\" : \"x\" , \"payload\" : { } } \n", func(m Message) bool { return m.Type == "x" }},
		{"counts_unknown", `{"type":"x","payload":{"session":{"x":[1],"total":5}}}`, func(m Message) bool { return m.Payload.Session().Total == 5 }},
		{"tools_unknown_key", `{"type":"x","payload":{"tools":[{"name":"a","extra":{}}]}}`, func(m Message) bool { return len(m.Payload.Tools()) == 1 && m.Payload.Tools()[0].Name == "a" }},
	}
	for _, tc := range cases {
		m, err := Decode([]byte(tc.in))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !tc.check(m) {
			t.Errorf("%s: unexpected %#v", tc.name, m)
		}
	}
}

func TestDecodeTooLarge(t *testing.T) {
	t.Parallel()
	big := make([]byte, MaxMessageBytes+1)
	if _, err := Decode(big); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v", err)
	}
}

func TestDecodeArray(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(" [")
	for i, c := range canonical {
		if i > 0 {
			b.WriteString(" ,\n")
		}
		b.WriteString(c.json)
	}
	b.WriteString("] ")
	ms, err := DecodeArray([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != len(canonical) {
		t.Fatalf("got %d messages", len(ms))
	}
	for i, m := range ms {
		if out, _ := m.MarshalJSON(); string(out) != canonical[i].json {
			t.Errorf("[%d]\n got %s\nwant %s", i, out, canonical[i].json)
		}
	}
	if ms, err := DecodeArray([]byte(`[]`)); err != nil || ms == nil || len(ms) != 0 {
		t.Errorf("empty array: %v %v", ms, err)
	}
	for _, tc := range []struct{ in, want string }{
		{`{}`, `omni: want array, got object`},
		{`[{"type":"x","payload":{}},{"type":"x","payload":{}},{"type":"x","payload":{}},{"type":"x","payload":{"text":1}}]`, `omni: [3].payload.text: want string, got number`},
		{`[{"type":"x","payload":{}},null]`, `omni: [1]: message is not a JSON object (got null)`},
		{`[{"type":"x","payload":{}} {"type":"x","payload":{}}]`, `omni: [0]: invalid JSON: unexpected '{' at offset 27`},
		{`[{"type":"x","payload":{}}`, `omni: [0]: invalid JSON: unexpected end of input`},
		{`[{"type":"x","payload":{}}]]`, `omni: invalid JSON: trailing data at offset 27`},
		{`[{"payload":{}}]`, `omni: [0].type: missing`},
	} {
		if _, err := DecodeArray([]byte(tc.in)); err == nil || err.Error() != tc.want {
			t.Errorf("%s:\n got %v\nwant %s", tc.in, err, tc.want)
		}
	}
}

func TestPayloadUnmarshalJSON(t *testing.T) {
	t.Parallel()
	var p Payload
	if err := json.Unmarshal([]byte(`{"type":"text","role":"user","text":"x","q":[1]}`), &p); err != nil {
		t.Fatal(err)
	}
	if p.Text != "x" || !p.Decoded() || !p.Has("role") || p.Has("stop_reason") || len(p.Extra()) != 1 {
		t.Fatalf("%#v", p)
	}
	if out, _ := json.Marshal(p); string(out) != `{"type":"text","role":"user","text":"x","q":[1]}` {
		t.Fatalf("%s", out)
	}
	var m Message
	if err := json.Unmarshal([]byte(canonical[2].json), &m); err != nil || m.Payload.Text == "" {
		t.Fatalf("%v %#v", err, m)
	}
}

// TestRoundTripShared re-encodes real reference output and the conformance
// messages byte for byte.
func TestRoundTripShared(t *testing.T) {
	t.Parallel()
	for _, line := range sharedEnvelopes(t) {
		m, err := Decode([]byte(line))
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if out, _ := m.MarshalJSON(); string(out) != line {
			t.Errorf("\n got %s\nwant %s", out, line)
		}
	}
}

func TestKeyTables(t *testing.T) {
	for i, name := range keyNameTab {
		bit := keySet(1) << i
		if lookupKey([]byte(name)) != bit || keyBits[name] != bit || keyName(bit) != name {
			t.Errorf("key %q: tables disagree", name)
		}
	}
	if lookupKey([]byte("nope")) != 0 {
		t.Error("unknown key found")
	}
	for _, s := range []string{TypeModelMsg, PartialText, RoleUser, StatusAuth, "budget_limited", "other"} {
		if got := intern([]byte(s)); got != s {
			t.Errorf("intern(%q) = %q", s, got)
		}
	}
	if n := testing.AllocsPerRun(10, func() { intern([]byte(PartialToolCallOutput)) }); n != 0 {
		t.Errorf("intern allocates %v", n)
	}
}

// TestDecodeAllocs guards the hot path: a streamed delta costs one
// allocation per string that is not one of the protocol's fixed strings.
func TestDecodeAllocs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
	}{
		{benchPartialText, 2}, // timestamp, text
		{benchToolCall, 4},    // timestamp, name, arguments, tool_call_id
		{benchTokenUsage, 2},  // timestamp, the Rest with its two counts
	} {
		data := []byte(tc.in)
		if n := testing.AllocsPerRun(100, func() { Decode(data) }); n > tc.want {
			t.Errorf("%s: %v allocs, want %v", tc.in, n, tc.want)
		}
	}
}

// TestDecodeArrayBounded checks that a hostile array of tiny elements does
// not make DecodeArray reserve a Message per element.
func TestDecodeArrayBounded(t *testing.T) {
	data := []byte("[" + strings.Repeat("0,", 100000) + "0]")
	if got := countElements(data); got != 0 {
		t.Fatalf("countElements = %d", got)
	}
	checkArrayAllocs(t, data)
	checkArrayAllocs(t, []byte("["+strings.Repeat("{},", 100000)+"{}]"))
	if _, err := Decode([]byte(minEnvelope)); err != nil {
		t.Fatal(err)
	}
}

func checkArrayAllocs(t *testing.T, data []byte) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := DecodeArray(data); err == nil {
		t.Fatal("no error")
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 40*uint64(len(data)) {
		t.Fatalf("%d bytes allocated for a %d-byte input", n, len(data))
	}
}

// TestValueSlots checks each key that valueSlots routes: a value decoded
// for it lands in its own field (read by name here), of the slot's kind,
// and is written back under its key.
func TestValueSlots(t *testing.T) {
	t.Parallel()
	str := func(f func(p *Payload) string) func(p *Payload) any { return func(p *Payload) any { return f(p) } }
	num := func(f func(r *Rest) int64) func(p *Payload) any {
		return func(p *Payload) any {
			if p.Rest == nil {
				return nil
			}
			return f(p.Rest)
		}
	}
	rest := func(f func(r *Rest) string) func(p *Payload) any {
		return func(p *Payload) any {
			if p.Rest == nil {
				return nil
			}
			return f(p.Rest)
		}
	}
	fields := map[string]func(p *Payload) any{
		"type":          str(func(p *Payload) string { return p.Type }),
		"role":          str(func(p *Payload) string { return p.Role }),
		"text":          str(func(p *Payload) string { return p.Text }),
		"thinking":      str(func(p *Payload) string { return p.Thinking }),
		"name":          str(func(p *Payload) string { return p.Name }),
		"arguments":     str(func(p *Payload) string { return p.Arguments }),
		"tool_call_id":  str(func(p *Payload) string { return p.ToolCallID }),
		"output":        str(func(p *Payload) string { return p.Output }),
		"event_type":    str(func(p *Payload) string { return p.EventType }),
		"stop_reason":   str(func(p *Payload) string { return p.StopReason }),
		"image_url":     rest(func(r *Rest) string { return r.ImageURL }),
		"data":          rest(func(r *Rest) string { return r.Data }),
		"mime_type":     rest(func(r *Rest) string { return r.MimeType }),
		"sender":        rest(func(r *Rest) string { return r.Sender }),
		"status":        rest(func(r *Rest) string { return r.Status }),
		"error_message": rest(func(r *Rest) string { return r.ErrorMessage }),
		"decision":      rest(func(r *Rest) string { return r.Decision }),
		"mode":          rest(func(r *Rest) string { return r.Mode }),
		"session_id":    rest(func(r *Rest) string { return r.SessionID }),
		"outcome":       rest(func(r *Rest) string { return r.Outcome }),
		"provider":      rest(func(r *Rest) string { return r.Provider }),
		"model_id":      rest(func(r *Rest) string { return r.ModelID }),
		"system_prompt": rest(func(r *Rest) string { return r.SystemPrompt }),
		"agent_state":   rest(func(r *Rest) string { return r.AgentState }),
		"workspace":     rest(func(r *Rest) string { return r.Workspace }),
		"source":        rest(func(r *Rest) string { return r.Source }),
		"context":       num(func(r *Rest) int64 { return r.Context }),
		"turns":         num(func(r *Rest) int64 { return r.Turns }),
		"rounds":        num(func(r *Rest) int64 { return r.Rounds }),
		"tokens_used":   num(func(r *Rest) int64 { return r.TokensUsed }),
	}
	routed := 0
	for i, name := range keyNameTab {
		slot := valueSlots[i]
		get, ok := fields[name]
		if (slot.kind != 0) != ok {
			t.Errorf("key %q: slot kind %d, but the test lists it: %v", name, slot.kind, ok)
			continue
		}
		if !ok {
			continue
		}
		routed++
		value, want := `"v-`+name+`"`, any("v-"+name)
		if slot.kind == slotInt {
			value, want = strconv.Itoa(1000+i), int64(1000+i)
		}
		in := `{"type":"bogus","payload":{"` + name + `":` + value + `}}`
		m, err := Decode([]byte(in))
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if got := get(&m.Payload); got != want {
			t.Errorf("%s: the field holds %v, want %v", in, got, want)
		}
		if out, _ := m.MarshalJSON(); string(out) != in {
			t.Errorf("\n got %s\nwant %s", out, in)
		}
		// A value of the wrong type is refused, naming the key.
		bad := `{"type":"bogus","payload":{"` + name + `":[]}}`
		if _, err := Decode([]byte(bad)); err == nil || !strings.Contains(err.Error(), "payload."+name) {
			t.Errorf("%s: error %v, want one naming payload.%s", bad, err, name)
		}
	}
	if routed != len(fields) {
		t.Errorf("%d keys routed, the test lists %d", routed, len(fields))
	}
}
