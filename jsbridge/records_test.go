package jsbridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/internal/fields"
)

// ---- helpers: the shim's side of records, ported for tests ------------------------

// units is the String length JavaScript gives s.
func units(s string) int { return len(utf16.Encode([]rune(s))) }

func lenStr(s string) string { return strconv.Itoa(units(s)) + ":" + s }

// jRecords returns the J records of JSON messages.
func jRecords(msgs ...string) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString("J" + lenStr(m))
	}
	return b.String()
}

// kv and obj keep JSON objects with their key order, as JavaScript does.
type kv struct {
	k string
	v any
}
type obj []kv

func (o obj) get(k string) (any, bool) {
	for _, f := range o {
		if f.k == k {
			return f.v, true
		}
	}
	return nil, false
}

// json writes o as JSON, keys in order.
func (o obj) json() string {
	var b bytes.Buffer
	writeJSON(&b, o)
	return b.String()
}

func writeJSON(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case obj:
		b.WriteByte('{')
		for i, f := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, f.k)
			b.WriteByte(':')
			writeJSON(b, f.v)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, e)
		}
		b.WriteByte(']')
	default:
		e := json.NewEncoder(b)
		e.SetEscapeHTML(false)
		_ = e.Encode(x)
		b.Truncate(b.Len() - 1) // Encode's newline
	}
}

// parseOrdered parses one JSON value, keeping key order.
func parseOrdered(s string) (any, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	v, err := parseValue(d)
	if err == nil && d.More() {
		err = errors.New("trailing data")
	}
	return v, err
}

