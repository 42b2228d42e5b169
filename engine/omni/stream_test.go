package omni

import (
	"errors"
	"os"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// Short builders for fragment sequences.
func pt(ev, body string) Message { return Partial(PartialText, ev, body, "", "", StatusCompleted) }
func pc(ev, body, id string) Message {
	return Partial(PartialToolCall, ev, body, id, "f", StatusCompleted)
}
func po(ev, body, id string, images ...string) Message {
	m := Partial(PartialToolCallOutput, ev, body, id, "", StatusCompleted)
	if images != nil {
		m.Payload.Edit().Images = images
	}
	return m
}
func out(id, body string, images ...string) Message {
	m := ToolOutput(id, body, StatusCompleted)
	if images != nil {
		m.Payload.Edit().Images = images
	}
	return m
}

func TestDiscipline(t *testing.T) {
	t.Parallel()
	child := AssistantText("x", StatusCompleted).WithOrigin("child")
	cases := []struct {
		name string
		msgs []Message
		want []string // per message: "" or a substring of the error
		end  string   // substring of End's error, "" = none
	}{
		{"seed", []Message{
			pt("start", ""), pt("delta", "I will "), pt("delta", "run."), pt("stop", ""), AssistantText("I will run.", StatusCompleted),
			pc("start", "", "A"), pc("delta", `{"p":`, "A"), pc("delta", `1}`, "A"), pc("stop", "", "A"), ToolCallMsg("A", "f", `{"p":1}`),
			TokenUsageMsg(TokenCounts{}, TokenCounts{}),
		}, make([]string, 11), ""},
		{"unstreamed_complete", []Message{AssistantText("x", StatusCompleted), RequestBeginMsg()}, []string{"", ""}, ""},
		{"images", []Message{po("start", "", "A"), po("delta", "o", "A", "data:a"), po("stop", "", "A"), out("A", "o", "data:a")}, make([]string, 4), ""},
		{"two_open_keys", []Message{pc("start", "", "A"), pc("start", "", "B"), pc("stop", "", "A"), ToolCallMsg("A", "f", ""), pc("stop", "", "B"), ToolCallMsg("B", "f", "")}, make([]string, 6), ""},
		{"origin_ignored", []Message{pt("start", ""), child, pt("stop", ""), child, AssistantText("", StatusCompleted)}, make([]string, 5), ""},
		{"delta_without_start", []Message{pt("delta", "a"), pt("stop", ""), AssistantText("a", StatusCompleted)}, []string{"partial_text delta without start", "", ""}, ""},
		{"stop_without_start", []Message{pt("stop", ""), AssistantText("", StatusCompleted)}, []string{"partial_text stop without start", ""}, ""},
		{"start_while_open", []Message{pt("start", ""), pt("delta", "a"), pt("start", ""), pt("delta", "b"), pt("stop", ""), AssistantText("b", StatusCompleted)}, []string{"", "", "start of partial_text while it is open", "", "", ""}, ""},
		{"body_mismatch", []Message{pt("start", ""), pt("delta", "abc"), pt("stop", ""), AssistantText("abd", StatusCompleted)}, []string{"", "", "", `complete text body (3 bytes) differs from the deltas of partial_text (3 bytes) at byte 2`}, ""},
		{"start_stop_bodies_not_counted", []Message{pt("start", "x"), pt("stop", "y"), AssistantText("xy", StatusCompleted)}, []string{"", "", "differs from the deltas of partial_text"}, ""},
		{"images_mismatch", []Message{po("start", "", "A"), po("delta", "", "A", "data:a"), po("stop", "", "A"), out("A", "", "data:b")}, []string{"", "", "", "images differ"}, ""},
		{"name_mismatch", []Message{pc("start", "", "A"), pc("stop", "", "A"), ToolCallMsg("A", "g", "")}, []string{"", "", `complete tool_call name "g" differs from the name "f" of partial_tool_call "A"`}, ""},
		{"foreign_between", []Message{pt("start", ""), pt("stop", ""), TokenUsageMsg(TokenCounts{}, TokenCounts{}), AssistantText("", StatusCompleted)}, []string{"", "", `event_msg token_usage arrived after the stop of partial_text, before its complete text`, ""}, ""},
		{"wrong_id_after_stop", []Message{po("start", "", "A"), po("stop", "", "A"), out("B", "")}, []string{"", "", `tool_call_output "B" arrived after the stop of partial_tool_call_output "A"`}, ""},
		{"complete_while_open", []Message{pt("start", ""), pt("delta", "a"), AssistantText("a", StatusCompleted)}, []string{"", "", "complete text while partial_text is open (no stop)"}, ""},
		{"bad_event_type", []Message{pt("middle", "")}, []string{`partial_text middle has event_type "middle"`}, ""},
		{"end_open", []Message{pt("start", "")}, []string{""}, "stream ended with partial_text open"},
		{"end_many_open", []Message{pt("start", ""), pc("start", "", "A")}, []string{"", ""}, "stream ended with partial_text and 1 more fragments open"},
		{"end_after_stop", []Message{pt("start", ""), pt("stop", "")}, []string{"", ""}, "stream ended after the stop of partial_text, before its complete text"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var d Discipline
			for i, m := range tc.msgs {
				err := d.Check(m)
				if !matchErr(err, tc.want[i]) {
					t.Fatalf("message %d (%s): got %v, want %q", i, describe(&m), err, tc.want[i])
				}
			}
			if err := d.End(); !matchErr(err, tc.end) {
				t.Fatalf("End: got %v, want %q", err, tc.end)
			}
			if err := d.End(); err != nil {
				t.Fatalf("End after End: %v", err)
			}
		})
	}
}

