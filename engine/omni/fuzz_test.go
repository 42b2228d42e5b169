package omni

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"testing"
)

// normalized returns m as the encoder sees it: an empty origin is dropped
// (PROTOCOL.md P-3), which is the one lossy step of decode → encode.
func normalized(m Message) Message {
	if len(m.Origin) == 0 {
		m.Origin = nil
	}
	return m
}

// checkRoundTrip asserts that encode → decode gives m back and that a
// second encode is byte-identical; it returns the first encoding.
func checkRoundTrip(t *testing.T, m Message) []byte {
	t.Helper()
	b1 := m.AppendJSON(nil)
	if !json.Valid(b1) {
		t.Fatalf("encoder wrote invalid JSON: %q", b1)
	}
	m2, err := Decode(b1)
	if err != nil {
		t.Fatalf("re-decode of %q: %v", b1, err)
	}
	if !reflect.DeepEqual(normalized(m), m2) {
		t.Fatalf("round trip differs\n in  %#v\n out %#v\n via %q", m, m2, b1)
	}
	if b2 := m2.AppendJSON(nil); string(b2) != string(b1) {
		t.Fatalf("second encode differs\n %q\n %q", b1, b2)
	}
	return b1
}

func FuzzDecode(f *testing.F) {
	for _, tc := range canonical {
		f.Add([]byte(tc.json))
	}
	f.Add([]byte(`{"type":"x","payload":{"text":"\ud83d\ude00\ud800\u00e9\/","q":{"a":[1e5,-0.5,true,null,"\u0000"]},"session":{"total":1.0}},"origin":[]}`))
	f.Add([]byte("{\"type\":\"x\",\"payload\":{\"text\":\"\xff\xfe\",\"tools\":[{\"name\":\"a\",\"parameters\":null}],\"reason\":null}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("accepted invalid JSON %q", data)
		}
		b1 := checkRoundTrip(t, m)
		// Growth is bounded: U+FFFD for an invalid byte (3×) and the four
		// keys of a token count are the worst cases.
		if len(b1) > 3*len(data)+128 {
			t.Fatalf("encoding grew from %d to %d bytes", len(data), len(b1))
		}
		_ = Validate(m) // must not panic
		// Differential check: encoding/json reads the same values in the
		// input and in our output, up to what the codec documents it drops.
		in, err1 := jsonView(data)
		out, err2 := jsonView(b1)
		if err1 != nil || err2 != nil {
			t.Fatalf("encoding/json rejects %q (%v) or %q (%v)", data, err1, b1, err2)
		}
		if want := canonicalView(in); !reflect.DeepEqual(want, out) {
			t.Fatalf("encoding/json view differs\n in  %#v\n out %#v", want, out)
		}
	})
}