func parseValue(d *json.Decoder) (any, error) {
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t {
	case json.Delim('{'):
		o := obj{}
		for d.More() {
			k, err := d.Token()
			if err != nil {
				return nil, err
			}
			v, err := parseValue(d)
			if err != nil {
				return nil, err
			}
			o = append(o, kv{k.(string), v})
		}
		_, err := d.Token()
		return o, err
	case json.Delim('['):
		a := []any{}
		for d.More() {
			v, err := parseValue(d)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := d.Token()
		return a, err
	}
	return t, nil
}

// readBatch is the shim's readRecords: the messages of a consumer batch,
// with their keys in the order the shim gives them.
func readBatch(s string) ([]obj, error) {
	r := recordReader{s: s}
	var out []obj
	ts := ""
	bad := errors.New("malformed batch")
	for r.i < len(s) {
		k := s[r.i]
		r.i++
		switch k {
		case recJSON, recRest:
			j := s[r.i:]
			if k == recJSON {
				var ok bool
				if j, ok = r.str(); !ok {
					return nil, bad
				}
			} else {
				r.i = len(s)
			}
			v, err := parseOrdered(j)
			if err != nil {
				return nil, err
			}
			o, ok := v.(obj)
			if !ok {
				return nil, bad
			}
			out = append(out, o)
			continue
		case recTime:
			var ok bool
			if ts, ok = r.str(); !ok {
				return nil, bad
			}
			continue
		case recUsage:
			end := strings.IndexByte(s[r.i:], ';')
			if end < 0 {
				return nil, bad
			}
			n := strings.Split(s[r.i:r.i+end], ",")
			r.i += end + 1
			if len(n) != 8 {
				return nil, bad
			}
			half := func(n []string) obj {
				return obj{{"cache_read", json.Number(n[0])}, {"cache_write", json.Number(n[1])}, {"output", json.Number(n[2])}, {"total", json.Number(n[3])}}
			}
			m := obj{{"type", "event_msg"}, {"payload", obj{{"type", "token_usage"}, {"session", half(n[:4])}, {"request", half(n[4:])}}}}
			if ts != "" {
				m = append(obj{{"timestamp", ts}}, m...)
			}
			out = append(out, m)
			continue
		case recEvent: // as the shim's Batch.event
			if r.i >= len(s) {
				return nil, bad
			}
			sub := s[r.i]
			r.i++
			var p obj
			switch sub {
			case 'b':
				p = obj{{"type", "request_begin"}}
			case 'e':
				status, ok := shimStop(&r)
				if !ok {
					return nil, bad
				}
				p = obj{{"type", "request_end"}, {"status", status}}
			case 'a':
				if r.i >= len(s) {
					return nil, bad
				}
				d := map[byte]string{'a': "allow", 'd': "deny", 'f': "forbidden"}[s[r.i]]
				r.i++
				id, ok := r.str()
				if d == "" || !ok {
					return nil, bad
				}
				p = obj{{"type", "approval_decision"}, {"decision", d}, {"tool_call_id", id}}
			default:
				return nil, bad
			}
			m := obj{{"type", "event_msg"}, {"payload", p}}
			if ts != "" {
				m = append(obj{{"timestamp", ts}}, m...)
			}
			out = append(out, m)
			continue
		}
		if r.i+2 > len(s) {
			return nil, bad
		}
		ev := map[byte]string{'s': "start", 'd': "delta", 'x': "stop", recComplete: "-"}[s[r.i]]
		role := map[byte]string{'a': "assistant", 'u': "user"}[s[r.i+1]]
		r.i += 2
		n := map[byte]int{recText: 2, recThinking: 2, recToolCall: 4, recToolOutput: 3}[k]
		if n == 0 || ev == "" || role == "" {
			return nil, bad
		}
		strs := make([]string, n)
		for i := range strs {
			var ok bool
			if i == n-1 {
				strs[i], ok = shimStop(&r)
			} else {
				strs[i], ok = r.str()
			}
			if !ok {
				return nil, bad
			}
		}
		p := obj{}
		switch k {
		case recText:
			p = obj{{"type", "partial_text"}, {"role", role}, {"event_type", ev}, {"text", strs[0]}}
		case recThinking:
			p = obj{{"type", "partial_thinking"}, {"role", role}, {"event_type", ev}, {"thinking", strs[0]}}
		case recToolCall:
			p = obj{{"type", "partial_tool_call"}, {"role", role}, {"event_type", ev}, {"name", strs[2]}, {"arguments", strs[0]}, {"tool_call_id", strs[1]}}
		case recToolOutput:
			p = obj{{"type", "partial_tool_call_output"}, {"role", role}, {"event_type", ev}, {"output", strs[0]}, {"tool_call_id", strs[1]}}
		}
		if ev == "-" { // a complete message: no event_type, nor partial_
			p[0].v = strings.TrimPrefix(p[0].v.(string), "partial_")
			p = slices.Delete(p, 2, 3)
		}
		if stop := strs[n-1]; stop != "" {
			p = append(p, kv{"stop_reason", stop})
		}
		m := obj{{"type", "model_msg"}, {"payload", p}}
		if ts != "" {
			m = append(obj{{"timestamp", ts}}, m...)
		}
		out = append(out, m)
	}
	return out, nil
}

// shimStop is the shim's Batch.stop: a stop_reason's code or a string.
func shimStop(r *recordReader) (string, bool) {
	if r.i < len(r.s) {
		if s, ok := map[byte]string{'-': "", 'c': "completed", 'f': "failed", 'a': "aborted", 't': "timeout", 'm': "malformed", 'h': "auth"}[r.s[r.i]]; ok {
			r.i++
			return s, true
		}
	}
	return r.str()
}

// shimStopCode is the shim's stopCode: the code of a stop_reason, or the
// string.
func shimStopCode(s string) string {
	if c, ok := map[string]string{"": "-", "completed": "c", "failed": "f", "aborted": "a", "timeout": "t", "malformed": "m", "auth": "h"}[s]; ok {
		return c
	}
	return lenStr(s)
}

// shimRecord is the shim's fragmentRecord: the record of a message object,
// or "" when it goes as JSON.
func shimRecord(v obj) string {
	ts, keys := "", 0
	for _, f := range v {
		switch f.k {
		case "timestamp":
			t, ok := f.v.(string)
			if !ok {
				return ""
			}
			ts = "t" + lenStr(t)
		case "type", "payload":
			keys++
		default:
			return ""
		}
	}
	if keys != 2 {
		return ""
	}
	rec := shimFragment(v)
	if rec == "" {
		return ""
	}
	return ts + rec
}

// shimFragment is the rest of fragmentRecord, for an envelope of type and
// payload (and perhaps a timestamp).
func shimFragment(v obj) string {
	pv, _ := v.get("payload")
	p, ok := pv.(obj)
	if !ok {
		return ""
	}
	if t, _ := v.get("type"); t == "event_msg" {
		return shimUsage(p)
	} else if t != "model_msg" {
		return ""
	}
	var typ, role, body, bodyKey, id, name string
	var hasName bool
	ev, stop := "c", "" // no event_type: a complete message
	for _, f := range p {
		x, ok := f.v.(string)
		if !ok {
			return ""
		}
		switch f.k {
		case "type":
			typ = x
		case "role":
			role = map[string]string{"assistant": "a", "user": "u"}[x]
		case "event_type":
			ev = map[string]string{"start": "s", "delta": "d", "stop": "x"}[x]
		case "text", "thinking", "arguments", "output":
			if bodyKey != "" {
				return ""
			}
			bodyKey, body = f.k, x
		case "tool_call_id":
			id = x
		case "name":
			name, hasName = x, true
		case "stop_reason":
			if x == "" {
				return ""
			}
			stop = x
		default:
			return ""
		}
	}
	if role == "" || ev == "" || bodyKey == "" {
		return ""
	}
	head, tail := ev+role, shimStopCode(stop)
	// A partial type needs an event_type, a complete one must not have one.
	if ev == "c" {
		typ = "partial_" + typ
	} else if !strings.HasPrefix(typ, "partial_") {
		return ""
	}
	switch {
	case typ == "partial_text" && bodyKey == "text" && !hasKey(p, "tool_call_id") && !hasName:
		return "T" + head + lenStr(body) + tail
	case typ == "partial_thinking" && bodyKey == "thinking" && !hasKey(p, "tool_call_id") && !hasName:
		return "K" + head + lenStr(body) + tail
	case typ == "partial_tool_call" && bodyKey == "arguments" && id != "" && hasName && (ev != "c" || name != ""):
		return "C" + head + lenStr(body) + lenStr(id) + lenStr(name) + tail
	case typ == "partial_tool_call_output" && bodyKey == "output" && id != "" && !hasName:
		return "O" + head + lenStr(body) + lenStr(id) + tail
	}
	return ""
}

// shimUsage is the shim's usageRecord.
func shimUsage(p obj) string {
	if len(p) != 3 || !hasKey(p, "session") || !hasKey(p, "request") {
		return ""
	}
	if t, _ := p.get("type"); t != "token_usage" {
		return ""
	}
	var out []string
	for _, k := range []string{"session", "request"} {
		v, _ := p.get(k)
		c, ok := v.(obj)
		if !ok || len(c) != 4 {
			return ""
		}
		for _, k := range []string{"cache_read", "cache_write", "output", "total"} {
			x, _ := c.get(k)
			n, ok := x.(json.Number)
			if !ok {
				return ""
			}
			f, err := strconv.ParseFloat(string(n), 64) // JavaScript's number
			if err != nil || f != math.Trunc(f) || f < 0 || f > 1<<53-1 {
				return ""
			}
			out = append(out, strconv.FormatFloat(f, 'f', -1, 64))
		}
	}
	return "U" + strings.Join(out, ",") + ";"
}

// decodeOne decodes a batch that holds one message.
func decodeOne(t *testing.T, batch string) (omni.Message, error) {
	t.Helper()
	var got []omni.Message
	err := eachRecord(batch, func(m omni.Message) { got = append(got, m) })
	if err == nil && len(got) != 1 {
		t.Fatalf("batch %q: %d messages", batch, len(got))
	}
	if err != nil {
		return omni.Message{}, err
	}
	return got[0], nil
}

// ---- tests ------------------------------------------------------------------------

func TestEachRecord(t *testing.T) {
	good := `{"type":"model_msg","payload":{"type":"text","role":"user","text":"a:J3]"}}`
	tests := []struct {
		name string
		data string
		ok   int // messages emitted
		err  string
	}{
		{"empty", ``, 0, ""},
		{"json", jRecords(good, good), 2, ""},
		{"fragments", "Tda3:abc0:" + "Ksu0:9:completed" + "Cda2:{}2:c14:read0:" + "Oxu3:out2:c10:", 4, ""},
		{"non-ASCII", "Tda5:é日😀x0:", 1, ""},
		{"stop codes", "Tda1:a-" + "Txa0:c" + "Tcu0:f" + "Kxu0:a" + "Kcu0:t" + "Cxa0:2:c14:readm" + "Cca2:{}2:c14:readh", 7, ""},
		{"an unknown stop code", "Tda1:az", 0, "malformed"},
		{"a stop code past the end", "Tda1:a", 0, "malformed"},
		{"bad third", jRecords(good, good, `{"type":"model_msg","payload":5}`, good), 2, "[2]: omni: payload"},
		{"unknown tag", "X", 0, "[0]: omni: malformed batch record"},
		{"bad event", "Tqa1:a0:", 0, "malformed"},
		{"bad role", "Tdz1:a0:", 0, "malformed"},
		{"length past the end", "Tda9:abc0:", 0, "malformed"},
		{"no colon", "Tda3abc", 0, "malformed"},
		{"huge length", "J99999999999999999999999:{}", 0, "malformed"},
		{"truncated", jRecords(good) + "Tda", 1, "[1]: omni: malformed"},
		{"missing stop", "Tda1:a", 0, "malformed"},
		{"timestamps", "t3:abc" + jRecords(good) + "Tda1:a0:" + "t0:" + "Tda1:b0:", 3, ""},
		{"a timestamp and nothing else", "t3:abc", 0, ""},
		{"a bad timestamp record", "t9:abc", 0, "[0]: omni: malformed"},
		{"a bad record after a timestamp", "t1:aTda1:a0:X", 1, "[1]: omni: malformed"},
		{"complete messages", "t3:abc" + "Tca2:hi9:completed" + "Kca0:0:" + "Cca2:{}2:c14:read0:" + "Ocu3:out2:c10:", 4, ""},
		{"a bad event of a complete message", "TCa1:a0:", 0, "malformed"},
		{"a complete message cut short", "Cca2:{}2:c1", 0, "malformed"},
		{"token usage", "U0,0,10,100,1,2,3,9007199254740991;" + "t1:xU1,2,3,4,5,6,7,8;", 2, ""},
		{"token usage of seven counts", "U1,2,3,4,5,6,7;", 0, "malformed"},
		{"token usage of nine counts", "U1,2,3,4,5,6,7,8,9;", 0, "malformed"},
		{"token usage without its end", "U1,2,3,4,5,6,7,8", 0, "malformed"},
		{"a negative count", "U-1,2,3,4,5,6,7,8;", 0, "malformed"},
		{"an empty count", "U,2,3,4,5,6,7,8;", 0, "malformed"},
		{"a count past 2^53-1", "U9007199254740992,2,3,4,5,6,7,8;", 0, "malformed"},
		{"a count of many digits", "U99999999999999999999999,2,3,4,5,6,7,8;", 0, "malformed"},
		{"a fraction", "U1.5,2,3,4,5,6,7,8;", 0, "malformed"},
		{"a fragment after token usage", "U1,2,3,4,5,6,7,8;Tda1:a0:", 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []omni.Message
			err := eachRecord(tt.data, func(m omni.Message) { got = append(got, m) })
			if len(got) != tt.ok || (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("eachRecord = %d messages, err %v; want %d, error with %q", len(got), err, tt.ok, tt.err)
			}
		})
	}
	ms := map[string]omni.Message{}
	_ = eachRecord("Tda5:é日😀x0:", func(m omni.Message) { ms["u"] = m })
	if ms["u"].Payload.Text != "é日😀x" {
		t.Errorf("non-ASCII text = %q", ms["u"].Payload.Text)
	}
	var complete []string
	_ = eachRecord("Tca2:hi9:completed"+"Kcu0:0:"+"Cca2:{}2:c14:read0:"+"t1:x"+"Ocu3:out2:c10:", func(m omni.Message) {
		complete = append(complete, string(m.AppendJSON(nil)))
	})
	if want := []string{
		`{"type":"model_msg","payload":{"type":"text","role":"assistant","text":"hi","stop_reason":"completed"}}`,
		`{"type":"model_msg","payload":{"type":"thinking","role":"user","thinking":""}}`,
		`{"type":"model_msg","payload":{"type":"tool_call","role":"assistant","name":"read","arguments":"{}","tool_call_id":"c1"}}`,
		`{"timestamp":"x","type":"model_msg","payload":{"type":"tool_call_output","role":"user","output":"out","tool_call_id":"c1"}}`,
	}; !slices.Equal(complete, want) {
		t.Errorf("complete messages:\n%s\nwant\n%s", strings.Join(complete, "\n"), strings.Join(want, "\n"))
	}
	var stamps []string
	_ = eachRecord("t3:abc"+"Tda1:a0:"+jRecords(`{"timestamp":"j","type":"model_msg","payload":{"type":"text","role":"user","text":"x"}}`)+"Tda1:b0:"+"t0:"+"Tda1:c0:",
		func(m omni.Message) { stamps = append(stamps, m.Timestamp) })
	if want := []string{"abc", "j", "abc", ""}; !slices.Equal(stamps, want) {
		t.Errorf("timestamps = %q, want %q", stamps, want)
	}
}

