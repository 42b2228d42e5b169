package omni

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/floehq/floe/internal/errf"
)

// maxDepth caps the nesting of objects and arrays the decoder accepts, the
// envelope itself included, so hostile input cannot exhaust the stack.
const maxDepth = 512

// scanner is a single-pass JSON reader over one input buffer. It validates
// as it goes; strings are copied out of the input (the caller may reuse it),
// and values kept raw are copied byte for byte.
type scanner struct {
	data  []byte
	i     int
	depth int
	pair  *[2]TokenCounts // storage for token_usage's session and request

	extraSeen map[string]struct{} // unknown keys of the current payload, once there are many
}

// plainByte[c] is true for bytes that may appear unescaped in a JSON string
// and need no further check: printable ASCII except '"' and '\\'.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func (s *scanner) ws() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek skips white space and returns the next byte, or 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.data) {
		return s.data[s.i]
	}
	return 0
}

// syntaxErr reports the byte at s.i as unexpected.
func (s *scanner) syntaxErr(path string) error {
	if s.i >= len(s.data) {
		return &DecodeError{Field: path, Msg: "invalid JSON: unexpected end of input"}
	}
	c := s.data[s.i]
	what := errf.QuoteRune(rune(c))
	if c >= utf8.RuneSelf {
		what = "byte 0x" + strconv.FormatUint(uint64(c), 16)
	}
	return &DecodeError{Field: path, Msg: "invalid JSON: unexpected " + what + " at offset " + strconv.Itoa(s.i)}
}

// typeErr reports that the value at s.i is not of the wanted JSON type.
func (s *scanner) typeErr(path, want string) error {
	c := s.peek()
	if c == 0 || kindOf(c) == "" {
		return s.syntaxErr(path)
	}
	return &DecodeError{Field: path, Msg: "want " + want + ", got " + kindOf(c)}
}

// kindOf names the JSON type that starts with byte c, or "" if none does.
func kindOf(c byte) string {
	switch {
	case c == '"':
		return "string"
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == 't' || c == 'f':
		return "boolean"
	case c == 'n':
		return "null"
	case c == '-' || c >= '0' && c <= '9':
		return "number"
	}
	return ""
}

// enter and leave track object/array nesting.
func (s *scanner) enter(path string) error {
	s.depth++
	if s.depth > maxDepth {
		return &DecodeError{Field: path, Msg: "invalid JSON: nesting deeper than " + strconv.Itoa(maxDepth) + " levels at offset " + strconv.Itoa(s.i)}
	}
	s.i++
	return nil
}

func (s *scanner) leave() { s.depth--; s.i++ }

// scanString reads the string at s.i, which must start with '"', and
// returns its content between the quotes. plain reports that the content
// is already its own value: no escapes and valid UTF-8.
func (s *scanner) scanString(path string) (raw []byte, plain bool, err error) {
	data := s.data
	start := s.i + 1
	i := start
	ascii, esc := true, false
	for {
		for i < len(data) && plainByte[data[i]] {
			i++
		}
		if i >= len(data) {
			s.i = i
			return nil, false, s.syntaxErr(path)
		}
		switch c := data[i]; {
		case c == '"':
			raw = data[start:i]
			s.i = i + 1
			return raw, !esc && (ascii || utf8.Valid(raw)), nil
		case c == '\\':
			esc = true
			if i+1 >= len(data) {
				s.i = len(data)
				return nil, false, s.syntaxErr(path)
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(data) || hex4(data[i+2:i+6]) < 0 {
					s.i = i
					return nil, false, &DecodeError{Field: path, Msg: "invalid JSON: bad \\u escape at offset " + strconv.Itoa(i)}
				}
				i += 6
			default:
				s.i = i + 1
				return nil, false, s.syntaxErr(path)
			}
		case c < 0x20:
			s.i = i
			return nil, false, s.syntaxErr(path)
		default: // c >= 0x80; validated once the string ends
			ascii = false
			i++
		}
	}
}

// hex4 returns the value of four hex digits, or -1.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// unescape returns the value of the string content raw, whose escapes
// were validated by scanString. Like encoding/json it turns invalid UTF-8
// and unpaired surrogates into U+FFFD. The result costs one allocation.
func unescape(raw []byte) string {
	var b strings.Builder
	b.Grow(len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '\\' && raw[i+1] == 'u':
			r := hex4(raw[i+2:])
			i += 6
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					r2 = hex4(raw[i+2:])
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					r = dec
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			b.WriteRune(r)
		case c == '\\':
			b.WriteByte(unescapeByte[raw[i+1]])
			i += 2
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
		default:
			r, size := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && size == 1 {
				b.WriteRune(utf8.RuneError)
			} else {
				b.Write(raw[i : i+size])
			}
			i += size
		}
	}
	return b.String()
}

// unescapeByte maps the letter of a one-character escape to its byte.
var unescapeByte = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// str reads a string value.
func (s *scanner) str(path string) (string, error) {
	if s.peek() != '"' {
		return "", s.typeErr(path, "string")
	}
	raw, plain, err := s.scanString(path)
	if err != nil {
		return "", err
	}
	if plain {
		return string(raw), nil
	}
	return unescape(raw), nil
}

// enum reads a string value that is usually one of the protocol's fixed
// strings; those are returned without allocating.
func (s *scanner) enum(path string) (string, error) {
	if s.peek() != '"' {
		return "", s.typeErr(path, "string")
	}
	raw, plain, err := s.scanString(path)
	if err != nil {
		return "", err
	}
	if !plain {
		return unescape(raw), nil
	}
	return intern(raw), nil
}