// jsonView decodes data with encoding/json, numbers kept as text.
func jsonView(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

// integerKeys are the payload keys whose numbers the codec re-formats.
var integerKeys = []string{"attempt", "retry_in_ms", "context", "turns", "rounds", "tokens_used"}

// canonicalInt formats a JSON number the way the codec re-writes an
// integer (3.0 and 3e0 become 3).
func canonicalInt(v any) any {
	n, ok := v.(json.Number)
	if !ok {
		return v
	}
	if i, err := n.Int64(); err == nil {
		return json.Number(strconv.FormatInt(i, 10))
	}
	f, _ := n.Float64()
	return json.Number(strconv.FormatInt(int64(f), 10))
}

// canonicalView applies to a generic JSON view of a decoded envelope what
// the codec normalizes: unknown envelope keys, a null or empty origin and
// an empty timestamp are dropped; token counts get their four keys (0
// when missing); tool definitions keep name, description and parameters.
func canonicalView(v any) any {
	env := v.(map[string]any)
	out := map[string]any{"type": env["type"]}
	if ts, _ := env["timestamp"].(string); ts != "" {
		out["timestamp"] = ts
	}
	if o, _ := env["origin"].([]any); len(o) > 0 {
		out["origin"] = o
	}
	p := env["payload"].(map[string]any)
	for _, k := range integerKeys {
		if x, ok := p[k]; ok {
			p[k] = canonicalInt(x)
		}
	}
	for _, k := range []string{"session", "request"} {
		if c, ok := p[k].(map[string]any); ok {
			n := map[string]any{}
			for k, x := range c { // keys beyond the four are kept
				n[k] = x
			}
			for _, f := range []string{"cache_read", "cache_write", "output", "total"} {
				n[f] = json.Number("0")
				if x, ok := c[f]; ok {
					n[f] = canonicalInt(x)
				}
			}
			p[k] = n
		}
	}
	if tools, ok := p["tools"].([]any); ok {
		for i, e := range tools {
			td := e.(map[string]any)
			n := map[string]any{"name": "", "description": ""}
			for _, f := range []string{"name", "description", "parameters"} {
				if x, ok := td[f]; ok {
					n[f] = x
				}
			}
			tools[i] = n
		}
	}
	out["payload"] = p
	return out
}

func FuzzDecodeArray(f *testing.F) {
	f.Add([]byte(`[]`))
	f.Add([]byte(`[` + canonical[0].json + `,` + canonical[3].json + `]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, err := DecodeArray(data)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("accepted invalid JSON %q", data)
		}
		all := []byte{'['}
		for i, m := range ms {
			if i > 0 {
				all = append(all, ',')
			}
			all = append(all, checkRoundTrip(t, m)...)
		}
		all = append(all, ']')
		ms2, err := DecodeArray(all)
		if err != nil {
			t.Fatalf("re-decode of %q: %v", all, err)
		}
		for i := range ms {
			ms[i] = normalized(ms[i])
		}
		if !reflect.DeepEqual(ms, ms2) {
			t.Fatalf("array round trip differs")
		}
	})
}

// fuzzMessage turns two bytes into a message of a small alphabet that
// exercises every fragment rule: payload type, event type, tool_call_id,
// origin, body and images.
func fuzzMessage(op, arg byte) Message {
	partials := []string{PartialText, PartialThinking, PartialToolCall, PartialToolCallOutput}
	events := []string{EventStart, EventDelta, EventDelta, EventStop, EventStop, "bogus"}
	ids := []string{"", "A", "B"}
	bodies := []string{"", "x", "yz", "é"}
	id := ids[int(arg>>2)%len(ids)]
	var m Message
	switch op % 4 {
	case 0, 1: // a fragment
		typ := partials[int(op>>2)%len(partials)]
		m = Partial(typ, events[int(op>>4)%len(events)], bodies[int(arg)%len(bodies)], id, "f", StatusCompleted)
		if typ == PartialText || typ == PartialThinking {
			m.Payload.ToolCallID = ""
		}
		if arg&0x40 != 0 {
			m.Payload.Edit().Images = []string{"data:i" + bodies[int(arg)%len(bodies)]}
		}
	case 2: // a complete message
		typ := completeOf(partials[int(op>>2)%len(partials)])
		p := Partial(partials[int(op>>2)%len(partials)], "", bodies[int(arg)%len(bodies)], id, "f", StatusCompleted).Payload
		p.Type, p.EventType = typ, ""
		if typ == Text || typ == Thinking {
			p.ToolCallID = ""
		}
		m = Message{Type: TypeModelMsg, Payload: p}
	default: // an event
		m = TokenUsageMsg(TokenCounts{Total: int64(arg)}, TokenCounts{})
	}
	if arg&0x80 != 0 {
		m = m.WithOrigin("child")
	}
	return m
}

func FuzzAggregator(f *testing.F) {
	f.Add([]byte{0, 0, 16, 1, 48, 0, 6, 1})
	f.Add([]byte{5, 4, 17, 4, 53, 4, 2, 4, 1, 0x80, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		var a Aggregator
		var d Discipline
		for i := 0; i+1 < len(data); i += 2 {
			m := fuzzMessage(data[i], data[i+1])
			if err := d.Check(m); err != nil && !errors.Is(err, ErrDiscipline) {
				t.Fatalf("Discipline error does not wrap ErrDiscipline: %v", err)
			}
			got := a.Add(m)
			if !m.IsPartial() {
				if len(got) != 1 || !reflect.DeepEqual(got[0], m) {
					t.Fatalf("Add(%s) = %d messages, want it back", describe(&m), len(got))
				}
				continue
			}
			if len(got) > 1 {
				t.Fatalf("a fragment completed %d messages", len(got))
			}
			for _, c := range got {
				checkBuilt(t, c)
			}
			if i%128 == 0 { // Open copies every body: not at every step
				checkOpen(t, a.Open())
			}
		}
		open := a.Open()
		checkOpen(t, open)
		flushed := a.Flush()
		if len(flushed) != len(open) || len(a.Open()) != 0 {
			t.Fatalf("Flush returned %d of %d open fragments", len(flushed), len(open))
		}
		for _, c := range flushed {
			checkBuilt(t, c)
		}
		_ = d.End()
	})
}

// checkBuilt asserts that a message built by the Aggregator is a complete
// model_msg that survives the codec.
func checkBuilt(t *testing.T, m Message) {
	t.Helper()
	if m.Type != TypeModelMsg || m.IsPartial() || partialOf(m.Payload.Type) == "" {
		t.Fatalf("built message %s is not a complete streamed type", describe(&m))
	}
	b1 := m.AppendJSON(nil)
	m2, err := Decode(b1)
	if err != nil {
		t.Fatal(err)
	}
	if b2 := m2.AppendJSON(nil); string(b1) != string(b2) {
		t.Fatalf("%s\n%s", b1, b2)
	}
}

// checkOpen asserts that Open returns one start per key.
func checkOpen(t *testing.T, open []Message) {
	t.Helper()
	for i, m := range open {
		if !m.IsPartial() || m.Payload.EventType != EventStart {
			t.Fatalf("Open returned %s", describe(&m))
		}
		for _, o := range open[:i] {
			if o.Payload.Type == m.Payload.Type && o.Payload.ToolCallID == m.Payload.ToolCallID && reflect.DeepEqual(o.Origin, m.Origin) {
				t.Fatalf("Open returned %s twice", describe(&m))
			}
		}
	}
}

// FuzzDisciplineHot checks that a Discipline's hot fragment (a delta of the
// fragment the last message started or continued is noted without a
// search) changes nothing: the same messages through a Discipline that
// always searches give the same errors, and the same messages when the
// stream is closed. Each message takes three bytes: fuzzMessage's two, and
// one that varies the name, role and stop_reason of a fragment and picks
// Check or Try.
func FuzzDisciplineHot(f *testing.F) {
	f.Add([]byte{16, 0, 0, 16, 1, 0, 16, 2, 1, 48, 0, 0, 2, 0, 0})
	f.Add([]byte{21, 4, 0, 5, 4, 2, 21, 5, 4, 17, 4, 8, 21, 4, 0, 53, 4, 0, 6, 4, 0})
	f.Add([]byte{16, 0, 0, 20, 4, 0, 16, 1, 0, 36, 4, 0, 16, 2, 0, 20, 0, 0, 16, 0x40, 2, 16, 0x80, 0})
	f.Add([]byte{16, 0, 1, 16, 1, 1, 16, 1, 1, 16, 2, 1, 16, 1, 0x41, 16, 1, 0x41, 16, 2, 0x21, 48, 0, 1, 2, 0, 1})
	f.Add([]byte{8, 5, 1, 24, 5, 1, 24, 5, 1, 24, 9, 1, 8, 9, 1, 24, 9, 1, 24, 5, 1}) // another call's delta of the hot shape
	f.Add([]byte{4, 1, 1, 20, 1, 1, 20, 1, 1, 0, 1, 0, 20, 1, 1})                     // the checker's last shape is not the hot fragment's type
	f.Add([]byte{0, 1, 1, 16, 1, 1, 16, 1, 1, 16, 1, 0x21, 16, 1, 0x11})              // a delta of the hot key, of another shape
	f.Add([]byte{0, 1, 1, 16, 1, 1, 16, 1, 1, 16, 0x41, 1})                           // a delta with images
	f.Add([]byte{0, 1, 1, 0, 1, 1})                                                   // a start again, of the last shape
	f.Add([]byte{0, 1, 1, 16, 1, 1, 16, 1, 1, 16, 0x81, 1})                           // a delta with an origin
	f.Add([]byte{0, 1, 1, 16, 1, 1, 16, 1, 1, 16, 1, 0x21, 16, 1, 1})                 // the last shape's again, after an invalid message
	f.Add([]byte{0, 1, 0, 16, 1, 0, 16, 1, 0x80, 16, 1, 0})                           // a delta's payload in an event_msg
	f.Fuzz(func(t *testing.T, data []byte) {
		// slow forgets its hot fragment before each message; through
		// Try, hot and its Checker hc take a message HotDelta takes
		// without the checks, which sc and slow make.
		var hot, slow Discipline
		var hc, sc Checker
		names := []string{"f", "", "g"}
		stops := []string{StatusCompleted, "", StatusFailed}
		for i := 0; i+2 < len(data); i += 3 {
			m := fuzzMessage(data[i], data[i+1])
			x := data[i+2]
			if m.Payload.Type == PartialToolCall {
				m.Payload.Name = names[int(x>>1)%len(names)]
			}
			if m.IsPartial() {
				m.Payload.StopReason = stops[int(x>>3)%len(stops)]
				if x&0x20 != 0 {
					m.Payload.Role = ""
				}
			}
			if x&0x40 != 0 {
				m.Timestamp = "2026-12-04T05:00:00.000Z"
			}
			if x&0x80 != 0 { // a fragment's payload in another envelope
				m.Type = TypeEventMsg
			}
			m2 := m
			slow.hot = nil
			var e1, e2 error
			if x&1 != 0 { // as a producer's stream is checked: validated, then tried
				e1, e2 = checkTry(&hc, &hot, &m, true), checkTry(&sc, &slow, &m2, false)
				if hc.ok != sc.ok || !reflect.DeepEqual(hc.last, sc.last) {
					t.Fatalf("message %d (%s): checker %v %+v, without HotDelta %v %+v", i/3, describe(&m), hc.ok, hc.last, sc.ok, sc.last)
				}
			} else {
				e1, e2 = hot.CheckMessage(&m), slow.CheckMessage(&m2)
			}
			if fmt.Sprint(e1) != fmt.Sprint(e2) {
				t.Fatalf("message %d (%s): %v, searching %v", i/3, describe(&m), e1, e2)
			}
			if fmt.Sprint(hot.Unfinished()) != fmt.Sprint(slow.Unfinished()) {
				t.Fatalf("message %d (%s): unfinished %v, searching %v", i/3, describe(&m), hot.Unfinished(), slow.Unfinished())
			}
		}
		if got, want := hot.Close(StatusAborted), slow.Close(StatusAborted); !reflect.DeepEqual(got, want) {
			t.Fatalf("Close:\n%+v\nsearching:\n%+v", got, want)
		}
		if hot.hot != nil {
			t.Fatal("Close kept the hot fragment")
		}
	})
}

// checkTry checks m as the engine checks an LLM's message: HotDelta first
// when hotDelta is set, then c.Validate and d.Try.
func checkTry(c *Checker, d *Discipline, m *Message, hotDelta bool) error {
	if hotDelta && HotDelta(c, d, m) {
		return nil
	}
	if err := c.Validate(m); err != nil {
		return err
	}
	return d.Try(m)
}