func matchErr(err error, want string) bool {
	if want == "" {
		return err == nil
	}
	return err != nil && errors.Is(err, ErrDiscipline) && strings.Contains(err.Error(), want)
}

// sharedStreams reads testdata/streams.jsonl: groups of envelopes headed by
// "# producer …" (one callback's emits in a conformance scenario) or
// "# stream …" (the engine's whole output stream of a scenario run).
func sharedStreams(t testing.TB) (heads []string, groups [][]Message) {
	t.Helper()
	data, err := os.ReadFile("testdata/streams.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if strings.HasPrefix(line, "# ") {
			heads, groups = append(heads, line[2:]), append(groups, nil)
			continue
		}
		m, err := Decode([]byte(line))
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], m)
	}
	return heads, groups
}

// TestDisciplineSharedStreams checks that every scripted callback of the
// conformance scenarios follows the discipline; only the two tools of S06
// and S07, which end mid-fragment on purpose, leave one open.
func TestDisciplineSharedStreams(t *testing.T) {
	t.Parallel()
	heads, groups := sharedStreams(t)
	for i, head := range heads {
		if !strings.HasPrefix(head, "producer ") {
			continue
		}
		var d Discipline
		for _, m := range groups[i] {
			if err := d.Check(m); err != nil {
				t.Errorf("%s: %v", head, err)
			}
		}
		err := d.End()
		deliberate := strings.HasPrefix(head, "producer S06 tool x2 ") || strings.HasPrefix(head, "producer S07 tool y1 ")
		if (err != nil) != deliberate {
			t.Errorf("%s: End: %v", head, err)
		}
	}
}

// TestAggregatorSharedStreams aggregates the engine's expected output
// streams: since the engine keeps the discipline, the aggregator returns
// exactly the stream's non-fragment messages and never builds one.
func TestAggregatorSharedStreams(t *testing.T) {
	t.Parallel()
	heads, groups := sharedStreams(t)
	for i, head := range heads {
		if !strings.HasPrefix(head, "stream ") {
			continue
		}
		var a Aggregator
		var got, want []Message
		for _, m := range groups[i] {
			got = append(got, a.Add(m)...)
			if !m.IsPartial() {
				want = append(want, m)
			}
		}
		if !sameMessages(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", head, encodeAll(got), encodeAll(want))
		}
		if open := a.Open(); len(open) > 0 {
			t.Logf("%s: open at end: %s", head, encodeAll(open))
		}
	}
}

