package omni

import (
	"reflect"
	"strings"
	"testing"

	"github.com/floehq/floe/internal/fields"
)

// modelPayloadTypes is the protocol's list of model_msg payload types.
var modelPayloadTypes = []string{
	Text, ImageURL, InlineData, Thinking, InlineThinking, ToolCall, ToolCallOutput,
	PartialText, PartialThinking, PartialToolCall, PartialToolCallOutput,
}

func TestModelTypeOf(t *testing.T) {
	if len(modelTypes) != len(modelPayloadTypes) {
		t.Fatalf("modelTypes has %d types, the protocol %d", len(modelTypes), len(modelPayloadTypes))
	}
	for _, name := range modelPayloadTypes {
		// The constant itself, and a copy that does not share its bytes.
		for _, s := range []string{name, strings.Clone(name)} {
			mt := modelTypeOf(s)
			if mt == nil || mt.name != name {
				t.Fatalf("modelTypeOf(%q) = %v", s, mt)
			}
			if modelLayout(s) != mt.lay {
				t.Errorf("modelLayout(%q) is not its type's layout", s)
			}
		}
		// The same length, one byte off at each position.
		for i := range len(name) {
			b := []byte(name)
			b[i] ^= 0x20
			if mt := modelTypeOf(string(b)); mt != nil {
				t.Errorf("modelTypeOf(%q) = %q", b, mt.name)
			}
		}
	}
	for _, s := range []string{"", "x", RequestBegin, TokenUsage, "partial_", "texts"} {
		if mt := modelTypeOf(s); mt != nil {
			t.Errorf("modelTypeOf(%q) = %q", s, mt.name)
		}
	}
}

// TestIsPartial checks IsPartial, which tells the partial types apart by
// their first byte and length, against modelTypeOf.
func TestIsPartial(t *testing.T) {
	var names []string
	for _, name := range append(modelPayloadTypes, "", "p", "partial_", "partial_texts", "pxxxxxxxxxxx", RequestBegin, TokenUsage) {
		names = append(names, name, strings.Clone(name))
		for i := range len(name) {
			b := []byte(name)
			b[i] ^= 0x20
			names = append(names, string(b))
		}
	}
	for _, name := range names {
		mt := modelTypeOf(name)
		want := mt != nil && mt.partial
		for _, typ := range []string{TypeModelMsg, strings.Clone(TypeModelMsg), TypeEventMsg, "model_msh", ""} {
			m := Message{Type: typ, Payload: Payload{Type: name}}
			if got := m.IsPartial(); got != (want && typ == TypeModelMsg) {
				t.Errorf("IsPartial of a %q with payload type %q = %v", typ, name, got)
			}
		}
	}
}

// TestModelKeys checks that modelKeys decides the keys a model_msg
// payload's validation reads as presentKeys does: every key its layouts
// require, and those checkShared reads. Each field of Payload and of its
// Rest is set alone, then all of them.
func TestModelKeys(t *testing.T) {
	read := kStopReason | kSender
	for _, mt := range modelTypes {
		read |= mt.lay.required
	}
	if read&^modelKeyMask != 0 {
		t.Fatalf("keys %b are read but not decided by modelKeys", read&^modelKeyMask)
	}
	check := func(what string, p *Payload) {
		t.Helper()
		if got, want := p.modelKeys()&modelKeyMask, p.presentKeys()&modelKeyMask; got != want {
			t.Errorf("%s: modelKeys = %b, presentKeys = %b", what, got, want)
		}
	}
	var all Payload
	all.Rest = new(Rest)
	for _, rt := range []reflect.Type{reflect.TypeFor[Payload](), reflect.TypeFor[Rest]()} {
		for i := range rt.NumField() {
			f := rt.Field(i)
			if !f.IsExported() || f.Name == "Rest" {
				continue
			}
			p := Payload{Rest: new(Rest)}
			for _, q := range []*Payload{&p, &all} {
				v := reflect.ValueOf(q).Elem()
				if rt == reflect.TypeFor[Rest]() {
					v = reflect.ValueOf(q.Rest).Elem()
				}
				if !fields.SetNonZero(v.Field(i)) {
					t.Fatalf("field %s: kind %s not covered", f.Name, f.Type.Kind())
				}
			}
			check(f.Name, &p)
		}
	}
	check("every field", &all)
	check("zero", &Payload{})
	check("decoded", &Payload{has: kDecoded | kSender | kText})
}

// TestCheckModelRules compares checkModel with the rules as PROTOCOL.md
// states them, for every model payload type, role, event and empty id or
// name, and for names that are not the package's constants.
func TestCheckModelRules(t *testing.T) {
	want := func(p *Payload) string {
		userOnly := p.Type == ImageURL || p.Type == ToolCallOutput || p.Type == PartialToolCallOutput
		either := p.Type == Text || p.Type == InlineData
		switch {
		case either && p.Role != RoleUser && p.Role != RoleAssistant:
			return "is not one of user|assistant"
		case userOnly && p.Role != RoleUser:
			return "must be user for " + p.Type
		case !either && !userOnly && p.Role != RoleAssistant:
			return "must be assistant for " + p.Type
		}
		if strings.HasPrefix(p.Type, "partial_") && p.EventType != EventStart && p.EventType != EventDelta && p.EventType != EventStop {
			return "is not one of start|delta|stop"
		}
		if (p.Type == ToolCall || p.Type == ToolCallOutput || strings.HasPrefix(p.Type, "partial_tool")) && p.ToolCallID == "" {
			return "must not be empty"
		}
		if p.Type == ToolCall && p.Name == "" {
			return "must not be empty"
		}
		return ""
	}
	for _, typ := range modelPayloadTypes {
		for _, role := range []string{RoleUser, RoleAssistant, "", "system", strings.Clone(RoleAssistant)} {
			for _, ev := range []string{EventStart, EventDelta, EventStop, "", "middle", strings.Clone(EventDelta)} {
				for _, id := range []string{"", "call_1"} {
					for _, name := range []string{"", "work"} {
						p := &Payload{Type: strings.Clone(typ), Role: role, EventType: ev, ToolCallID: id, Name: name}
						err := p.checkModel(modelTypeOf(p.Type))
						got := ""
						if err != nil {
							got = err.(*ValidationError).Msg
						}
						if w := want(p); got != w {
							t.Errorf("%+v: checkModel says %q, want %q", *p, got, w)
						}
					}
				}
			}
		}
	}
}
