package provider

import (
	"errors"
	"strconv"
	"strings"

	"github.com/floehq/floe/engine/omni"
)

// JSONWriter builds a JSON request body by appending. Commas are placed
// automatically: anything written after a complete value gets one first.
type JSONWriter struct{ B []byte }

//go:noinline
func (w *JSONWriter) sep() {
	if n := len(w.B); n > 0 {
		switch w.B[n-1] {
		case '{', '[', ':', ',':
		default:
			w.B = append(w.B, ',')
		}
	}
}

// Lit writes raw JSON text: a key, an opening, a whole value or a mix
// (`{"type":"text","text":`).
//
//go:noinline
func (w *JSONWriter) Lit(s string) {
	if s != "" && s[0] != '}' && s[0] != ']' {
		w.sep()
	}
	w.B = append(w.B, s...)
}

// Close ends an object ('}') or array (']').
//
//go:noinline
func (w *JSONWriter) Close(c byte) { w.B = append(w.B, c) }

// Str writes a string value.
//
//go:noinline
func (w *JSONWriter) Str(s string) { w.sep(); w.B = omni.AppendJSONString(w.B, s) }

// KeyStr writes "k":"s".
//
//go:noinline
func (w *JSONWriter) KeyStr(k, s string) {
	w.sep()
	w.B = omni.AppendJSONString(w.B, k)
	w.B = append(w.B, ':')
	w.B = omni.AppendJSONString(w.B, s)
}

// KeyRaw writes "k":raw; raw must be one JSON value.
//
//go:noinline
func (w *JSONWriter) KeyRaw(k string, raw []byte) {
	w.sep()
	w.B = omni.AppendJSONString(w.B, k)
	w.B = append(w.B, ':')
	w.B = append(w.B, raw...)
}

// KeyInt writes "k":n.
func (w *JSONWriter) KeyInt(k string, n int64) { w.KeyRaw(k, strconv.AppendInt(nil, n, 10)) }

// Members writes the members of the JSON object obj into the object being
// written (Options.ExtraBody); obj must be a JSON object.
func (w *JSONWriter) Members(obj []byte) {
	i, j := 0, len(obj)
	for i < j && obj[i] != '{' {
		i++
	}
	for j > i && obj[j-1] != '}' {
		j--
	}
	if j-i > 2 {
		inner := obj[i+1 : j-1]
		for len(inner) > 0 && inner[0] <= ' ' {
			inner = inner[1:]
		}
		if len(inner) > 0 {
			w.Lit(string(inner))
		}
	}
}

// Fidelity returns the object {key: value}.
func Fidelity(key, value string) omni.RawJSON {
	w := JSONWriter{}
	w.Lit("{")
	w.KeyStr(key, value)
	w.Close('}')
	return w.B
}

// EndpointKey is the key of a fidelity object that names the endpoint
// whose reply it came in (Conversation.Mark), put beside the
// provider-specific reasoning an adapter keeps (a signature, an encrypted
// item, reasoning_content): that reasoning goes back to that endpoint
// only. Readers of a Trace that do not know it ignore it, as they do
// the rest of a fidelity object.
const EndpointKey = "endpoint"

// Stamp returns the fidelity object f, one of the adapter's own (written
// without spaces), with the member that names the endpoint the reply came
// from (unchanged when the Emitter has none).
func (e *Emitter) Stamp(f omni.RawJSON) omni.RawJSON {
	if e.mark == "" || len(f) < 3 {
		return f
	}
	return append(append(append(f[:len(f)-1:len(f)-1], ','), e.mark...), '}')
}

// FromEndpoint reports whether the reasoning kept in the fidelity object
// f may go to the endpoint of mark (a Conversation's Mark): f names it as
// the endpoint that made it, or names none (a Trace written before the
// marker: sent as it was then). Fidelity is kept byte for byte (PROTOCOL.md
// P-5), so the member is found as Stamp wrote it.
//
//go:noinline
func FromEndpoint(f omni.RawJSON, mark string) bool {
	s := string(f)
	return strings.Contains(s, mark) || !strings.Contains(s, `"`+EndpointKey+`":`)
}

// ObjectOr returns args if it is a JSON object, else "{}": tool arguments
// that providers want as an object (a call cut short may have left them
// unfinished).
func ObjectOr(args string) []byte {
	if b := []byte(args); omni.IsJSONObject(b) {
		return b
	}
	return []byte("{}")
}

// Schema returns a tool's parameters, or the empty object schema when it
// has none.
func Schema(t *omni.ToolDefinition) []byte {
	if !omni.IsJSONObject(t.Parameters) {
		return []byte(`{"type":"object","properties":{}}`)
	}
	return t.Parameters
}

// OwnMember returns an error naming the first member of the JSON object
// body (an Options.ExtraBody) that the adapter writes itself, so that it
// would go twice in a request body, or nil. own lists the adapter's
// members, each as ";name=what sets it" ("" for nothing), and ends in
// ";".
func OwnMember(api string, body omni.RawJSON, own string) error {
	var err error
	omni.WalkJSON(body, func(path []byte, kind byte, val []byte) error {
		if k := strings.Index(own, ";"+string(path)+"="); k >= 0 && err == nil {
			hint := own[k+len(path)+2:]
			hint = hint[:strings.IndexByte(hint, ';')]
			msg := api + ": Options.ExtraBody." + string(path) + ": the adapter writes it"
			if hint != "" {
				msg += " (set " + hint + ")"
			}
			err = errors.New(msg)
		}
		return err
	})
	return err
}