func TestAggregator(t *testing.T) {
	t.Parallel()
	usage := TokenUsageMsg(TokenCounts{}, TokenCounts{})
	cases := []struct {
		name  string
		msgs  []Message
		want  []Message // concatenated results of Add
		open  []Message // Open() at the end
		flush []Message // Flush() at the end
	}{
		{
			name: "complete_supersedes",
			msgs: []Message{pt("start", ""), pt("delta", "a"), pt("delta", "b"), pt("stop", ""), AssistantText("ab", StatusCompleted), usage},
			want: []Message{AssistantText("ab", StatusCompleted), usage},
		},
		{
			name: "interleaved_tools",
			msgs: []Message{po("start", "", "A"), po("start", "", "B"), po("delta", "b", "B"), po("delta", "a", "A"), po("stop", "", "B"), out("B", "b"), po("delta", "a", "A")},
			want: []Message{out("B", "b")},
			open: []Message{po("start", "aa", "A")},
		},
		{
			name: "start_closes_open",
			msgs: []Message{pt("start", ""), pt("delta", "x"), pt("start", ""), pt("delta", "y")},
			want: []Message{AssistantText("x", StatusCompleted)},
			open: []Message{pt("start", "y")},
		},
		{
			name: "start_closes_stopped",
			msgs: []Message{pt("start", ""), pt("delta", "x"), pt("stop", ""), pt("start", "")},
			want: []Message{AssistantText("x", StatusCompleted)},
			open: []Message{pt("start", "")},
		},
		{
			name: "delta_opens",
			msgs: []Message{pc("delta", "{", "A"), pc("delta", "}", "A")},
			open: []Message{pc("start", "{}", "A")},
		},
		{
			name:  "stop_opens_and_flush",
			msgs:  []Message{po("stop", "z", "A")},
			open:  []Message{po("start", "z", "A")},
			flush: []Message{out("A", "z")},
		},
		{
			name:  "delta_after_stop_starts_new",
			msgs:  []Message{pt("start", ""), pt("delta", "x"), pt("stop", ""), pt("delta", "y")},
			want:  []Message{AssistantText("x", StatusCompleted)},
			open:  []Message{pt("start", "y")},
			flush: []Message{AssistantText("y", StatusCompleted)},
		},
		{
			name:  "images_last_wins",
			msgs:  []Message{po("start", "", "A"), po("delta", "1", "A", "data:a"), po("delta", "2", "A", "data:b", "data:c"), po("delta", "3", "A")},
			open:  []Message{po("start", "123", "A", "data:b", "data:c")},
			flush: []Message{out("A", "123", "data:b", "data:c")},
		},
		{
			name:  "origin_keys_apart",
			msgs:  []Message{pt("start", ""), pt("delta", "p"), pt("delta", "c").WithOrigin("child"), pt("delta", "p")},
			open:  []Message{pt("start", "pp"), pt("start", "c").WithOrigin("child")},
			flush: []Message{AssistantText("pp", StatusCompleted), AssistantText("c", StatusCompleted).WithOrigin("child")},
		},
		{
			name: "stop_reason_and_name",
			msgs: []Message{
				Partial(PartialToolCall, EventStart, "", "A", "read", StatusCompleted),
				Partial(PartialToolCall, EventDelta, "{}", "A", "", ""),
				Partial(PartialToolCall, EventStop, "", "A", "", StatusAborted),
			},
			open:  []Message{Partial(PartialToolCall, EventStart, "{}", "A", "read", StatusAborted)},
			flush: []Message{{Type: TypeModelMsg, Payload: Payload{Type: ToolCall, Role: RoleAssistant, Name: "read", Arguments: "{}", ToolCallID: "A", StopReason: StatusAborted}}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var a Aggregator
			var got []Message
			for _, m := range tc.msgs {
				got = append(got, a.Add(m)...)
			}
			if !sameMessages(got, tc.want) {
				t.Fatalf("Add:\n got %s\nwant %s", encodeAll(got), encodeAll(tc.want))
			}
			if open := a.Open(); !sameMessages(open, tc.open) {
				t.Fatalf("Open:\n got %s\nwant %s", encodeAll(open), encodeAll(tc.open))
			}
			if tc.flush != nil {
				if fl := a.Flush(); !sameMessages(fl, tc.flush) {
					t.Fatalf("Flush:\n got %s\nwant %s", encodeAll(fl), encodeAll(tc.flush))
				}
				if len(a.Open()) != 0 {
					t.Fatal("fragments left after Flush")
				}
			}
		})
	}
}

// TestAggregatorReseed checks the live.fragments round trip: the Open
// snapshot seeds a fresh Aggregator that then finishes the same messages.
func TestAggregatorReseed(t *testing.T) {
	t.Parallel()
	var a Aggregator
	for _, m := range []Message{pt("start", ""), pt("delta", "ab"), po("start", "", "A"), po("delta", "o", "A", "data:x")} {
		a.Add(m)
	}
	var b Aggregator
	for _, m := range a.Open() {
		if err := Validate(m); err != nil {
			t.Fatalf("snapshot fragment invalid: %v", err)
		}
		if got := b.Add(m); len(got) != 0 {
			t.Fatalf("seeding returned %v", got)
		}
	}
	rest := []Message{pt("delta", "c"), po("delta", "p", "A")}
	for _, m := range rest {
		a.Add(m)
		b.Add(m)
	}
	if fa, fb := a.Flush(), b.Flush(); !sameMessages(fa, fb) {
		t.Fatalf("\n a %s\n b %s", encodeAll(fa), encodeAll(fb))
	}
}