// A batch's messages without a timestamp take the batch's stamp, one
// reading of the clock a batch, read only when a record needs it; a
// message's own timestamp is kept.
func TestEachRecordStampsABatch(t *testing.T) {
	at := time.Date(2026, 7, 18, 3, 10, 22, 531e6, time.UTC)
	reads := 0
	st := &batchStamp{now: func() time.Time { reads++; return at.Add(time.Duration(reads) * time.Millisecond) }}
	var stamps []string
	emit := &emitter{emit: func(m omni.Message) { stamps = append(stamps, m.Timestamp) }}
	batch := "Tsa0:0:" + "t3:abc" + "Tda1:a0:" + "t0:" + "Tda1:b0:" + "U1,2,3,4,5,6,7,8;" +
		jRecords(`{"type":"event_msg","payload":{"type":"request_end","status":"completed"}}`, `{"timestamp":"j","type":"model_msg","payload":{"type":"text","role":"user","text":"x"}}`)
	if err := eachRecordAt(batch, st, emit); err != nil {
		t.Fatal(err)
	}
	one := "2026-07-18T03:10:22.532Z"
	if want := []string{one, "abc", one, one, one, "j"}; !slices.Equal(stamps, want) || reads != 1 {
		t.Errorf("timestamps = %q after %d clock reads, want %q after 1", stamps, reads, want)
	}
	stamps = nil
	st.read = false // the next batch: a new instant
	if err := eachRecordAt("t3:abc"+"Tda1:a0:", st, emit); err != nil || reads != 1 {
		t.Errorf("a batch of stamped messages read the clock (%d reads, %v)", reads, err)
	}
	if err := eachRecordAt("Tda1:a0:", st, emit); err != nil || reads != 2 || stamps[1] != "2026-07-18T03:10:22.533Z" {
		t.Errorf("the next batch: %q after %d reads (%v), want a new stamp after 2", stamps, reads, err)
	}
}

