package omni

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// checkerCorpus is the testdata's messages and, of each without origin or
// rare fields, variants that change one field validation reads or a
// body: valid and invalid messages, many of the same shape.
func checkerCorpus(t *testing.T) []Message {
	t.Helper()
	var ms []Message
	for _, name := range []string{"envelopes.jsonl", "streams.jsonl", "builders.jsonl"} {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if m, err := Decode([]byte(line)); err == nil {
				ms = append(ms, m)
			}
		}
	}
	ms = append(ms, UserText("x"), AssistantText("a", StatusCompleted), ToolCallMsg("c1", "read", "{}"), ToolOutput("c1", "out", StatusFailed),
		Partial(PartialText, EventDelta, "d", "", "", StatusCompleted), Partial(PartialToolCall, EventStart, "", "c1", "read", ""),
		Partial(PartialToolCallOutput, EventDelta, "o", "c1", "", StatusCompleted))
	variants := []func(*Message){
		func(m *Message) { m.Timestamp = "2026-07-18T03:10:22.531Z" },
		func(m *Message) { m.Timestamp = "2026-07-18T03:10:22.532Z" },
		func(m *Message) { m.Timestamp = "2026-07-18 03:10:22" },
		func(m *Message) { m.Type = TypeEventMsg },
		func(m *Message) { m.Type = "model" },
		func(m *Message) { m.Payload.Type = PartialText },
		func(m *Message) { m.Payload.Type = ToolCall },
		func(m *Message) { m.Payload.Type = "bogus" },
		func(m *Message) { m.Payload.Role = RoleUser },
		func(m *Message) { m.Payload.Role = RoleAssistant },
		func(m *Message) { m.Payload.Role = "system" },
		func(m *Message) { m.Payload.Role = "" },
		func(m *Message) { m.Payload.EventType = EventDelta },
		func(m *Message) { m.Payload.EventType = "" },
		func(m *Message) { m.Payload.EventType = "bogus" },
		func(m *Message) { m.Payload.StopReason = StatusAborted },
		func(m *Message) { m.Payload.StopReason = "" },
		func(m *Message) { m.Payload.StopReason = "bogus" },
		func(m *Message) { m.Payload.ToolCallID = "" },
		func(m *Message) { m.Payload.ToolCallID = "c2" },
		func(m *Message) { m.Payload.Name = "" },
		func(m *Message) { m.Payload.Name = "write" },
		func(m *Message) { m.Payload.Text, m.Payload.Thinking = m.Payload.Text+"é", m.Payload.Thinking+"é" },
		func(m *Message) {
			m.Payload.Arguments, m.Payload.Output = m.Payload.Arguments+"x", m.Payload.Output+"x"
		},
		func(m *Message) {
			m.Payload.Text, m.Payload.Thinking, m.Payload.Arguments, m.Payload.Output = "", "", "", ""
		},
		func(m *Message) { m.Payload.Text = "t" },
	}
	n := len(ms)
	for i := range n {
		if ms[i].Origin != nil || ms[i].Payload.Rest != nil {
			continue
		}
		for _, v := range variants {
			m := ms[i]
			v(&m)
			ms = append(ms, m)
			for _, w := range variants[:6] { // and a second change
				m2 := m
				w(&m2)
				ms = append(ms, m2)
			}
		}
	}
	return ms
}

// TestCheckerShapes: messages the Checker takes for the same shape are
// all valid or all invalid for Validate (what it skips is what decides),
// and a Checker that has seen one reports for another what Validate does.
func TestCheckerShapes(t *testing.T) {
	ms := checkerCorpus(t)
	groups := map[string][]int{}
	for i := range ms {
		if ms[i].Origin != nil || ms[i].Payload.Rest != nil {
			continue
		}
		var s shape
		s.set(&ms[i])
		k := strings.Join([]string{s.ts, s.typ, s.ptype, s.role, s.event, s.stop, strconv.FormatUint(uint64(s.has), 16), strconv.Itoa(int(s.filled))}, "\x00")
		groups[k] = append(groups[k], i)
	}
	shared := 0
	for _, g := range groups {
		if len(g) > 1 {
			shared++
		}
		first := validate(&ms[g[0]])
		for _, i := range g {
			if got := validate(&ms[i]); (got == nil) != (first == nil) {
				t.Fatalf("one shape, valid and not: %+v (%v) and %+v (%v)", ms[g[0]], first, ms[i], got)
			}
			var c Checker
			_ = c.Validate(&ms[g[0]])
			if got, want := errText(c.Validate(&ms[i])), errText(validate(&ms[i])); got != want {
				t.Fatalf("%+v after %+v: %q, want %q", ms[i], ms[g[0]], got, want)
			}
		}
	}
	if shared < 100 {
		t.Fatalf("only %d shapes with more than one message: the test checks little", shared)
	}
	t.Logf("%d messages, %d shapes, %d of them shared", len(ms), len(groups), shared)
}

// TestCheckerSequence: a Checker over a stream reports what Validate does
// for each message, and a message with an origin or rare fields, or an
// invalid one, is checked in full and not remembered.
func TestCheckerSequence(t *testing.T) {
	ms := checkerCorpus(t)
	var c Checker
	for i := range ms {
		if got, want := errText(c.Validate(&ms[i])), errText(validate(&ms[i])); got != want {
			t.Fatalf("message %d %+v: %q, want %q", i, ms[i], got, want)
		}
	}
	d := Partial(PartialText, EventDelta, "d", "", "", StatusCompleted)
	c = Checker{}
	if c.Validate(&d) != nil || !c.ok {
		t.Fatal("a valid fragment is not remembered")
	}
	bad := d
	bad.Payload.StopReason = "bogus"
	if c.Validate(&bad) == nil || c.ok {
		t.Fatal("an invalid fragment passes, or is remembered")
	}
	withOrigin := d
	withOrigin.Origin = []string{}
	if c.Validate(&d) != nil || c.Validate(&withOrigin) == nil {
		t.Fatal("an empty origin passes after a valid message of its shape")
	}
}

// TestCheckerSkips: a remembered shape costs no allocation.
func TestCheckerSkips(t *testing.T) {
	d := Partial(PartialText, EventDelta, "d", "", "", StatusCompleted)
	var c Checker
	_ = c.Validate(&d)
	if n := testing.AllocsPerRun(100, func() { _ = c.Validate(&d) }); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
