package trace

import (
	"errors"
	"strings"
	"testing"
)

const goodMeta = `{"session_id":"session-2026-11-30-09-00-00-3f8a1c2d","provider":"p","model_id":"m",` +
	`"model_context_window":200000,"system_prompt":"","agent_state":"","workspace":""}`

// replaceKey returns goodMeta with key's "key":value pair replaced by kv ("" drops it).
func replaceKey(t *testing.T, key, kv string) string {
	t.Helper()
	i := strings.Index(goodMeta, `"`+key+`":`)
	if i < 0 {
		t.Fatalf("no key %s", key)
	}
	j := strings.IndexAny(goodMeta[i+len(key)+3:], ",}") + i + len(key) + 3
	out := goodMeta[:i] + kv + goodMeta[j:]
	if kv == "" {
		out = strings.Replace(strings.Replace(out, ",,", ",", 1), "{,", "{", 1)
		out = strings.Replace(out, ",}", "}", 1)
	}
	return out
}

func TestParseMetaAccepts(t *testing.T) {
	for _, payload := range []string{
		goodMeta,
		replaceKey(t, "model_context_window", `"model_context_window":"200k"`),
		strings.Replace(goodMeta, "}", `,"source":"subagent","thinking_level":"high","x":{"y":null}}`, 1),
		replaceKey(t, "session_id", `"session_id":"plain id with spaces and ünïcode"`),
	} {
		m, err := ParseMeta([]byte(payload))
		if err != nil {
			t.Errorf("ParseMeta(%s) = %v", payload, err)
			continue
		}
		if m.Payload.SessionID() == "" {
			t.Errorf("ParseMeta(%s): no session id", payload)
		}
	}
}

func TestParseMetaNamesTheKey(t *testing.T) {
	cases := []struct{ payload, key, msg string }{
		{`[]`, "", "want object"},
		{`{}`, "session_id", "missing"},
		{`"x"`, "", ""},
		{replaceKey(t, "provider", ""), "provider", "missing"},
		{replaceKey(t, "model_id", ""), "model_id", "missing"},
		{replaceKey(t, "model_context_window", ""), "model_context_window", "missing"},
		{replaceKey(t, "system_prompt", ""), "system_prompt", "missing"},
		{replaceKey(t, "agent_state", ""), "agent_state", "missing"},
		{replaceKey(t, "workspace", ""), "workspace", "missing"},
		{replaceKey(t, "provider", `"provider":5`), "provider", "want string"},
		{replaceKey(t, "model_context_window", `"model_context_window":true`), "model_context_window", ""},
		{strings.Replace(goodMeta, "}", `,"source":"cron"}`, 1), "source", "subagent|schedule"},
		{replaceKey(t, "session_id", `"session_id":""`), "session_id", "empty"},
		{replaceKey(t, "session_id", `"session_id":"../x"`), "session_id", "starts with a dot"},
		{replaceKey(t, "session_id", `"session_id":"a/b"`), "session_id", `contains '/'`},
		{replaceKey(t, "session_id", `"session_id":"a\\b"`), "session_id", `contains '\\'`},
		{replaceKey(t, "session_id", `"session_id":"a\nb"`), "session_id", `contains '\n'`},
		{replaceKey(t, "session_id", `"session_id":"`+strings.Repeat("x", 201)+`"`), "session_id", "longer than 200 bytes"},
		{strings.Replace(goodMeta, "}", `,"type":"x"}`, 1), "type", "must be absent"},
	}
	for _, c := range cases {
		_, err := ParseMeta([]byte(c.payload))
		var me *MetaError
		if !errors.As(err, &me) {
			t.Errorf("ParseMeta(%.80s) = %v, want a *MetaError", c.payload, err)
			continue
		}
		if me.Key != c.key || !strings.Contains(me.Msg, c.msg) {
			t.Errorf("ParseMeta(%.80s) = key %q msg %q, want key %q msg containing %q", c.payload, me.Key, me.Msg, c.key, c.msg)
		}
	}
}

// The id rule of CheckMeta is the one every Store applies.
func TestCheckMetaIDMatchesValidateID(t *testing.T) {
	for _, id := range []string{"ok", "../x", "a/b", ".hidden", "", "tab\there", strings.Repeat("é", 101)} {
		m, err := ParseMeta([]byte(replaceKey(t, "session_id", `"session_id":`+QuoteID(id))))
		if len(id) > 64 {
			m, err = ParseMeta([]byte(replaceKey(t, "session_id", `"session_id":"`+id+`"`)))
		}
		_ = m
		if (err == nil) != (ValidateID(id) == nil) {
			t.Errorf("id %q: ParseMeta error %v, ValidateID error %v", id, err, ValidateID(id))
		}
	}
}
