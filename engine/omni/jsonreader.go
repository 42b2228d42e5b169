package omni

// JSONReader walks one JSON document with the package's scanner, for code
// outside the package that decodes other JSON (the model adapters read
// provider events with it). It validates as it reads. Errors are
// *DecodeError values naming the offset.
//
// A JSONReader reads values in document order: Object and Array call their
// function once per member or element, which must read (or Skip) exactly
// that value.
type JSONReader struct{ s scanner }

// NewJSONReader returns a reader of data, which it does not copy.
func NewJSONReader(data []byte) *JSONReader {
	r := &JSONReader{}
	r.Reset(data)
	return r
}

// Reset starts reading data.
func (r *JSONReader) Reset(data []byte) { r.s = scanner{data: data} }

// Kind names the type of the next value: "object", "array", "string",
// "number", "boolean", "null", or "" at the end or before a syntax error.
func (r *JSONReader) Kind() string { return kindOf(r.s.peek()) }

// Null consumes a null if one is next and reports whether it did.
func (r *JSONReader) Null() bool { return r.s.null() }

// Object reads an object, calling fn with each key. The key's bytes are
// valid only during the call.
func (r *JSONReader) Object(fn func(key []byte) error) error {
	s := &r.s
	if s.peek() != '{' {
		return s.typeErr("", "object")
	}
	more, err := s.open("", '}')
	for more && err == nil {
		var k []byte
		if k, err = s.key(""); err != nil {
			break
		}
		if err = fn(k); err != nil {
			break
		}
		more, err = s.next("", '}')
	}
	return err
}

// Array reads an array, calling fn with each element's index.
func (r *JSONReader) Array(fn func(i int) error) error {
	s := &r.s
	if s.peek() != '[' {
		return s.typeErr("", "array")
	}
	more, err := s.open("", ']')
	for i := 0; more && err == nil; i++ {
		if err = fn(i); err != nil {
			break
		}
		more, err = s.next("", ']')
	}
	return err
}

// Str reads a string; null reads as "".
func (r *JSONReader) Str() (string, error) {
	if r.s.null() {
		return "", nil
	}
	return r.s.str("")
}

// Int reads an integer; null reads as 0.
func (r *JSONReader) Int() (int64, error) {
	if r.s.null() {
		return 0, nil
	}
	return r.s.integer("")
}

// Bool reads true or false; null reads as false.
func (r *JSONReader) Bool() (bool, error) {
	switch r.s.peek() {
	case 't':
		return true, r.s.literal("", "true")
	case 'f':
		return false, r.s.literal("", "false")
	case 'n':
		r.s.null()
		return false, nil
	}
	return false, r.s.typeErr("", "boolean")
}

// Skip validates and skips one value.
func (r *JSONReader) Skip() error { return r.s.skip("") }

// Raw reads one value and returns a copy of its bytes.
func (r *JSONReader) Raw() (RawJSON, error) { return r.s.raw("") }

// End reports an error unless only white space remains.
func (r *JSONReader) End() error { return r.s.end() }

// ValidJSON reports whether data is exactly one JSON value.
func ValidJSON(data []byte) bool {
	r := JSONReader{s: scanner{data: data}}
	return r.Skip() == nil && r.End() == nil
}

// AppendJSONString appends s as a JSON string, escaping as JSON.stringify
// does (invalid UTF-8 becomes U+FFFD).
func AppendJSONString(dst []byte, s string) []byte { return appendString(dst, s) }
