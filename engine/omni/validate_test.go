package omni

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	dec := func(s string) Message {
		m, err := Decode([]byte(s))
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		return m
	}
	model := func(payload string) Message { return dec(`{"type":"model_msg","payload":` + payload + `}`) }
	event := func(payload string) Message { return dec(`{"type":"event_msg","payload":` + payload + `}`) }
	meta := func(payload string) Message { return dec(`{"type":"session_meta","payload":` + payload + `}`) }
	const metaOK = `"session_id":"s","provider":"p","model_id":"m","model_context_window":1,"system_prompt":"","agent_state":"","workspace":""`
	withTS := func(ts string) Message { m := UserText("x"); m.Timestamp = ts; return m }
	withOrigin := func(o []string) Message { m := UserText("x"); m.Origin = o; return m }
	retry := 5
	cases := []struct {
		name string
		m    Message
		want string // "" = valid
	}{
		// envelope
		{"type_unknown", Message{Type: "model", Payload: Payload{Type: Text}}, `omni: type: "model" is not one of session_meta|model_msg|event_msg`},
		{"timestamp_ok", withTS("2026-07-18T03:10:22.531Z"), ""},
		{"timestamp_offset", withTS("2026-07-18T05:10:22+02:00"), ""},
		{"timestamp_bad", withTS("2026-07-18 03:10:22"), `omni: timestamp: "2026-07-18 03:10:22" is not an RFC 3339 time`},
		{"timestamp_range", withTS("2026-02-30T03:10:22Z"), `omni: timestamp: "2026-02-30T03:10:22Z" is not an RFC 3339 time`},
		{"origin_ok", withOrigin([]string{"a", "b"}), ""},
		{"origin_empty", withOrigin([]string{}), `omni: origin: [] must be absent rather than empty`},
		{"origin_decoded_empty", dec(`{"type":"model_msg","payload":{"type":"text","role":"user","text":""},"origin":[]}`), `omni: origin: [] must be absent rather than empty`},
		{"origin_blank_hop", withOrigin([]string{"a", ""}), `omni: origin[1]: "" is not a session id`},
		// payload types
		{"model_unknown", model(`{"type":"texts","role":"user","text":""}`), `omni: payload.type: "texts" is not a model_msg payload type`},
		{"model_event_type", model(`{"type":"request_begin"}`), `omni: payload.type: "request_begin" is not a model_msg payload type`},
		{"event_unknown", event(`{"type":"text"}`), `omni: payload.type: "text" is not an event_msg payload type`},
		{"model_missing_type", model(`{"role":"user","text":""}`), `omni: payload.type: "" is not a model_msg payload type`},
		// session_meta
		{"meta_ok", meta(`{` + metaOK + `}`), ""},
		{"meta_string_window", meta(`{"session_id":"s","provider":"p","model_id":"m","model_context_window":"1M","system_prompt":"","agent_state":"","workspace":"","source":"schedule"}`), ""},
		{"meta_type", meta(`{"type":"session_meta",` + metaOK + `}`), `omni: payload.type: "session_meta" must be absent in a session_meta payload`},
		{"meta_missing", meta(`{"session_id":"s","provider":"p","model_id":"m","model_context_window":1,"system_prompt":"","workspace":""}`), `omni: payload.agent_state: missing`},
		{"meta_empty_id", meta(`{"session_id":"","provider":"p","model_id":"m","model_context_window":1,"system_prompt":"","agent_state":"","workspace":""}`), `omni: payload.session_id: "" must not be empty`},
		{"meta_source", meta(`{` + metaOK + `,"source":"user"}`), `omni: payload.source: "user" is not one of subagent|schedule`},
		{"meta_built_missing", Message{Type: TypeSessionMeta, Payload: Payload{Rest: &Rest{SessionID: "s", Provider: "p", ModelID: "m"}}}, `omni: payload.model_context_window: missing`},
		{"meta_built_ok", Message{Type: TypeSessionMeta, Payload: Payload{Rest: &Rest{SessionID: "s", Provider: "p", ModelID: "m", ModelContextWindow: []byte("1")}}}, ""},
		// required keys and zero values
		{"text_missing_text", model(`{"type":"text","role":"user"}`), `omni: payload.text: missing`},
		{"text_missing_role", model(`{"type":"text","text":"x"}`), `omni: payload.role: missing`},
		{"text_built_empty", UserText(""), ""},
		{"tool_call_built_no_id", ToolCallMsg("", "f", "{}"), `omni: payload.tool_call_id: missing`},
		{"tool_call_decoded_empty_id", model(`{"type":"tool_call","role":"assistant","name":"f","arguments":"","tool_call_id":""}`), `omni: payload.tool_call_id: "" must not be empty`},
		{"tool_call_empty_name", model(`{"type":"tool_call","role":"assistant","name":"","arguments":"","tool_call_id":"A"}`), `omni: payload.name: "" must not be empty`},
		{"partial_tool_call_no_name", Partial(PartialToolCall, EventDelta, "{", "A", "", ""), ""},
		{"output_built_empty", ToolOutput("A", "", StatusCompleted), ""},
		{"image_url_built_empty", Message{Type: TypeModelMsg, Payload: Payload{Type: ImageURL, Role: RoleUser}}, `omni: payload.image_url: missing`},
		// roles
		{"role_bad", model(`{"type":"text","role":"system","text":""}`), `omni: payload.role: "system" is not one of user|assistant`},
		{"tool_call_user", model(`{"type":"tool_call","role":"user","name":"f","arguments":"","tool_call_id":"A"}`), `omni: payload.role: "user" must be assistant for tool_call`},
		{"output_assistant", model(`{"type":"tool_call_output","role":"assistant","output":"","tool_call_id":"A"}`), `omni: payload.role: "assistant" must be user for tool_call_output`},
		{"image_assistant", model(`{"type":"image_url","role":"assistant","image_url":"u"}`), `omni: payload.role: "assistant" must be user for image_url`},
		{"thinking_user", model(`{"type":"thinking","role":"user","thinking":""}`), `omni: payload.role: "user" must be assistant for thinking`},
		{"inline_data_user", model(`{"type":"inline_data","role":"user","data":"","mime_type":"image/png"}`), ""},
		{"partial_output_assistant", withRole(Partial(PartialToolCallOutput, EventDelta, "x", "A", "", ""), RoleAssistant), `omni: payload.role: "assistant" must be user for partial_tool_call_output`},
		// sender
		{"sender_ok", model(`{"type":"text","role":"user","text":"","sender":"parent_agent"}`), ""},
		{"sender_user_ok", model(`{"type":"text","role":"user","text":"","sender":"user"}`), ""},
		{"sender_bad", model(`{"type":"text","role":"user","text":"","sender":"bot"}`), `omni: payload.sender: "bot" is not one of user|parent_agent|harness|server`},
		{"sender_assistant", model(`{"type":"text","role":"assistant","text":"","sender":"harness"}`), `omni: payload.sender: "harness" is only allowed on user text`},
		{"sender_output", model(`{"type":"tool_call_output","role":"user","output":"","tool_call_id":"A","sender":"harness"}`), `omni: payload.sender: "harness" is only allowed on user text`},
		// enums
		{"event_type_bad", model(`{"type":"partial_text","role":"assistant","event_type":"middle","text":""}`), `omni: payload.event_type: "middle" is not one of start|delta|stop`},
		{"event_type_missing", model(`{"type":"partial_text","role":"assistant","text":""}`), `omni: payload.event_type: missing`},
		{"stop_reason_bad", AssistantText("x", "done"), `omni: payload.stop_reason: "done" is not one of completed|failed|aborted|timeout|malformed|auth`},
		{"stop_reason_empty_decoded", model(`{"type":"text","role":"user","text":"","stop_reason":""}`), `omni: payload.stop_reason: "" is not one of completed|failed|aborted|timeout|malformed|auth`},
		{"status_bad", Event(Payload{Type: RequestEnd, Rest: &Rest{Status: "ok"}}), `omni: payload.status: "ok" is not one of completed|failed|aborted|timeout|malformed|auth`},
		{"status_missing", event(`{"type":"request_end"}`), `omni: payload.status: missing`},
		{"request_end_ok", Event(Payload{Type: RequestEnd, Rest: &Rest{Status: StatusFailed, Attempt: 1, RetryInMs: &retry}}), ""},
		{"attempt_zero", event(`{"type":"request_end","status":"failed","attempt":0}`), `omni: payload.attempt: 0 is not a 1-based ordinal`},
		{"decision_bad", ApprovalDecisionMsg("maybe", "A"), `omni: payload.decision: "maybe" is not one of allow|deny|forbidden`},
		{"decision_no_id", event(`{"type":"approval_decision","decision":"allow","tool_call_id":""}`), `omni: payload.tool_call_id: "" must not be empty`},
		{"compaction_ok", event(`{"type":"compaction_begin","reason":"turns","mode":"discard","context":0,"turns":0}`), ""},
		{"compaction_reason", event(`{"type":"compaction_begin","reason":"size","mode":"discard","context":0,"turns":0}`), `omni: payload.reason: "size" is not one of context|turns|manual`},
		{"compaction_reason_null", event(`{"type":"compaction_end","reason":null,"mode":"discard","status":"completed"}`), `omni: payload.reason: null is not one of context|turns|manual`},
		{"compaction_mode", event(`{"type":"compaction_end","reason":"manual","mode":"drop","status":"completed"}`), `omni: payload.mode: "drop" is not one of summarize|discard`},
		{"compaction_end_retry", event(`{"type":"compaction_end","reason":"manual","mode":"discard","status":"failed","retry_in_ms":1}`), `omni: payload.retry_in_ms: is not allowed on compaction_end`},
		{"compaction_begin_missing", event(`{"type":"compaction_begin","reason":"turns","mode":"discard","context":0}`), `omni: payload.turns: missing`},
		{"abort_null", event(`{"type":"abort","reason":null}`), ""},
		{"abort_missing", event(`{"type":"abort"}`), `omni: payload.reason: missing`},
		{"abort_built_empty", AbortMsg(""), ""},
		{"token_usage_built_nil", Event(Payload{Type: TokenUsage, Rest: &Rest{Session: &TokenCounts{}}}), `omni: payload.request: missing`},
		{"subagent_empty", SubagentMsg(""), `omni: payload.session_id: missing`},
		{"tools_no_name", ToolListReadyMsg([]ToolDefinition{{Name: "a"}, {}}), `omni: payload.tools[1].name: "" must not be empty`},
		{"tools_built_nil", Event(Payload{Type: ToolListReady}), ""},
		{"mcp_end_status", event(`{"type":"mcp_connect_end","status":"timeout","results":[]}`), `omni: payload.status: "timeout" is not one of completed|failed|aborted`},
		{"goal_outcome", event(`{"type":"goal_finished","outcome":"done","rounds":1,"tokens_used":2}`), `omni: payload.outcome: "done" is not one of complete|blocked|budget_limited|aborted`},
		{"long_value_cut", AssistantText("x", "a-very-long-stop-reason-that-goes-on-and-on-and-on-and-on-and-on-and-on"), `omni: payload.stop_reason: "a-very-long-stop-reason-that-goes-on-and-on-and-on-and-on-and-on"… is not one of completed|failed|aborted|timeout|malformed|auth`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(tc.m)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want == "":
				return
			case err == nil:
				t.Fatalf("valid, want %s", tc.want)
			case err.Error() != tc.want:
				t.Fatalf("\n got %s\nwant %s", err, tc.want)
			}
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Field == "" {
				t.Fatalf("not a *ValidationError with a field: %#v", err)
			}
		})
	}
}

