//go:build js && wasm

package jsbridge

import (
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

// decodeBatch decodes a JSON array of messages. When an element is not a
// message it returns the elements before it together with the error, so a
// producer's good messages are never lost.
func decodeBatch(data string) ([]omni.Message, error) {
	msgs, err := omni.DecodeArray([]byte(data))
	if err == nil {
		return msgs, nil
	}
	for _, el := range splitArray([]byte(data)) {
		m, e := omni.Decode(el)
		if e != nil {
			break
		}
		msgs = append(msgs, m)
	}
	return msgs, err
}

// splitArray returns the top-level elements of a JSON array written by
// JSON.stringify (no whitespace needed, but tolerated). It stops at the
// first thing it cannot follow; it never panics.
func splitArray(data []byte) [][]byte {
	var out [][]byte
	if len(data) < 2 || data[0] != '[' {
		return nil
	}
	depth, start, inStr := 0, 1, false
	for i := 1; i < len(data); i++ {
		c := data[i]
		switch {
		case inStr:
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth == 0 { // the closing bracket of the array
				if i > start {
					out = append(out, data[start:i])
				}
				return out
			}
			depth--
		case c == ',' && depth == 0:
			out = append(out, data[start:i])
			start = i + 1
		}
	}
	return out
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
