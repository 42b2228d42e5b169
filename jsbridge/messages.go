//go:build js && wasm

package jsbridge

import (
	"unsafe"

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

// callBuf is the capacity the records of a tool call (appendCall) start
// with, for the approver and the tool: most calls fit, and one allocation
// replaces the four or more of a buffer grown from nothing (2–3% of a turn
// with many tool calls on WebAssembly, in a profile, when it was JSON).
const callBuf = 512

// appendCall appends the tool call m as records (records.go), which the
// shim reads into the object the approver and the tool receive, as
// JSON.parse reads its JSON: a tool call is a C record there, cheaper to
// write and to read than JSON (its arguments are a string of escaped
// JSON), and any call the records do not carry is a J or R record.
func appendCall(dst []byte, m *omni.Message) []byte {
	w := recordWriter{noHot: true}
	dst, _ = w.append(dst, m)
	return dst
}

// appendInput appends msgs, a request's new messages, as records, or as
// one JSON array (its first byte '[', which no record starts with) when a
// message other than the last is not valid UTF-8 as JSON: records put
// such a message only at a batch's end (an R record).
func appendInput(dst []byte, msgs []omni.Message) []byte {
	w := recordWriter{noHot: true}
	start := len(dst)
	for i := range msgs {
		var last bool
		if dst, last = w.append(dst, &msgs[i]); last && i+1 < len(msgs) {
			return appendArray(dst[:start], msgs)
		}
	}
	return dst
}

// encodeOne returns m as a JSON string.
func encodeOne(m omni.Message) string { return string(m.AppendJSON(nil)) }

// tokensJSON encodes token counts with the protocol's keys.
func tokensJSON(t omni.TokenCounts) string { return string(t.AppendJSON(nil)) }

// bytesArg returns the address and length of b in the module's memory, for
// a JavaScript function that reads it during the call (the shim's
// api.text): text crosses without a JavaScript string made by Go and the
// reference that comes with it. The caller keeps b alive until the call
// returns (runtime.KeepAlive).
func bytesArg(b []byte) (uintptr, int) {
	if len(b) == 0 {
		return 0, 0
	}
	return uintptr(unsafe.Pointer(unsafe.SliceData(b))), len(b)
}