func TestValidateCanonicalAndShared(t *testing.T) {
	t.Parallel()
	for _, line := range sharedEnvelopes(t) {
		m, err := Decode([]byte(line))
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if err := Validate(m); err != nil {
			t.Errorf("%s: %v", line, err)
		}
	}
}

func TestValidateDoesNotAllocate(t *testing.T) {
	msgs := []Message{
		Partial(PartialText, EventDelta, "hello", "", "", StatusCompleted),
		Partial(PartialToolCallOutput, EventDelta, "x", "A", "", StatusCompleted),
		ToolCallMsg("A", "f", "{}"),
		TokenUsageMsg(TokenCounts{}, TokenCounts{}),
	}
	msgs[0].Timestamp = "2026-07-18T03:10:22.531Z"
	for _, m := range msgs {
		if n := testing.AllocsPerRun(100, func() { _ = Validate(m) }); n != 0 {
			t.Errorf("%s: %v allocs", m.Payload.Type, n)
		}
	}
}

// sharedEnvelopes returns the envelopes of testdata/envelopes.jsonl: real
// traces of the reference implementation and the messages of the
// conformance scenarios.
func sharedEnvelopes(t testing.TB) []string {
	t.Helper()
	data, err := os.ReadFile("testdata/envelopes.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

func withRole(m Message, role string) Message { m.Payload.Role = role; return m }

// canonicalCases are timestamps in and near the canonical layout.
var canonicalCases = []string{
	"2026-07-18T03:10:22.531Z", "2024-02-29T00:00:00.000Z", "2023-02-29T00:00:00.000Z",
	"2026-13-01T00:00:00.000Z", "2026-04-31T00:00:00.000Z", "2026-01-01T24:00:00.000Z",
	"2026-01-01T23:60:00.000Z", "2026-01-01T23:59:60.000Z", "2026-01-01T23:59:59.999Z",
	"2026-01-01 23:59:59.999Z", "2026-01-01T23:59:59.99xZ", "1900-02-29T00:00:00.000Z",
	"2000-02-29T00:00:00.000Z", "0000-01-01T00:00:00.000Z", "2026-04-30T23:59:59.999Z",
	"2026-12-31T00:00:00.000Z", "2026-01-01T23:59:6:.000Z", "2026-01-01T23:5/:00.000Z",
	"2026-00-10T00:00:00.000Z", "2026-01-00T00:00:00.000Z",
}

// The canonical-layout fast path agrees with time.Parse.
func TestCanonicalTimestamp(t *testing.T) {
	for _, ts := range canonicalCases {
		_, err := time.Parse(time.RFC3339, ts)
		if got := isCanonicalTimestamp(ts); got && err != nil {
			t.Errorf("%s: fast path accepts what time.Parse rejects (%v)", ts, err)
		}
		m := Message{Timestamp: ts, Type: TypeEventMsg, Payload: Payload{Type: RequestBegin}}
		if (m.Validate() == nil) != (err == nil) {
			t.Errorf("%s: Validate %v, time.Parse %v", ts, m.Validate(), err)
		}
	}
}

// canonicalRef is the first, plainer version of isCanonicalTimestamp, kept
// as the reference of FuzzCanonicalTimestamp.
func canonicalRef(ts string) bool {
	if len(ts) != len(TimestampLayout) || ts[4] != '-' || ts[7] != '-' || ts[10] != 'T' ||
		ts[13] != ':' || ts[16] != ':' || ts[19] != '.' || ts[23] != 'Z' {
		return false
	}
	num := func(i, n int) int {
		v := 0
		for _, c := range []byte(ts[i : i+n]) {
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	year, month, day := num(0, 4), num(5, 2), num(8, 2)
	hour, minute, sec, ms := num(11, 2), num(14, 2), num(17, 2), num(20, 3)
	if year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 ||
		minute < 0 || minute > 59 || sec < 0 || sec > 59 || ms < 0 {
		return false
	}
	days := [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[month]
	if month == 2 && year%4 == 0 && (year%100 != 0 || year%400 == 0) {
		days = 29
	}
	return day <= days
}

// FuzzCanonicalTimestamp checks the canonical-layout fast path against its
// reference, and that what it accepts time.Parse accepts.
func FuzzCanonicalTimestamp(f *testing.F) {
	for _, ts := range canonicalCases {
		f.Add(ts)
	}
	f.Fuzz(func(t *testing.T, ts string) {
		got, want := isCanonicalTimestamp(ts), canonicalRef(ts)
		if got != want {
			t.Fatalf("%q: %v, reference %v", ts, got, want)
		}
		if _, err := time.Parse(time.RFC3339, ts); got && err != nil {
			t.Fatalf("%q accepted, time.Parse: %v", ts, err)
		}
	})
}