// key reads an object key and the ':' after it. The returned bytes alias
// the input unless the key had escapes.
func (s *scanner) key(path string) ([]byte, error) {
	if s.peek() != '"' {
		return nil, s.syntaxErr(path)
	}
	raw, plain, err := s.scanString(path)
	if err != nil {
		return nil, err
	}
	if !plain {
		raw = []byte(unescape(raw))
	}
	if s.peek() != ':' {
		return nil, s.syntaxErr(path)
	}
	s.i++
	return raw, nil
}

// next is called after a member of an object (close = '}') or an element
// of an array (close = ']'): it consumes ',' and reports true, or consumes
// close and reports false.
func (s *scanner) next(path string, close byte) (more bool, err error) {
	switch s.peek() {
	case ',':
		s.i++
		return true, nil
	case close:
		s.leave()
		return false, nil
	}
	return false, s.syntaxErr(path)
}

// open consumes the '{' or '[' at s.i and reports whether the container
// has members (false: it was empty and is consumed entirely).
func (s *scanner) open(path string, close byte) (bool, error) {
	if err := s.enter(path); err != nil {
		return false, err
	}
	if s.peek() == close {
		s.leave()
		return false, nil
	}
	return true, nil
}

// skip validates and skips one JSON value of any type.
func (s *scanner) skip(path string) error {
	switch c := s.peek(); c {
	case '{':
		more, err := s.open(path, '}')
		for more && err == nil {
			if _, err = s.key(path); err == nil {
				if err = s.skip(path); err == nil {
					more, err = s.next(path, '}')
				}
			}
		}
		return err
	case '[':
		more, err := s.open(path, ']')
		for more && err == nil {
			if err = s.skip(path); err == nil {
				more, err = s.next(path, ']')
			}
		}
		return err
	case '"':
		_, _, err := s.scanString(path)
		return err
	case 't':
		return s.literal(path, "true")
	case 'f':
		return s.literal(path, "false")
	case 'n':
		return s.literal(path, "null")
	}
	_, err := s.number(path)
	return err
}

// raw skips one value and returns a copy of its bytes.
func (s *scanner) raw(path string) ([]byte, error) {
	s.ws()
	start := s.i
	if err := s.skip(path); err != nil {
		return nil, err
	}
	return append([]byte(nil), s.data[start:s.i]...), nil
}

func (s *scanner) literal(path, lit string) error {
	if len(s.data)-s.i < len(lit) || string(s.data[s.i:s.i+len(lit)]) != lit {
		for j := 0; j < len(lit) && s.i < len(s.data) && s.data[s.i] == lit[j]; j++ {
			s.i++
		}
		return s.syntaxErr(path)
	}
	s.i += len(lit)
	return nil
}

// null consumes a null literal if one is next.
func (s *scanner) null() bool {
	if s.peek() == 'n' && len(s.data)-s.i >= 4 && string(s.data[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// number reads a number (JSON grammar) and returns its bytes.
func (s *scanner) number(path string) ([]byte, error) {
	data, start := s.data, s.i
	i := start
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && data[i] >= '1' && data[i] <= '9':
		i = digits(data, i)
	default:
		s.i = i
		return nil, s.syntaxErr(path)
	}
	if i < len(data) && data[i] == '.' {
		if j := digits(data, i+1); j > i+1 {
			i = j
		} else {
			s.i = i + 1
			return nil, s.syntaxErr(path)
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if j := digits(data, i); j > i {
			i = j
		} else {
			s.i = i
			return nil, s.syntaxErr(path)
		}
	}
	s.i = i
	return data[start:i], nil
}

func digits(data []byte, i int) int {
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		i++
	}
	return i
}

// integer reads a number that must have an integral value in int64 range.
// Like encoding/json into a json.Number, 3.0 and 3e2 are accepted.
func (s *scanner) integer(path string) (int64, error) {
	if kindOf(s.peek()) != "number" {
		return 0, s.typeErr(path, "integer")
	}
	b, err := s.number(path)
	if err != nil {
		return 0, err
	}
	if n, ok := parseInt(b); ok {
		return n, nil
	}
	n, ok := integral(b)
	if !ok {
		return 0, &DecodeError{Field: path, Msg: "want integer, got " + string(b)}
	}
	return n, nil
}

// parseInt parses an optionally negative run of decimal digits without
// overflow; ok is false for anything else.
func parseInt(b []byte) (n int64, ok bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	switch {
	case neg && u <= 1<<63:
		return -int64(u), true
	case !neg && u < 1<<63:
		return int64(u), true
	}
	return 0, false
}

// strs reads an array of strings; [] gives a non-nil empty slice.
func (s *scanner) strs(path string) ([]string, error) {
	if s.peek() != '[' {
		return nil, s.typeErr(path, "array of strings")
	}
	more, err := s.open(path, ']')
	out := []string{}
	for more && err == nil {
		var v string
		if v, err = s.str(path); err != nil {
			return nil, elemErr(err, path, len(out))
		}
		out = append(out, v)
		more, err = s.next(path, ']')
	}
	return out, err
}

// elemErr rewrites the path of an error about element i of the array at
// path to name the element ("origin[2]").
func elemErr(err error, path string, i int) error {
	return renameErr(err, path, path+"["+strconv.Itoa(i)+"]")
}

// renameErr rewrites the path of a decode error reported at path to to.
// Nested values are decoded with their container's path so that the path
// of the value itself is only built when there is an error.
func renameErr(err error, path, to string) error {
	if de, ok := err.(*DecodeError); ok && de.Field == path {
		de.Field = to
	}
	return err
}
