package omni

// JSON reading and writing for code outside the package that handles other
// JSON (the model adapters read provider events and write requests with
// it), on the package's own scanner and encoder.

// WalkJSON reads the JSON document data, validating it, and calls fn for
// every value in document order: once for each string ('"'), number ('0'),
// boolean ('t', 'f') and null ('n'), with val its raw bytes (a string with
// its quotes: see [JSONString]); and once at the end of each object ('}')
// and array (']'), with val the container's raw bytes. path names the
// value: object keys joined by '.', an array element adds "[]"
// ("choices[].delta.content"); the root is "". path is valid only during
// the call; val is a slice of data. An error from fn stops the walk and is returned.
func WalkJSON(data []byte, fn func(path []byte, kind byte, val []byte) error) error {
	w := walker{s: scanner{data: data}, fn: fn}
	if err := w.value(make([]byte, 0, 64)); err != nil {
		return err
	}
	return w.s.end()
}

type walker struct {
	s  scanner
	fn func(path []byte, kind byte, val []byte) error
}

func (w *walker) value(path []byte) error {
	s := &w.s
	c := s.peek()
	start := s.i
	switch c {
	case '{', '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		more, err := s.open("", closer)
		base := len(path)
		for more && err == nil {
			path = path[:base]
			if c == '{' {
				var k []byte
				if k, err = s.key(""); err != nil {
					return err
				}
				if base > 0 {
					path = append(path, '.')
				}
				path = append(path, k...)
			} else {
				path = append(path, "[]"...)
			}
			if err = w.value(path); err != nil {
				return err
			}
			more, err = s.next("", closer)
		}
		if err != nil {
			return err
		}
		return w.fn(path[:base], closer, s.data[start:s.i])
	case '"':
		if _, _, err := s.scanString(""); err != nil {
			return err
		}
	default:
		if err := s.skip(""); err != nil {
			return err
		}
		if kind := kindOf(c); kind == "number" {
			c = '0'
		}
	}
	return w.fn(path, c, s.data[start:s.i])
}

// JSONString returns the value of a raw JSON string (with its quotes), or
// "" when raw is not a string.
func JSONString(raw []byte) string {
	s := scanner{data: raw}
	v, err := s.str("")
	if err != nil {
		return ""
	}
	return v
}

// JSONInt returns the value of a raw JSON integer, or 0.
func JSONInt(raw []byte) int64 {
	s := scanner{data: raw}
	n, err := s.integer("")
	if err != nil {
		return 0
	}
	return n
}

// ValidJSON reports whether data is exactly one JSON value.
func ValidJSON(data []byte) bool {
	s := scanner{data: data}
	return s.skip("") == nil && s.end() == nil
}

// IsJSONObject reports whether data is exactly one JSON object.
func IsJSONObject(data []byte) bool {
	s := scanner{data: data}
	return s.peek() == '{' && s.skip("") == nil && s.end() == nil
}

// AppendJSONString appends s as a JSON string, escaping as JSON.stringify
// does (invalid UTF-8 becomes U+FFFD).
func AppendJSONString(dst []byte, s string) []byte { return appendString(dst, s) }
