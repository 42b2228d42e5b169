//go:build js && wasm

package jsbridge

import (
	"bytes"
	"strconv"

	"github.com/floehq/floe/engine/omni"
)

// appendArray appends msgs as one JSON array.
func appendArray(dst []byte, msgs []omni.Message) []byte {
	dst = append(dst, '[')
	for i := range msgs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = msgs[i].AppendJSON(dst)
	}
	return append(dst, ']')
}

// encodeOne returns m as a JSON string.
func encodeOne(m omni.Message) string { return string(m.AppendJSON(nil)) }

// eachMessage decodes a JSON array of messages (as the shim writes it:
// JSON.stringify output) element by element into one reused Message and
// hands each to emit, in order. It stops at the first element that is not
// a message and returns its error, after emitting every element before it,
// so a producer's good messages are never lost. Decoding into one reused
// value avoids allocating a slice of large Message structs per batch, the
// main cost of a batch inside WebAssembly.
func eachMessage(data []byte, emit func(omni.Message)) error {
	els, ok := splitArray(data)
	if !ok {
		return &omni.DecodeError{Msg: "batch is not a JSON array"}
	}
	var m omni.Message
	for i, el := range els {
		if err := m.UnmarshalJSON(el); err != nil {
			return &indexError{i, err}
		}
		emit(m)
	}
	return nil
}

// splitArray returns the top-level elements of a JSON array, and false when
// data is not a complete array. Elements are not checked here (the decoder
// does that); strings may hold any bracket or comma. It never panics.
func splitArray(data []byte) ([][]byte, bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil, false
	}
	var out [][]byte
	depth, start := 0, i+1
	for i++; i < len(data); i++ {
		switch c := data[i]; c {
		case '"':
			end := stringEnd(data, i+1)
			if end < 0 {
				return nil, false
			}
			i = end
		case '{', '[':
			depth++
		case '}', ']':
			if depth > 0 {
				depth--
				continue
			}
			if c == '}' {
				return nil, false
			}
			el := trimSpace(data[start:i])
			if len(el) == 0 && len(out) > 0 {
				return nil, false // a trailing comma
			}
			if len(el) > 0 {
				out = append(out, el)
			}
			return out, skipSpace(data, i+1) == len(data)
		case ',':
			if depth > 0 {
				continue
			}
			el := trimSpace(data[start:i])
			if len(el) == 0 {
				return nil, false
			}
			out = append(out, el)
			start = i + 1
		}
	}
	return nil, false
}

// stringEnd returns the index of the quote that closes the string whose
// content starts at i, or -1.
func stringEnd(data []byte, i int) int {
	for {
		q := bytes.IndexByte(data[i:], '"')
		if q < 0 {
			return -1
		}
		q += i
		n := 0 // backslashes right before the quote
		for k := q - 1; k >= i && data[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q
		}
		i = q + 1
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// tokensJSON encodes token counts with the protocol's keys.
func tokensJSON(t omni.TokenCounts) string {
	b := []byte(`{"cache_read":`)
	b = strconv.AppendInt(b, t.CacheRead, 10)
	b = append(b, `,"cache_write":`...)
	b = strconv.AppendInt(b, t.CacheWrite, 10)
	b = append(b, `,"output":`...)
	b = strconv.AppendInt(b, t.Output, 10)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, t.Total, 10)
	return string(append(b, '}'))
}

// indexError names the element of a batch that failed to decode.
type indexError struct {
	i   int
	err error
}

func (e *indexError) Error() string { return "[" + strconv.Itoa(e.i) + "]: " + e.err.Error() }
func (e *indexError) Unwrap() error { return e.err }