func sameMessages(a, b []Message) bool {
	return len(a) == len(b) && (len(a) == 0 || reflect.DeepEqual(a, b))
}

func encodeAll(ms []Message) string {
	var b strings.Builder
	for _, m := range ms {
		out, _ := m.MarshalJSON()
		b.Write(out)
		b.WriteString("\n     ")
	}
	return b.String()
}

// A short fragment's body takes one buffer: checking a tool output streamed
// as ten 16-byte deltas allocates the fragment and its body, not a buffer
// for each doubling of the body from 8 bytes.
func TestShortFragmentBodyOneBuffer(t *testing.T) {
	const delta = "out-fragment-16\n"
	msgs := []Message{po(EventStart, "", "c1")}
	for range 10 {
		msgs = append(msgs, po(EventDelta, delta, "c1"))
	}
	msgs = append(msgs, po(EventStop, "", "c1"), out("c1", strings.Repeat(delta, 10)))
	var d Discipline
	check := func() {
		for i := range msgs {
			if err := d.CheckMessage(&msgs[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := testing.AllocsPerRun(20, check); n > 2 {
		t.Fatalf("a fragment of ten 16-byte deltas took %v allocations, want at most 2 (the fragment and one body buffer)", n)
	}
}

// A long fragment's body buffer goes back to the pool for the next
// fragment, unless it grew past maxPooledBody: on WebAssembly a stream's
// one long text would otherwise keep its memory until the next collection
// (natively the bound is 4 MB).
func TestBodyPoolBound(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // no collection empties the pool meanwhile
	largest := func() int {
		bodies.mu.Lock()
		defer bodies.mu.Unlock()
		n := 0
		for _, v := range bodies.free {
			n = max(n, cap(*v))
		}
		return n
	}
	stream := func(n int, delta string) {
		t.Helper()
		var d Discipline
		msgs := []Message{pt(EventStart, "")}
		for range n / len(delta) {
			msgs = append(msgs, pt(EventDelta, delta))
		}
		msgs = append(msgs, pt(EventStop, ""), AssistantText(strings.Repeat(delta, n/len(delta)), StatusCompleted))
		for i := range msgs {
			if err := d.CheckMessage(&msgs[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	stream(64<<10, "abcdefg ")
	if n := largest(); n < 64<<10 {
		t.Fatalf("after a body of 64 KB the pool's largest buffer has %d bytes", n)
	}
	kb := strings.Repeat("abcdefg ", 128)
	if maxPooledBody >= 1<<20 { // natively: W2's text of 800 KB leaves its buffer for the next stream
		stream(800<<10, kb)
		if n := largest(); n < 800<<10 {
			t.Fatalf("after a body of 800 KB the pool's largest buffer has %d bytes", n)
		}
	}
	stream(maxPooledBody+1024, kb) // deltas of 1 KB: its buffer outgrows maxPooledBody
	if n := largest(); n > maxPooledBody {
		t.Fatalf("the pool keeps a buffer of %d bytes, over %d", n, maxPooledBody)
	}
}

// Natively a long body grows by doubling (doubleBodies): a fragment of 1 MB
// of 8-byte deltas allocates about twice its length for its body, where
// append's growth by a quarter allocates about five times (W2's text: 4 MB
// a stream). On WebAssembly it keeps append's growth.
func TestLongBodyAllocations(t *testing.T) {
	const delta, n = "abcdefg ", 1 << 20
	var f fragment
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n / len(delta) {
		f.appendBody(delta)
	}
	runtime.ReadMemStats(&after)
	if len(f.body) != n {
		t.Fatalf("the body has %d bytes, want %d", len(f.body), n)
	}
	got, limit := after.TotalAlloc-before.TotalAlloc, uint64(5*n/2)
	if !doubleBodies {
		limit = 7 * n
	}
	if got > limit {
		t.Fatalf("a body of %d bytes allocated %d bytes, want at most %d", n, got, limit)
	}
}
