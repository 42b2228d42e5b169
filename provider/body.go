package provider

import (
	"strconv"

	"github.com/floehq/floe/engine/omni"
)

// JSONWriter builds a JSON request body by appending. Commas are placed
// automatically: every key and every value after the first in its object
// or array gets one.
type JSONWriter struct{ B []byte }

func (w *JSONWriter) sep() {
	if n := len(w.B); n > 0 {
		switch w.B[n-1] {
		case '{', '[', ':':
		default:
			w.B = append(w.B, ',')
		}
	}
}

// Open starts an object ('{') or array ('[').
func (w *JSONWriter) Open(c byte) { w.sep(); w.B = append(w.B, c) }

// Close ends an object ('}') or array (']').
func (w *JSONWriter) Close(c byte) { w.B = append(w.B, c) }

// Key writes an object key.
func (w *JSONWriter) Key(k string) {
	w.sep()
	w.B = omni.AppendJSONString(w.B, k)
	w.B = append(w.B, ':')
}

// Str writes a string value.
func (w *JSONWriter) Str(s string) { w.sep(); w.B = omni.AppendJSONString(w.B, s) }

// Int writes an integer value.
func (w *JSONWriter) Int(n int64) { w.sep(); w.B = strconv.AppendInt(w.B, n, 10) }

// Bool writes true or false.
func (w *JSONWriter) Bool(b bool) { w.sep(); w.B = strconv.AppendBool(w.B, b) }

// Raw writes raw JSON, which must be one valid value.
func (w *JSONWriter) Raw(raw []byte) { w.sep(); w.B = append(w.B, raw...) }

// KeyStr writes "k":"s".
func (w *JSONWriter) KeyStr(k, s string) { w.Key(k); w.Str(s) }

// Members writes the members of the JSON object obj into the object being
// written (Options.ExtraBody). It reports false when obj is not an object.
func (w *JSONWriter) Members(obj []byte) bool {
	r := omni.NewJSONReader(obj)
	if r.Kind() != "object" {
		return false
	}
	ok := r.Object(func(k []byte) error {
		raw, err := r.Raw()
		if err == nil {
			w.Key(string(k))
			w.Raw(raw)
		}
		return err
	}) == nil && r.End() == nil
	return ok
}

// ObjectOr returns args if it is a JSON object, else "{}": tool arguments
// that providers want as an object (a call cut short may have left them
// unfinished).
func ObjectOr(args string) []byte {
	b := []byte(args)
	r := omni.NewJSONReader(b)
	if r.Kind() == "object" && r.Skip() == nil && r.End() == nil {
		return b
	}
	return []byte("{}")
}

// Schema returns a tool's parameters, or the empty object schema when it
// has none.
func Schema(t *omni.ToolDefinition) []byte {
	if len(t.Parameters) == 0 || !omni.ValidJSON(t.Parameters) {
		return []byte(`{"type":"object","properties":{}}`)
	}
	return t.Parameters
}