// strings the random messages are made of: JSON escapes, multi-byte and
// astral characters, separators of the record format.
var pieces = []string{"", "a", "abcdefg ", `"`, `\`, "\n\t\x00\x1f", "é", "日本", "😀", "\u2028", "\ufffd", "12:", "J3:", "Tda", "completed", "<&>"}

func randStr(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(4) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// randMessage returns a message object as a model or tool might yield it:
// mostly standard fragments and complete messages, sometimes with a key, a
// value or an order the records cannot carry.
func randMessage(r *rand.Rand) obj {
	if r.IntN(8) == 0 {
		return randUsage(r)
	}
	types := []string{"partial_text", "partial_thinking", "partial_tool_call", "partial_tool_call_output", "text", "thinking", "tool_call", "tool_call_output", "partial_image", "image_url"}
	typ := types[r.IntN(len(types))]
	p := obj{{"type", typ}}
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	p = append(p, kv{"role", pick("assistant", "assistant", "user", "system", "")})
	partial := strings.HasPrefix(typ, "partial_")
	if partial == (r.IntN(12) > 0) { // mostly on fragments only
		p = append(p, kv{"event_type", pick("delta", "delta", "start", "stop", "end")})
	}
	call := strings.HasSuffix(typ, "tool_call")
	body := map[string]string{"text": "text", "thinking": "thinking", "tool_call": "arguments", "tool_call_output": "output"}[strings.TrimPrefix(typ, "partial_")]
	if body == "" || r.IntN(20) == 0 {
		body = pick("text", "thinking", "arguments", "output")
	}
	if r.IntN(30) > 0 {
		p = append(p, kv{body, randStr(r)})
	}
	if call || strings.HasSuffix(typ, "output") || r.IntN(20) == 0 {
		if r.IntN(30) > 0 {
			p = append(p, kv{"tool_call_id", pick("c1", "call_7", "", "日")})
		}
	}
	if call || r.IntN(20) == 0 {
		if r.IntN(30) > 0 {
			p = append(p, kv{"name", pick("read", "", "ls", "😀")})
		}
	}
	switch r.IntN(14) {
	case 0:
		p = append(p, kv{"stop_reason", pick("completed", "aborted", "", "bogus")})
	case 1:
		p = append(p, kv{"extra", pick("x", "")})
	case 2:
		p = append(p, kv{"images", []any{"data:x"}})
	case 3:
		p[len(p)-1].v = json.Number("5")
	case 4:
		p = append(p, kv{"sender", pick("user", "harness", "bogus")})
	case 5:
		p = append(p, kv{"fidelity", obj{{"k", "v"}}})
	case 6:
		p = append(p, kv{"images", []any{}})
	case 7:
		p = append(p, kv{"stop_reason", "completed"})
	}
	r.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
	m := obj{{"type", pick("model_msg", "model_msg", "model_msg", "event_msg")}, {"payload", p}}
	switch r.IntN(10) {
	case 0, 1, 2:
		m = append(m, kv{"timestamp", pick("2026-01-02T03:04:05.000Z", "2026-01-02T05:04:05+02:00", "", "yesterday", "2026-02-30T00:00:00Z", "日")})
	case 3:
		m = append(m, kv{"timestamp", json.Number("5")})
	case 4:
		m = append(m, kv{"origin", []any{"sub"}})
	}
	r.Shuffle(len(m), func(i, j int) { m[i], m[j] = m[j], m[i] })
	return m
}

// randUsage returns a token_usage event, mostly of the common shape, with
// numbers as JSON.stringify writes them.
func randUsage(r *rand.Rand) obj {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	half := func() any {
		c := obj{}
		for _, k := range []string{"cache_read", "cache_write", "output", "total"} {
			if r.IntN(40) > 0 {
				c = append(c, kv{k, json.Number(pick("0", "7", "12003", "131072", "9007199254740991"))})
			}
		}
		switch r.IntN(30) {
		case 0:
			c[r.IntN(len(c))].v = json.Number(pick("-1", "1.5", "9007199254740992", "1e+21"))
		case 1:
			c = append(c, kv{"reasoning", json.Number("1")})
		case 2:
			c[r.IntN(len(c))].v = "5"
		case 3:
			return json.Number("5")
		}
		r.Shuffle(len(c), func(i, j int) { c[i], c[j] = c[j], c[i] })
		return c
	}
	p := obj{{"type", pick("token_usage", "token_usage", "token_usage", "request_begin")}}
	if r.IntN(30) > 0 {
		p = append(p, kv{"session", half()})
	}
	if r.IntN(30) > 0 {
		p = append(p, kv{"request", half()})
	}
	if r.IntN(30) == 0 {
		p = append(p, kv{"extra", "x"})
	}
	r.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
	m := obj{{"type", pick("event_msg", "event_msg", "event_msg", "model_msg")}, {"payload", p}}
	switch r.IntN(8) {
	case 0, 1, 2:
		m = append(m, kv{"timestamp", pick("2026-01-02T03:04:05.000Z", "", "yesterday")})
	case 3:
		m = append(m, kv{"origin", []any{"sub"}})
	}
	r.Shuffle(len(m), func(i, j int) { m[i], m[j] = m[j], m[i] })
	return m
}

// randomCases returns n, or a tenth of it under the race detector. The
// random-case tests of records run in one goroutine, where the detector
// finds nothing, at 5-20 times the time; the GOOS=js run of this package
// (scripts/test-wasm.sh), without it, runs all n.
func randomCases(n int) int {
	if raceDetector {
		return n / 10
	}
	return n
}

// raceDetector: this test binary was built with -race (its build
// settings say so; a binary without them counts as built without).
var raceDetector = func() bool {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" {
				return s.Value == "true"
			}
		}
	}
	return false
}()

// TestRecordsMatchJSON: a message crosses as a fragment record exactly as
// it crosses as JSON, in both directions — the same decoded message, the
// same validation, and the same object (keys and their order) for the
// consumer.
func TestRecordsMatchJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	fragments, complete, usages := 0, 0, 0
	n := randomCases(30000)
	for i := range n {
		v := randMessage(r)
		viaJSON, errJ := decodeOne(t, jRecords(v.json()))
		rec := shimRecord(v)
		if rec == "" {
			continue
		}
		switch f := shimFragment(v); {
		case f[0] == recUsage:
			usages++
		case f[1] == recComplete:
			complete++
		default:
			fragments++
		}
		viaRec, errR := decodeOne(t, rec)
		if errJ != nil || errR != nil {
			t.Fatalf("#%d %s: decode errors %v / %v", i, v.json(), errJ, errR)
		}
		if a, b := string(viaJSON.AppendJSON(nil)), string(viaRec.AppendJSON(nil)); a != b {
			t.Fatalf("#%d %s (record %q):\nJSON   %s\nrecord %s", i, v.json(), rec, a, b)
		}
		if a, b := errText(omni.Validate(viaJSON)), errText(omni.Validate(viaRec)); a != b {
			t.Fatalf("#%d %s: validation %q, via the record %q", i, v.json(), a, b)
		}
		// Back to JavaScript, after the engine stamped it.
		for _, ts := range []string{"2026-01-02T03:04:05.000Z", ""} {
			viaJSON.Timestamp, viaRec.Timestamp = ts, ts
			want, _ := parseOrdered(string(viaJSON.AppendJSON(nil)))
			var w recordWriter
			out, last := w.append(nil, &viaRec)
			got, err := readBatch(string(out))
			if err != nil || last || len(got) != 1 {
				t.Fatalf("#%d: batch %q: %v, last %v", i, out, err, last)
			}
			if !reflect.DeepEqual(obj(got[0]), want) {
				t.Fatalf("#%d: batch %q gives\n%s\nwant\n%s", i, out, got[0].json(), want.(obj).json())
			}
		}
	}
	if fragments < 1000*n/30000 || complete < 1200*n/30000 || usages < 800*n/30000 {
		t.Errorf("of the random messages only %d were fragment records, %d complete message records and %d token_usage records", fragments, complete, usages)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestRecordWriter: batches of several messages, timestamps written once,
// and the messages a fragment record cannot carry exactly.
func TestRecordWriter(t *testing.T) {
	ts1, ts2 := "2026-01-02T03:04:05.000Z", "2026-01-02T03:04:05.001Z"
	frag := func(ts, body string) omni.Message {
		m := omni.Partial(omni.PartialText, omni.EventDelta, body, "", "", "")
		m.Timestamp = ts
		return m
	}
	decoded, _ := omni.Decode([]byte(`{"type":"model_msg","payload":{"type":"partial_text","role":"assistant","event_type":"delta","text":"x"}}`))
	withOrigin := frag(ts1, "o").WithOrigin("sub")
	images := omni.Partial(omni.PartialToolCallOutput, omni.EventDelta, "x", "c1", "", "")
	images.Payload.Edit().Images = []string{"data:,"}
	badUTF8 := frag(ts1, "a\xffb")
	complete := func(typ, body string) omni.Message {
		return omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: typ, Role: omni.RoleAssistant, Thinking: body}}
	}
	withEvent := omni.AssistantText("x", "")
	withEvent.Payload.EventType = omni.EventDelta
	noEvent := frag("", "x")
	noEvent.Payload.EventType = ""
	otherBody := omni.AssistantText("x", "")
	otherBody.Payload.Thinking = "y"
	sender := omni.UserText("x")
	sender.Payload.Edit().Sender = omni.SenderHarness
	rawBad := omni.Event(omni.Payload{Type: "x", Rest: &omni.Rest{Extra: []omni.RawField{{Key: "k", Value: []byte("\"\xe2\x82\"")}}}})
	tests := []struct {
		name string
		msgs []omni.Message
		want string // the record tags
		last bool
	}{
		{"same timestamp", []omni.Message{frag(ts1, "a"), frag(ts1, "b"), frag(ts2, "c")}, "tTTtT", false},
		{"decoded payload", []omni.Message{decoded}, "J", false},
		{"origin", []omni.Message{withOrigin}, "J", false},
		{"images", []omni.Message{images}, "J", false},
		{"invalid UTF-8 in a string", []omni.Message{badUTF8}, "J", false},
		{"invalid UTF-8 in raw JSON", []omni.Message{frag(ts1, "a"), rawBad}, "tTR", true},
		{"events", []omni.Message{omni.RequestBeginMsg(), omni.ToolOutput("c", "o", "completed")}, "EO", false},
		{"complete messages", []omni.Message{omni.AssistantText("é😀", "completed"), complete(omni.Thinking, "hm"), omni.ToolCallMsg("c1", "read", "{}"), omni.ToolOutput("c1", "", "")}, "TKCO", false},
		{"a complete message with an event", []omni.Message{withEvent}, "J", false},
		{"a fragment without event", []omni.Message{noEvent}, "J", false},
		{"a complete message with a body not its own", []omni.Message{otherBody}, "J", false},
		{"user text with sender", []omni.Message{sender}, "J", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w recordWriter
			var b []byte
			last := false
			for i := range tt.msgs {
				b, last = w.append(b, &tt.msgs[i])
			}
			got, err := readBatch(string(b))
			if err != nil || len(got) != len(tt.msgs) || last != tt.last {
				t.Fatalf("batch %q: %v, %d messages, last %v", b, err, len(got), last)
			}
			if tags := recordTags(string(b)); tags != tt.want {
				t.Errorf("tags %q, want %q (batch %q)", tags, tt.want, b)
			}
			for i, m := range tt.msgs {
				if tt.last && i == len(tt.msgs)-1 {
					continue // as JavaScript decodes invalid UTF-8: U+FFFD
				}
				want, _ := parseOrdered(string(m.AppendJSON(nil)))
				if !reflect.DeepEqual(obj(got[i]), want) {
					t.Errorf("message %d = %s, want %s", i, got[i].json(), want.(obj).json())
				}
			}
		})
	}
}

// recordTags lists the tags of a batch's records.
func recordTags(s string) string {
	r := recordReader{s: s}
	var tags []byte
	for r.i < len(s) {
		k := s[r.i]
		tags = append(tags, k)
		r.i++
		skipRecord(&r, k)
	}
	return string(tags)
}

// skipRecord moves r past the record whose tag k it has just read.
func skipRecord(r *recordReader, k byte) {
	switch k {
	case recRest:
		r.i = len(r.s)
	case recJSON, recTime:
		r.str()
	case recUsage:
		if j := strings.IndexByte(r.s[r.i:], ';'); j >= 0 {
			r.i += j + 1
		} else {
			r.i = len(r.s)
		}
	case recEvent:
		r.i++
		switch r.s[r.i-1] {
		case 'e':
			r.stop()
		case 'a':
			r.i++
			r.str()
		}
	default:
		r.i += 2
		for range map[byte]int{recText: 2, recThinking: 2, recToolCall: 4, recToolOutput: 3}[k] - 1 {
			r.str()
		}
		r.stop()
	}
}

// TestStopCodes: a stop_reason travels as one byte both ways when it is
// none or a standard status, and as a string otherwise (a string form of a
// status is read too); the reader gives the package's constants.
func TestStopCodes(t *testing.T) {
	for _, stop := range append(append([]string{}, stopNames[:]...), "bogus", "Completed", "7", "-") {
		m := omni.AssistantText("hi", stop)
		var w recordWriter
		b, _ := w.append(nil, &m)
		code := stopCode(stop)
		if want := "Tca2:hi" + lenStrOr(code, stop); string(b) != want {
			t.Errorf("stop %q: batch %q, want %q", stop, b, want)
		}
		got, err := decodeOne(t, string(b))
		if err != nil || got.Payload.StopReason != stop {
			t.Fatalf("stop %q: read back %q, %v", stop, got.Payload.StopReason, err)
		}
		if stop != "" && code != 0 && unsafe.StringData(got.Payload.StopReason) != unsafe.StringData(stopNames[strings.IndexByte(stopCodes, code)]) {
			t.Errorf("stop %q: not the package's constant", stop)
		}
		if (code != 0) != slices.Contains(stopNames[:], stop) {
			t.Errorf("stop %q: code %q", stop, code)
		}
		if stop != "" {
			long, err := decodeOne(t, "Tca2:hi"+lenStr(stop))
			if err != nil || long.Payload.StopReason != stop {
				t.Errorf("stop %q as a string: %q, %v", stop, long.Payload.StopReason, err)
			}
		}
	}
}

func lenStrOr(code byte, s string) string {
	if code != 0 {
		return string(code)
	}
	return lenStr(s)
}

// TestUsageRecord: a token_usage built in Go, or read from a U record,
// goes to JavaScript as a U record; one decoded from JSON as JSON.
func TestUsageRecord(t *testing.T) {
	built := omni.TokenUsageMsg(omni.TokenCounts{CacheRead: 1, CacheWrite: 2, Output: 3, Total: 1<<53 - 1}, omni.TokenCounts{Total: 5})
	built.Timestamp = "2026-01-02T03:04:05.000Z"
	read, err := decodeOne(t, "t24:2026-01-02T03:04:05.000ZU1,2,3,9007199254740991,0,0,0,5;")
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := decodeOne(t, jRecords(string(built.AppendJSON(nil))))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		m    omni.Message
		want string
	}{
		{"built", built, "t24:2026-01-02T03:04:05.000ZU1,2,3,9007199254740991,0,0,0,5;"},
		{"read from a record", read, "t24:2026-01-02T03:04:05.000ZU1,2,3,9007199254740991,0,0,0,5;"},
		{"decoded from JSON", decoded, "J"}, // and then its JSON
	} {
		var w recordWriter
		if got, _ := w.append(nil, &c.m); string(got) != c.want && (c.want != "J" || got[0] != recJSON) {
			t.Errorf("%s: batch %q, want %q", c.name, got, c.want)
		}
	}
}

// TestRestZero: a field added to omni.Payload must be named in restZero
// (or carried by the records), else a fragment or token_usage holding it
// would lose it on the way to JavaScript.
func TestRestZero(t *testing.T) {
	for _, c := range []struct {
		name    string
		msg     func() omni.Message
		carried []string
		record  func(*omni.Message) bool
	}{
		{"fragment", func() omni.Message { return omni.Partial(omni.PartialText, omni.EventDelta, "x", "", "", "") },
			[]string{"Type", "Role", "EventType", "StopReason", "Text", "Thinking", "Arguments", "Output", "ToolCallID", "Name"},
			func(m *omni.Message) bool { k, _, _ := fragmentOf(m); return k != 0 }},
		{"token_usage", func() omni.Message { return omni.TokenUsageMsg(omni.TokenCounts{Total: 1}, omni.TokenCounts{Total: 2}) },
			[]string{"Type", "Session", "Request"}, usageOf},
	} {
		m := c.msg()
		if !c.record(&m) {
			t.Fatalf("%s: the plain message has no record", c.name)
		}
		// Every field of the payload and of its Rest, set alone.
		for _, rest := range []bool{false, true} {
			typ := reflect.TypeOf(omni.Payload{})
			if rest {
				typ = reflect.TypeOf(omni.Rest{})
			}
			for i := range typ.NumField() {
				f := typ.Field(i)
				if !f.IsExported() || f.Name == "Rest" || slices.Contains(c.carried, f.Name) {
					continue
				}
				m := c.msg()
				v := reflect.ValueOf(&m.Payload).Elem()
				if rest {
					v = reflect.ValueOf(m.Payload.Edit()).Elem()
				}
				v = v.Field(i)
				if !fields.SetNonZero(v) {
					t.Fatalf("field %s of kind %s: extend this test", f.Name, v.Kind())
				}
				if c.record(&m) {
					t.Errorf("a %s with %s set is written as a record", c.name, f.Name)
				}
			}
		}
		// A Rest with every field zero is no Rest.
		m = c.msg()
		m.Payload.Edit()
		if !c.record(&m) {
			t.Errorf("a %s with a zero Rest has no record", c.name)
		}
	}
	// Counts a JavaScript number does not hold exactly go as JSON.
	for _, n := range []int64{-1, 1 << 53} {
		m := omni.TokenUsageMsg(omni.TokenCounts{Output: n}, omni.TokenCounts{})
		if usageOf(&m) {
			t.Errorf("a count of %d is written as a record", n)
		}
	}
}

// FuzzEachRecord: decoding a batch never panics; every message it emits
// reaches JavaScript as the object its JSON gives, through either record
// form; and where the shim would write a record for that JSON, the record
// decodes to a message that encodes and validates as the JSON does.
func FuzzEachRecord(f *testing.F) {
	for _, s := range []string{"", "J2:{}", "Tda3:abc0:", "Tsa0:cTda1:acTda2:bccTda1:écKda1:xcTda1:y-Tda1:zcTxa0:c", "t1:xTda1:acTdu1:bct1:yTda1:ccTda1:dcCda1:{2:c14:readcTda1:ec", "Cds0:2:c14:read0:", "Oxu1:😀0:0:", "Tda9", "J-1:", "t3:abc", "t3:abcTda1:a0:t0:Tda1:b0:", "Tda2:😀0:", "R{}",
		"Tca2:hi9:completed", "Kca0:0:", "Cca2:{}2:c14:read0:", "Cca0:0:0:0:", "Ocu3:out2:c10:", "t1:xOca0:0:4:bogus", "U0,0,10,100,0,0,10,100;", "t1:xU1,2,3,4,5,6,7,8;Tda1:a0:", "U1,2;", "U-1,2,3,4,5,6,7,8;",
		"Tda1:a-", "Tca2:hic", "Oxu0:2:c1f", "Kca0:a", "Cca2:{}2:c14:readt", "Txa0:m", "Tca0:h", "Tda1:az", "Tda1:a",
		"Osu0:2:c1cOdu1:o2:c1cOdu16:out-fragment-16\n2:c1cOdu1:p2:c2cOxu0:2:c1c", "Cda1:{2:c14:readcCda12:\"path\":\"a\"}2:c14:readcCda1:}2:c14:read-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		var msgs []omni.Message
		defer func() { sameAsCold(t, msgs, false); sameAsCold(t, msgs, true); backAgain(t, msgs) }()
		var got []string
		if eachRecord(data, func(m omni.Message) { got = append(got, string(m.AppendJSON(nil))+errText(m.Validate())) }) == nil {
			if want := oneByOne(t, data); !slices.Equal(got, want) {
				t.Fatalf("batch %q\ngives   %q\nalone   %q", data, got, want)
			}
		}
		_ = eachRecord(data, func(m omni.Message) {
			msgs = append(msgs, m)
			j := m.AppendJSON(nil)
			for _, jsonOnly := range []bool{false, true} {
				w := recordWriter{jsonOnly: jsonOnly}
				b, last := w.append(nil, &m)
				got, err := readBatch(string(b))
				if err != nil || len(got) != 1 {
					t.Fatalf("batch %q of %s: %v", b, j, err)
				}
				if want, _ := parseOrdered(string(j)); !last && !reflect.DeepEqual(got[0], want) {
					t.Fatalf("batch %q gives %s, want %s", b, got[0].json(), j)
				}
			}
			v, err := parseOrdered(string(j))
			o, ok := v.(obj)
			if err != nil || !ok || !utf8.Valid(j) {
				return
			}
			if rec := shimRecord(o); rec != "" {
				var viaRec, viaJSON []string
				each := func(batch string, out *[]string) {
					if err := eachRecord(batch, func(m omni.Message) { *out = append(*out, string(m.AppendJSON(nil))+errText(m.Validate())) }); err != nil {
						t.Fatalf("batch %q: %v", batch, err)
					}
				}
				each(rec, &viaRec)
				each(jRecords(o.json()), &viaJSON)
				if !slices.Equal(viaRec, viaJSON) {
					t.Fatalf("%s: via the record %q\n%q\nvia JSON\n%q", j, rec, viaRec, viaJSON)
				}
			}
		})
	})
}

// sameAsCold checks that msgs written as one consumer batch, with the hot
// path for a message of the last record's shape (recordWriter.hot), give
// the bytes record's own checks give, and read back as the messages.
// hot starts with room for 4 KB, or none when small (append grows it:
// some records then find no room and take record's path).
func sameAsCold(t *testing.T, msgs []omni.Message, small bool) int {
	t.Helper()
	var cold []byte
	hot := make([]byte, 0, 4096)
	if small {
		hot = nil
	}
	hw, cw := recordWriter{}, recordWriter{noHot: true}
	hits, n := 0, 0
	for i := range msgs {
		if hw.hotHead[0] != 0 {
			if _, ok := hw.hot(hot, &msgs[i]); ok { // a look ahead: hot changes neither hw nor hot[:len(hot)]
				hits++
			}
		}
		var l1, l2 bool
		hot, l1 = hw.append(hot, &msgs[i])
		cold, l2 = cw.append(cold, &msgs[i])
		n++
		if l1 != l2 {
			t.Fatalf("message %d: last %v, without the hot path %v", i, l1, l2)
		}
		if l1 {
			break
		}
	}
	if string(hot) != string(cold) {
		t.Fatalf("batch %q, without the hot path %q", hot, cold)
	}
	got, err := readBatch(string(hot))
	if err != nil || len(got) != n {
		t.Fatalf("batch %q: %v, %d messages of %d", hot, err, len(got), n)
	}
	for i := range n {
		want, _ := parseOrdered(string(msgs[i].AppendJSON(nil)))
		if j := msgs[i].AppendJSON(nil); utf8.Valid(j) && !reflect.DeepEqual(got[i], want) {
			t.Fatalf("message %d of batch %q gives %s, want %s", i, hot, got[i].json(), j)
		}
	}
	return hits
}

// backAgain checks that msgs, written as one batch as the bridge writes
// them to JavaScript, decode with eachRecord, the producer side's reader,
// to the same messages: the records are one format both ways, so each
// side's lengths and codes must be the other's. The same message is the
// same JSON and validation; but bytes that are not UTF-8, which the shim
// never sends, reach JavaScript as the U+FFFD their JSON escapes them to
// and come back so, the same value (of JSON) in other bytes, which an
// error quotes otherwise (as an escape, cut at another length). A batch
// that ends with an R record, which producers never send, is left out.
func backAgain(t *testing.T, msgs []omni.Message) {
	t.Helper()
	var w recordWriter
	var b []byte
	for i := range msgs {
		var last bool
		if b, last = w.append(b, &msgs[i]); last {
			return
		}
	}
	var got []omni.Message
	if err := eachRecord(string(b), func(m omni.Message) { got = append(got, m) }); err != nil || len(got) != len(msgs) {
		t.Fatalf("batch %q: %d messages of %d, %v", b, len(got), len(msgs), err)
	}
	for i := range got {
		j, want := got[i].AppendJSON(nil), msgs[i].AppendJSON(nil)
		a, errA := parseOrdered(string(j))
		v, errV := parseOrdered(string(want))
		if errA != nil || errV != nil || !reflect.DeepEqual(a, v) {
			t.Fatalf("message %d of batch %q gives %s, want %s", i, b, j, want)
		}
		if x, y := errText(got[i].Validate()), errText(msgs[i].Validate()); string(j) == string(want) && x != y {
			t.Fatalf("message %d of batch %q (%s) validates %q, want %q", i, b, j, x, y)
		}
	}
}

// TestRecordWriterHot: runs of messages much like each other (the deltas
// of a fragment, with now and then a change of timestamp, stop, role,
// event or kind, a second field, a string equal to a constant at another
// address, a non-ASCII or long body, a message only JSON carries) write
// the batch that record's checks alone write, and most take the hot path.
func TestRecordWriterHot(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	ts1, ts2 := "2026-01-02T03:04:05.000Z", "2026-01-02T03:04:05.001Z"
	copyOf := func(s string) string { return string([]byte(s)) } // equal, at another address
	bodies := []string{"", "a", "abcdefg ", "0123456789ab", "é", "x😀", strings.Repeat("z", 120)}
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	hits, total := 0, 0
	kindHits := map[string]int{}
	for range randomCases(2000) {
		var msgs []omni.Message
		typ := pick(omni.PartialText, omni.PartialThinking, omni.PartialToolCall, omni.PartialToolCallOutput)
		id, name := "", ""
		switch typ {
		case omni.PartialToolCall:
			id, name = pick("call_0_1", "c"), pick("work", "")
		case omni.PartialToolCallOutput:
			id = pick("call_0_1", "c\u00e9")
		}
		base := omni.Partial(typ, pick(omni.EventDelta, omni.EventStart), "", id, name, pick(omni.StatusCompleted, "", omni.StatusFailed))
		base.Timestamp = pick(ts1, "")
		for range 1 + r.IntN(40) {
			m := base
			switch body := pick(bodies...); m.Payload.Type {
			case omni.PartialText:
				m.Payload.Text = body
			case omni.PartialThinking:
				m.Payload.Thinking = body
			case omni.PartialToolCall:
				m.Payload.Arguments = body
			default:
				m.Payload.Output = body
			}
			switch r.IntN(66) {
			case 60:
				m.Payload.ToolCallID = pick(copyOf(m.Payload.ToolCallID), "other", "")
			case 61:
				m.Payload.Name = pick(copyOf(m.Payload.Name), "other", "")
			case 62: // the next messages take the change too
				base.Payload.ToolCallID = pick("call_0_2", copyOf(base.Payload.ToolCallID))
				m.Payload.ToolCallID = base.Payload.ToolCallID
			case 0:
				m.Timestamp = pick(ts2, copyOf(m.Timestamp), "")
			case 1:
				m.Payload.StopReason = pick(omni.StatusCompleted, "", "bogus", copyOf(m.Payload.StopReason))
			case 2:
				m.Payload.Role = pick(omni.RoleUser, copyOf(omni.RoleAssistant), "")
			case 3:
				m.Payload.EventType = pick(omni.EventStop, copyOf(omni.EventDelta), "")
			case 4:
				m.Payload.Type = pick(omni.Text, omni.PartialToolCall, copyOf(m.Payload.Type))
			case 5:
				m.Payload.Name = "read"
			case 6:
				m.Payload.ToolCallID = "c1"
			case 7:
				m.Payload.Output = "o"
			case 8:
				m = m.WithOrigin("sub")
			case 9:
				m.Payload.Edit().Sender = omni.SenderHarness
			case 10:
				m = omni.RequestBeginMsg()
			case 11:
				m.Type = copyOf(omni.TypeModelMsg)
			case 12: // the next messages take the change too
				base.Timestamp = pick(ts1, ts2, "")
				m.Timestamp = base.Timestamp
			}
			msgs = append(msgs, m)
		}
		h := sameAsCold(t, msgs, r.IntN(4) == 0)
		hits += h
		kindHits[typ] += h
		total += len(msgs)
	}
	if hits < total/3 {
		t.Errorf("%d of %d messages took the hot path", hits, total)
	}
	for _, k := range []string{omni.PartialText, omni.PartialThinking, omni.PartialToolCall, omni.PartialToolCallOutput} {
		if kindHits[k] < hits/8 {
			t.Errorf("%s: %d of the %d messages that took the hot path", k, kindHits[k], hits)
		}
	}
	// A decoded payload is never hot: its JSON may hold keys a record does
	// not carry.
	decoded, _ := omni.Decode([]byte(`{"type":"model_msg","payload":{"type":"partial_text","role":"assistant","event_type":"delta","text":"x","stop_reason":"completed"}}`))
	hot := omni.Partial(omni.PartialText, omni.EventDelta, "y", "", "", omni.StatusCompleted)
	if sameAsCold(t, []omni.Message{hot, decoded, hot}, false) != 1 {
		t.Error("a decoded payload took the hot path")
	}
}

// oneByOne decodes each record of a well-formed batch alone (after the
// batch's last t record before it): what eachRecord gives without its
// shortcut for a record like the last one. Each message as its JSON and
// validation.
func oneByOne(t *testing.T, data string) []string {
	t.Helper()
	var out []string
	r := recordReader{s: data}
	ts := ""
	for r.i < len(data) {
		start := r.i
		k := data[r.i]
		r.i++
		skipRecord(&r, k)
		if k == recTime {
			ts = data[start:r.i]
			continue
		}
		if err := eachRecord(ts+data[start:r.i], func(m omni.Message) { out = append(out, string(m.AppendJSON(nil))+errText(m.Validate())) }); err != nil {
			t.Fatalf("record %q of batch %q: %v", data[start:r.i], data, err)
		}
	}
	return out
}

// TestEachRecordHot: batches of records much like each other, as the
// shim writes a stream's deltas (with now and then another head, stop,
// timestamp, a long or non-ASCII body, a stop as a string, a J record),
// decode to what each record gives alone.
func TestEachRecordHot(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	recs := []string{"Tda1:ac", "Tda1:bc", "Tda8:abcdefg c", "Tda0:c", "Tda9:123456789c", "Tda12:0123456789abc", "Tda1:a-", "Tda1:x-",
		"Kda2:hmc", "Kda1:kc", "Tdu1:uc", "Tsa0:c", "Txa0:c", "Tda2:é!c", "Tda1:a9:completed", "Tda1:a4:auth", "Tda1:ah", "Tda1:a3:abc",
		"Tca4:textc", "t1:x", "t0:", "Cda1:{2:c14:readc", "Oda1:o2:c1c", jRecords(`{"type":"model_msg","payload":{"type":"partial_text","role":"assistant","event_type":"delta","text":"j"}}`),
		"U0,0,1,2,0,0,1,2;", "Oda16:out-fragment-16\n8:call_0_0c", "Oda1:o8:call_0_1c", "Oda1:o8:call_0_1-", "Oda1:o8:call_0_19:completed",
		"Cda8:{\"path\":8:call_0_04:workc", "Cda2:1210:call_0_0_04:workc", "Cda1:}8:call_0_00:c", "Csa0:8:call_0_04:workc", "Odu2:ab2:c1c",
		"Oda1:o2:c\u00e9c"}
	// body returns the length and the end of the body of fragment record
	// rec (its head is three bytes), or -1 when it is not ASCII.
	body := func(rec string) (int, int) {
		i := strings.IndexByte(rec[3:], ':') + 3
		n, err := strconv.Atoi(rec[3:i])
		if err != nil || i+1+n > len(rec) || !isASCII(rec[i+1:i+1+n]) {
			return -1, -1
		}
		return n, i + 1 + n
	}
	for range randomCases(3000) {
		var b strings.Builder
		cur := recs[r.IntN(len(recs))]
		for range 1 + r.IntN(30) {
			if r.IntN(6) == 0 {
				cur = recs[r.IntN(len(recs))]
			}
			if r.IntN(3) == 0 && len(cur) > 3 && strings.IndexByte("TKCO", cur[0]) >= 0 { // another body, mostly ASCII
				if _, end := body(cur); end >= 0 {
					bodies := []string{"1:q", "2:qq", "0:", "9:abcdefghi", "10:abcdefghij", "16:out-fragment-16\n", "99:" + strings.Repeat("x", 99), "100:" + strings.Repeat("y", 100), "1:é", "2:😀", "02:ab"}
					cur = cur[:3] + bodies[r.IntN(len(bodies))] + cur[end:] // the rest: tool_call_id, name, stop
				}
			}
			b.WriteString(cur)
		}
		data := b.String()
		var got []string
		if err := eachRecord(data, func(m omni.Message) { got = append(got, string(m.AppendJSON(nil))+errText(m.Validate())) }); err != nil {
			t.Fatalf("batch %q: %v", data, err)
		}
		if want := oneByOne(t, data); !slices.Equal(got, want) {
			t.Fatalf("batch %q\ngives   %q\nalone   %q", data, got, want)
		}
	}
	// A record like the last but cut short, or with another stop, is
	// malformed as it would be alone.
	for _, data := range []string{"Tda1:acTda1:a", "Tda1:acTda1:az", "Tda1:acTda2:a", "Tda1:acTda1:", "Oda1:o2:c1cOda1:o2:c1", "Oda1:o2:c1cOda1:o2:c", "Oda1:o2:c1cOda12:o2:c1c",
		"Tda1:acTdaA:0123456789abcdefgc", "Tda1:acTda:A:0123456789c", "Oda1:o2:c1cOda/:2:c1c"} {
		n := 0
		if err := eachRecord(data, func(omni.Message) { n++ }); n != 1 || err == nil || !strings.Contains(err.Error(), "[1]: omni: malformed batch record") {
			t.Errorf("%q: %d messages, %v", data, n, err)
		}
	}
}

func hasKey(o obj, k string) bool {
	_, ok := o.get(k)
	return ok
}

// TestRecordBatchesMatchJSON: a batch of several messages, timestamped or
// not, built as the shim's pump builds it (a t record only where the
// timestamp changes), decodes to the messages its all-JSON batch gives.
func TestRecordBatchesMatchJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	stamps := []string{"", "2026-01-02T03:04:05.000Z", "2026-01-02T03:04:05.001Z", "yesterday"}
	for i := range randomCases(3000) {
		var viaJSON, viaRec strings.Builder
		bufTs := ""
		for range 1 + r.IntN(8) {
			v := randMessage(r)
			if r.IntN(2) == 0 { // fragments of one request often share a stamp
				v = slices.DeleteFunc(v, func(f kv) bool { return f.k == "timestamp" })
				if ts := stamps[r.IntN(len(stamps))]; ts != "" {
					v = append(obj{{"timestamp", ts}}, v...)
				}
			}
			viaJSON.WriteString(jRecords(v.json()))
			rec := shimFragment(v)
			if rec == "" || shimRecord(v) == "" {
				viaRec.WriteString(jRecords(v.json()))
				continue
			}
			ts := ""
			if x, ok := v.get("timestamp"); ok {
				ts = x.(string)
			}
			if ts != bufTs {
				bufTs = ts
				viaRec.WriteString("t" + lenStr(ts))
			}
			viaRec.WriteString(rec)
		}
		var a, b []string
		errA := eachRecord(viaJSON.String(), func(m omni.Message) { a = append(a, string(m.AppendJSON(nil))+errText(omni.Validate(m))) })
		errB := eachRecord(viaRec.String(), func(m omni.Message) { b = append(b, string(m.AppendJSON(nil))+errText(omni.Validate(m))) })
		if errText(errA) != errText(errB) || !slices.Equal(a, b) {
			t.Fatalf("#%d: batch %q\nJSON    %q (%v)\nrecords %q (%v)", i, viaRec.String(), a, errA, b, errB)
		}
	}
}

// TestIsASCII checks the word-at-a-time test at every length and position
// around its eight-byte steps.
func TestIsASCII(t *testing.T) {
	for n := 0; n <= 25; n++ {
		s := strings.Repeat("a", n)
		if !isASCII(s) {
			t.Fatalf("%d ASCII bytes: false", n)
		}
		for i := 0; i < n; i++ {
			b := []byte(s)
			b[i] = 0x80 | byte(i)
			if isASCII(string(b)) {
				t.Fatalf("length %d, a high byte at %d: true", n, i)
			}
		}
	}
}

// A run of deltas whose timestamp equals the last message's at another
// address (each stamper formats its own string of an instant: the
// driver's approval_decision, then a tool's batch) takes the hot path
// after its first delta, as a run stamped with the last message's own
// string does.
func TestRecordWriterHotAfterEqualStamp(t *testing.T) {
	ts := "2026-01-02T03:04:05.006Z"
	other := string([]byte(ts)) // equal, at another address
	dec := omni.ApprovalDecisionMsg(string(omni.DecisionAllow), "call_1")
	dec.Timestamp = ts
	start := omni.Partial(omni.PartialToolCallOutput, omni.EventStart, "", "call_1", "", omni.StatusCompleted)
	start.Timestamp = other
	delta := omni.Partial(omni.PartialToolCallOutput, omni.EventDelta, "out", "call_1", "", omni.StatusCompleted)
	delta.Timestamp = other
	var w recordWriter
	dst := make([]byte, 0, 4096)
	for _, m := range []*omni.Message{&dec, &start, &delta} {
		dst, _ = w.append(dst, m)
	}
	next := delta
	next.Payload.Output = "more"
	if _, ok := w.hot(dst, &next); !ok {
		t.Fatal("a delta after an equal timestamp at another address missed the hot path")
	}
	if got := strings.Count(string(dst), string(recTime)+"24:"); got != 1 {
		t.Fatalf("%d t records for one instant, want 1: %q", got, dst)
	}
}
