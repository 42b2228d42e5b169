package omni

import (
	"fmt"
	"os"
	"reflect"
	"testing"
	"unsafe"

	"github.com/floehq/floe/internal/fields"
)

// TestMain fails the package when any test wrote through view's noRest
// or through a shared Rest.
func TestMain(m *testing.M) {
	code := m.Run()
	if !reflect.DeepEqual(noRest, Rest{}) {
		fmt.Fprintf(os.Stderr, "noRest was written to: %+v\n", noRest)
		code = 1
	}
	if err := sharedRestsIntact(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

// sharedRestsIntact reports a shared Rest that no longer holds its one
// field.
func sharedRestsIntact() error {
	want := [...]Rest{
		restAllow:     {Decision: DecisionAllow},
		restDeny:      {Decision: DecisionDeny},
		restForbidden: {Decision: DecisionForbidden},
		restCompleted: {Status: StatusCompleted},
	}
	for i := range want {
		if !reflect.DeepEqual(sharedRests[i], want[i]) {
			return fmt.Errorf("shared Rest %d was written to: %+v", i, sharedRests[i])
		}
	}
	return nil
}

// The standard decisions' approval_decision messages share one Rest each;
// Edit gives a message its own, leaving the shared one and every other
// message as they were; any other decision gets a Rest of its own.
func TestSharedRests(t *testing.T) {
	for _, d := range []string{DecisionAllow, DecisionDeny, DecisionForbidden} {
		a, b := ApprovalDecisionMsg(d, "call_a"), ApprovalDecisionMsg(d, "call_b")
		if a.Payload.Rest != b.Payload.Rest {
			t.Errorf("%s: two Rests", d)
		}
		if a.Payload.Decision() != d || a.Payload.ToolCallID != "call_a" || b.Payload.ToolCallID != "call_b" {
			t.Errorf("%s: %+v %+v", d, a.Payload, b.Payload)
		}
		b.Payload.Edit().Decision = "other"
		c := ApprovalDecisionMsg(d, "c")
		if a.Payload.Decision() != d || b.Payload.Decision() != "other" || c.Payload.Decision() != d {
			t.Errorf("%s: Edit wrote through the shared Rest", d)
		}
	}
	x, y := ApprovalDecisionMsg("maybe", "c"), ApprovalDecisionMsg("maybe", "c")
	if x.Payload.Rest == y.Payload.Rest || x.Payload.Decision() != "maybe" {
		t.Errorf("a non-standard decision: %+v %+v", x.Payload.Rest, y.Payload.Rest)
	}
	end := Event(Payload{Type: RequestEnd, Rest: CompletedEndRest()})
	end.Payload.Edit().Attempt = 2
	if CompletedEndRest().Attempt != 0 || end.Payload.Attempt() != 2 || end.Payload.Status() != StatusCompleted {
		t.Errorf("request_end: %+v, shared %+v", *end.Payload.Rest, *CompletedEndRest())
	}
	if err := sharedRestsIntact(); err != nil {
		t.Error(err)
	}
}

// The fields of the streamed fragments stay in Payload; the rest is behind
// one pointer, so the hot message is small (it is copied into the merge
// queue and into the consumer's batch).
func TestMessageSize(t *testing.T) {
	word := unsafe.Sizeof(uintptr(0))
	// Timestamp, Type, Origin; ten strings, Rest, has.
	want := 2*2*word + 3*word + 10*2*word + word + 8
	if got := unsafe.Sizeof(Message{}); got != want {
		t.Errorf("Message is %d bytes, want %d", got, want)
	}
}

// Edit gives a copy of a message a Rest of its own: the original, which
// shares the old one, keeps its values.
func TestEdit(t *testing.T) {
	a := Event(Payload{Type: RequestEnd, Rest: &Rest{Status: StatusFailed, ErrorMessage: "boom"}})
	b := a
	e := b.Payload.Edit()
	e.Status, e.Attempt = StatusCompleted, 2
	if a.Payload.Status() != StatusFailed || a.Payload.Attempt() != 0 {
		t.Errorf("the original changed: %+v", *a.Payload.Rest)
	}
	if b.Payload.Status() != StatusCompleted || b.Payload.ErrorMessage() != "boom" || b.Payload.Attempt() != 2 {
		t.Errorf("the copy: %+v", *b.Payload.Rest)
	}
	var p Payload
	p.Edit().Reason = ReasonManual
	if p.Reason() != ReasonManual {
		t.Errorf("Edit on a payload without Rest: %+v", p.Rest)
	}
}

// Every getter of a payload without Rest returns its field's zero value,
// and with a Rest the field itself.
func TestGetters(t *testing.T) {
	var p Payload
	full := Payload{Rest: new(Rest)}
	pt, rt := reflect.TypeFor[*Payload](), reflect.TypeFor[Rest]()
	for i := range rt.NumField() {
		f := rt.Field(i)
		m, ok := pt.MethodByName(f.Name)
		if !ok {
			t.Errorf("Rest.%s has no getter", f.Name)
			continue
		}
		if got := m.Func.Call([]reflect.Value{reflect.ValueOf(&p)})[0]; !got.IsZero() {
			t.Errorf("%s() without Rest = %v", f.Name, got)
		}
		v := reflect.ValueOf(full.Rest).Elem().Field(i)
		if !fields.SetNonZero(v) {
			t.Fatalf("field %s: kind %s not covered", f.Name, f.Type.Kind())
		}
		if got := m.Func.Call([]reflect.Value{reflect.ValueOf(&full)})[0]; !reflect.DeepEqual(got.Interface(), v.Interface()) {
			t.Errorf("%s() = %v, want %v", f.Name, got, v)
		}
	}
}

// A token_usage costs one allocation for its Rest and both counts.
func TestUsageRest(t *testing.T) {
	s, r := TokenCounts{Output: 1, Total: 2}, TokenCounts{Output: 3, Total: 4}
	var m Message
	if n := testing.AllocsPerRun(100, func() { m = TokenUsageMsg(s, r) }); n != 1 {
		t.Errorf("TokenUsageMsg: %v allocations, want 1", n)
	}
	if *m.Payload.Session() != s || *m.Payload.Request() != r {
		t.Errorf("counts %+v %+v", *m.Payload.Session(), *m.Payload.Request())
	}
	out, _ := m.MarshalJSON()
	if want := `{"type":"event_msg","payload":{"type":"token_usage","session":{"cache_read":0,"cache_write":0,"output":1,"total":2},"request":{"cache_read":0,"cache_write":0,"output":3,"total":4}}}`; string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
}
