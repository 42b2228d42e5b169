// No build constraint: the codec builds natively too, to be fuzzed.

package jsbridge

import (
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/floehq/floe/engine/omni"
)

// Records: the form of a batch of messages in both directions.
//
// A batch is one string of records. Every string inside a record is
// length-prefixed, "<n>:<text>", where n counts UTF-16 code units (the
// String length of JavaScript), so the shim slices with it directly. The
// streamed fragments that make up almost all of a run's traffic, and the
// complete text, thinking, tool_call and tool_call_output messages a
// model or tool yields after them, travel without JSON; every other
// message travels as JSON in a J record. The shim writes such a record
// only for a plain object with exactly the standard keys and string values
// (and a non-empty tool_call_id, and a tool_call's non-empty name, which
// validation would otherwise report differently), and the bridge only for
// a message whose payload was not decoded from JSON (see fragmentOf):
// both sides then agree with the JSON path on every key and value, and on
// validation (records_test.go compares them). A token_usage event, which
// most models yield once a request, travels as a U record on the same
// terms: its eight counts non-negative integers JavaScript holds exactly.
//
//	J <str:json>                               any message, as JSON
//	R <json>                                   consumer side only: the last message of the batch, as JSON (see appendRecord)
//	t <str:timestamp>                          the timestamp of the records that follow in the batch ("" at its start)
//	T|K <event> <role> <str:body> <stop>   partial_text / partial_thinking, or text / thinking
//	C <event> <role> <str:arguments> <str:tool_call_id> <str:name> <stop>
//	O <event> <role> <str:output> <str:tool_call_id> <stop>
//	U <n>,<n>,<n>,<n>,<n>,<n>,<n>,<n>;          token_usage: session's cache_read, cache_write, output and total, then request's (decimal)
//	E b                                        consumer side only: request_begin
//	E e <stop>                                 consumer side only: request_end with its status alone (not empty)
//	E a <decision> <str:tool_call_id>          consumer side only: approval_decision; decision a, d or f (allow, deny, forbidden)
//
// event is s, d or x (start, delta, stop) for a fragment, c for the
// complete message (no event_type); role is a or u (assistant, user); stop
// is one byte for no stop_reason key (-) or a standard status (c, f, a, t,
// m, h: completed, failed, aborted, timeout, malformed, auth), else a
// <str> (its length's first byte is a digit). Nearly every fragment
// carries "completed": one byte instead of eleven, which the reader gives
// as the package's constant, so validation compares it by address.
const (
	recJSON       = 'J'
	recRest       = 'R'
	recTime       = 't'
	recText       = 'T'
	recThinking   = 'K'
	recToolCall   = 'C'
	recToolOutput = 'O'
	recUsage      = 'U'
	recEvent      = 'E' // the engine's own events, Go → JavaScript only
	recComplete   = 'c' // the event of a complete message's record
)

// ---- JavaScript → Go ------------------------------------------------------------

// recordReader reads the records of one producer batch. It never panics;
// on bad input its methods report false.
type recordReader struct {
	s    string
	i    int
	code byte // the stop code stop last read; 0: a string
	body int  // where the body of the fragment last read ends
}

// str reads "<n>:<text>".
func (r *recordReader) str() (string, bool) {
	n, i, s := 0, r.i, r.s
	for ; i < len(s) && s[i] != ':'; i++ {
		c := s[i]
		if c < '0' || c > '9' || n > len(s) {
			return "", false
		}
		n = n*10 + int(c-'0')
	}
	if i >= len(s) {
		return "", false
	}
	start, u := i+1, 0
	// n ASCII bytes are n units (the usual case, checked 8 bytes at a time)
	// when the byte after them does not continue a sequence.
	if end := start + n; end <= len(s) && isASCII(s[start:end]) && (end == len(s) || s[end]&0xC0 != 0x80) {
		r.i = end
		return s[start:end], true
	}
	// Take n UTF-16 code units: a byte that does not continue a UTF-8
	// sequence starts one unit, or two (a surrogate pair) from 0xF0 on.
	for i = start; i < len(s); i++ {
		if c := s[i]; c&0xC0 != 0x80 {
			if u >= n {
				break
			}
			u++
			if c >= 0xF0 {
				u++
			}
		}
	}
	if u < n {
		return "", false
	}
	r.i = i
	return s[start:i], true
}

// fragment reads a fragment (or complete message) record of kind k (its
// tag already read) into m, with timestamp ts (from the batch's last t
// record). clean says that m holds only fragment fields (every one of
// which is set here), so m need not be zeroed first.
func (r *recordReader) fragment(k byte, m *omni.Message, clean bool, ts string) bool {
	if r.i+2 > len(r.s) {
		return false
	}
	complete := r.s[r.i] == recComplete
	ev, role := eventName(r.s[r.i]), roleName(r.s[r.i+1])
	r.i += 2
	n := 2 // strings: body, (tool_call_id, (name,)) stop_reason
	switch k {
	case recToolCall:
		n = 4
	case recToolOutput:
		n = 3
	}
	var strs [4]string
	for i := range n - 1 {
		var ok bool
		if strs[i], ok = r.str(); !ok {
			return false
		}
		if i == 0 {
			r.body = r.i
		}
	}
	var ok bool
	if strs[n-1], ok = r.stop(); !ok {
		return false
	}
	if (ev == "" && !complete) || role == "" {
		return false
	}
	if !clean {
		*m = omni.Message{}
	}
	m.Timestamp, m.Type = ts, omni.TypeModelMsg
	p := &m.Payload
	p.EventType, p.Role, p.StopReason = ev, role, strs[n-1]
	p.Text, p.Thinking, p.Arguments, p.Output, p.ToolCallID, p.Name = "", "", "", "", "", ""
	// The types are the package's constants, which the engine's
	// comparisons recognize by address (a complete message is a text,
	// thinking, tool_call or tool_call_output).
	switch k {
	case recText:
		p.Type, p.Text = pick(complete, omni.Text, omni.PartialText), strs[0]
	case recThinking:
		p.Type, p.Thinking = pick(complete, omni.Thinking, omni.PartialThinking), strs[0]
	case recToolCall:
		p.Type, p.Arguments, p.ToolCallID, p.Name = pick(complete, omni.ToolCall, omni.PartialToolCall), strs[0], strs[1], strs[2]
	default: // recToolOutput
		p.Type, p.Output, p.ToolCallID = pick(complete, omni.ToolCallOutput, omni.PartialToolCallOutput), strs[0], strs[1]
	}
	return true
}

// stop reads a record's stop_reason: its one-byte code (see stopCode),
// which gives the package's constant, or a string.
func (r *recordReader) stop() (string, bool) {
	if r.i < len(r.s) {
		r.code = r.s[r.i]
		if r.code == 'c' { // the usual one
			r.i++
			return omni.StatusCompleted, true
		}
		if s, ok := stopName(r.code); ok {
			r.i++
			return s, true
		}
	}
	r.code = 0
	return r.str()
}

// maxExact is the largest integer a JavaScript number holds exactly
// (Number.MAX_SAFE_INTEGER): a U record carries counts up to it.
const maxExact = 1<<53 - 1

// usage reads a token_usage record (its tag already read) into m, with
// timestamp ts: eight decimal counts, each ended by ',' or, the last, ';'.
func (r *recordReader) usage(m *omni.Message, ts string) bool {
	var v [8]int64
	for i := range v {
		n, j, s := int64(0), r.i, r.s
		for ; j < len(s) && s[j] >= '0' && s[j] <= '9' && n <= maxExact; j++ {
			n = n*10 + int64(s[j]-'0')
		}
		end := byte(',')
		if i == len(v)-1 {
			end = ';'
		}
		if j == r.i || j >= len(s) || s[j] != end || n > maxExact {
			return false
		}
		v[i], r.i = n, j+1
	}
	*m = omni.Message{Timestamp: ts, Type: omni.TypeEventMsg, Payload: omni.Payload{Type: omni.TokenUsage, Rest: omni.UsageRest(
		omni.TokenCounts{CacheRead: v[0], CacheWrite: v[1], Output: v[2], Total: v[3]},
		omni.TokenCounts{CacheRead: v[4], CacheWrite: v[5], Output: v[6], Total: v[7]},
	)}}
	return true
}

// pick returns a when c holds, else b.
func pick(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}

// eachRecord decodes a producer batch into one reused Message and hands
// each message to emit, in order. It stops at the first record that is not
// a message and returns its error, after emitting every message before it,
// so a producer's good messages are never lost. Decoding into one reused
// value avoids allocating a large Message per message; fragment bodies
// are substrings of data, not copies.
func eachRecord(data string, emit func(omni.Message)) error {
	return eachRecordAt(data, nil, &emitter{emit: emit})
}

// eachRecordAt is eachRecord, giving a message without a timestamp the
// batch's stamp (st.get; none for a nil st), and the reused message to
// out, which copies it.
func eachRecordAt(data string, st *batchStamp, out *emitter) error {
	r := recordReader{s: data}
	var m omni.Message
	clean := true
	ts := ""
	// hot: the head (kind, event, role) and stop byte of the last record,
	// a fragment record with a one-byte stop read into m, which the next
	// messages share while their records start and end alike: only the
	// body then changes (most of a stream is deltas of one fragment). mid
	// is the record's bytes between its body and its stop: a C or O
	// record's tool_call_id (and name), which m keeps.
	var hot [4]byte
	mid := ""
	for i := 0; r.i < len(data); i++ {
		if j := r.i; hot[0] != 0 && j+5 < len(data) && data[j] == hot[0] && data[j+1] == hot[1] && data[j+2] == hot[2] &&
			data[j+3]-'0' < 10 {
			if n := int(data[j+3] - '0'); len(mid) == 0 && data[j+4] == ':' {
				// A body of up to 9 ASCII bytes and the stop: a text or
				// thinking delta, most of a stream.
				if j+5+n < len(data) && data[j+5+n] == hot[3] && isASCII(data[j+5:j+5+n]) {
					if hot[0] == recText {
						m.Payload.Text = data[j+5 : j+5+n]
					} else {
						m.Payload.Thinking = data[j+5 : j+5+n]
					}
					r.i = j + 6 + n
					out.add(&m)
					continue
				}
			} else if b, e, ok := hotRecord(data, j, mid, hot[3]); ok {
				setBody(&m.Payload, hot[0], data[b:e])
				r.i = e + len(mid) + 1
				out.add(&m)
				continue
			}
		}
		hot[0] = 0
		start := r.i
		k := data[r.i]
		r.i++
		ok := false
		switch k {
		case recTime: // not a message: i counts messages
			if ts, ok = r.str(); ok {
				i--
				continue
			}
		case recJSON:
			var j string
			if j, ok = r.str(); ok {
				clean = false
				if err := m.UnmarshalJSON([]byte(j)); err != nil {
					return &indexError{i: i, err: err}
				}
				if m.Timestamp == "" {
					m.Timestamp = st.get()
				}
			}
		case recText, recThinking, recToolCall, recToolOutput:
			t := ts
			if t == "" {
				t = st.get()
			}
			ok = r.fragment(k, &m, clean, t)
			clean = ok
			if ok && r.code != 0 {
				hot, mid = [4]byte{k, data[start+1], data[start+2], r.code}, data[r.body:r.i-1]
			}
		case recUsage:
			t := ts
			if t == "" {
				t = st.get()
			}
			ok = r.usage(&m, t)
			clean = false
		}
		if !ok {
			return &indexError{i: i, err: &omni.DecodeError{Msg: "malformed batch record"}}
		}
		out.add(&m)
	}
	return nil
}

// hotRecord reports where the body of the record at j in data starts and
// ends (b, e) when, after its head, the record is a length of one or two
// digits, ':', that many ASCII bytes, mid and the stop byte stop.
func hotRecord(data string, j int, mid string, stop byte) (b, e int, ok bool) {
	n, b := int(data[j+3]-'0'), j+5 // data[j+3] is a digit, j+5 < len(data)
	if c := data[j+4]; c != ':' && c-'0' < 10 && data[j+5] == ':' {
		n, b = n*10+int(c-'0'), j+6
	}
	e = b + n
	ok = data[b-1] == ':' && e+len(mid) < len(data) && data[e+len(mid)] == stop && data[e:e+len(mid)] == mid && isASCII(data[b:e])
	return b, e, ok
}

// setBody sets the body field of a fragment record of kind k.
func setBody(p *omni.Payload, k byte, body string) {
	switch k {
	case recText:
		p.Text = body
	case recThinking:
		p.Thinking = body
	case recToolCall:
		p.Arguments = body
	default:
		p.Output = body
	}
}

// ---- Go → JavaScript ------------------------------------------------------------

// recordWriter writes the records of one consumer batch.
type recordWriter struct {
	ts       string // the timestamp the shim gives the next fragment record
	jsonOnly bool   // write J records only (tests compare the two forms)

	// The last fragment record written with a one-byte stop, for the next
	// message of the same shape (hot): its strings, compared by address,
	// the record's head and stop byte, and its bytes between the body and
	// the stop (a C or O record's tool_call_id and name). Most of a
	// stream is deltas of one fragment, each the last one's shape with
	// another body.
	hotType, hotEvent, hotRole, hotStop string
	hotID, hotName                      string
	hotHead                             [3]byte // kind, event and role codes; hotHead[0] == 0: none
	hotTail                             byte
	hotMid                              []byte
	noHot                               bool // every message takes record's checks: a writer of one message or a few, and tests
}

// append appends m. last reports a message whose JSON is not valid UTF-8
// (only raw JSON from outside JavaScript could be): it is written as an R
// record, the rest of the batch, which the shim decodes as it always
// decoded JSON, and must end the batch.
func (w *recordWriter) append(dst []byte, m *omni.Message) (_ []byte, last bool) {
	if !w.jsonOnly {
		if w.hotHead[0] != 0 {
			if out, ok := w.hot(dst, m); ok {
				return out, false
			}
		}
		if out, ok := w.record(dst, m); ok {
			return out, false
		}
	}
	// J, a length of fixed width filled in afterwards, ':', the JSON.
	start := len(dst)
	dst = append(dst, "J0000000000:"...)
	dst = m.AppendJSON(dst)
	json := dst[start+len("J0000000000:"):]
	if !utf8.Valid(json) {
		return append(append(dst[:start], recRest), json...), true
	}
	n := utf16Units(json)
	for i := start + len("J000000000"); n > 0; i-- {
		dst[i] = byte('0' + n%10)
		n /= 10
	}
	return dst, false
}

// record appends m as a fragment or usage record, after a t record when
// its timestamp differs from the last one; false, with dst as it was, when
// m has no such record or a string of it is not valid UTF-8 (it then goes
// as JSON).
func (w *recordWriter) record(dst []byte, m *omni.Message) ([]byte, bool) {
	k, strs, n := fragmentOf(m)
	var ev byte // the E record's sub-kind
	if k == 0 {
		if ev = eventOf(m); ev == 0 && !usageOf(m) {
			return dst, false
		}
	}
	start, ts, ok := len(dst), w.ts, true
	if m.Timestamp != w.ts {
		w.ts = m.Timestamp
		dst, ok = appendStr(append(dst, recTime), m.Timestamp)
	} else {
		// The same instant, perhaps another string of it (each stamper
		// formats its own): hot compares by address, and the messages
		// after this one share its string.
		w.ts = m.Timestamp
	}
	body := 0 // where the body ends
	if ev != 0 {
		dst, ok = appendEvent(dst, ev, &m.Payload)
	} else if k == 0 {
		dst = appendUsage(dst, m.Payload.Session(), m.Payload.Request())
	} else {
		dst = append(dst, k, eventCode(m.Payload.EventType), roleCode(m.Payload.Role))
		for i := 0; i < n-1 && ok; i++ {
			dst, ok = appendStr(dst, strs[i])
			if i == 0 {
				body = len(dst)
			}
		}
		if c := stopCode(strs[n-1]); c != 0 {
			dst = append(dst, c)
		} else if ok {
			dst, ok = appendStr(dst, strs[n-1])
		}
	}
	if !ok {
		w.ts = ts
		return dst[:start], false
	}
	w.hotHead[0] = 0
	if k == 0 || w.noHot {
		return dst, true
	}
	if c := stopCode(strs[n-1]); c != 0 {
		p := &m.Payload
		w.hotType, w.hotEvent, w.hotRole, w.hotStop = p.Type, p.EventType, p.Role, p.StopReason
		w.hotID, w.hotName = p.ToolCallID, p.Name
		w.hotHead = [3]byte{k, eventCode(p.EventType), roleCode(p.Role)}
		w.hotTail = c
		w.hotMid = append(w.hotMid[:0], dst[body:len(dst)-1]...)
	}
	return dst, true
}

// hot appends m as a record of the last one's kind, event, role and stop
// when m has their strings (at the same addresses: the omni package's
// constants, or the decoded batch's), the last timestamp, an ASCII body
// of under a hundred bytes (a delta) and no other field, and dst has room for
// the record: what record would write, without its checks. false, with dst
// unchanged, for any other message.
func (w *recordWriter) hot(dst []byte, m *omni.Message) ([]byte, bool) {
	p := &m.Payload
	if !ident(p.Type, w.hotType) || !ident(p.EventType, w.hotEvent) || !ident(m.Timestamp, w.ts) ||
		!ident(p.StopReason, w.hotStop) || !ident(p.Role, w.hotRole) ||
		m.Origin != nil || p.Rest != nil || p.Decoded() || !same(m.Type, omni.TypeModelMsg) {
		return dst, false
	}
	var body string
	others := len(p.Text) + len(p.Thinking) + len(p.Arguments) + len(p.Output)
	mid := len(w.hotMid)
	if mid == 0 { // a text or thinking delta: no tool_call_id or name
		body = p.Text
		if w.hotHead[0] == recThinking {
			body = p.Thinking
		}
		others += len(p.ToolCallID) + len(p.Name)
	} else {
		if !ident(p.ToolCallID, w.hotID) || !ident(p.Name, w.hotName) {
			return dst, false
		}
		body = p.Output
		if w.hotHead[0] == recToolCall {
			body = p.Arguments
		}
	}
	if others != len(body) || !isASCII(body) {
		return dst, false
	}
	n, i := len(body), len(dst)
	if n >= 100 || cap(dst)-i < n+mid+7 {
		return dst, false // record writes it
	}
	dst = dst[:i+n+mid+7] // written byte by byte: append is a call each
	dst[i], dst[i+1], dst[i+2], dst[i+3] = w.hotHead[0], w.hotHead[1], w.hotHead[2], byte('0'+n/10)
	if n >= 10 {
		i++
	}
	dst[i+3], dst[i+4] = byte('0'+n%10), ':'
	copy(dst[i+5:], body)
	if mid > 0 { // a call on WebAssembly, even for nothing
		copy(dst[i+5+n:], w.hotMid)
	}
	dst[i+5+n+mid] = w.hotTail
	return dst[:i+n+mid+6], true
}

// ident reports whether a and b are the same string: the same length at the
// same address (any two empty strings).
func ident(a, b string) bool {
	return len(a) == len(b) && (len(a) == 0 || unsafe.StringData(a) == unsafe.StringData(b))
}

// appendUsage appends the U record of the counts s and r.
func appendUsage(dst []byte, s, r *omni.TokenCounts) []byte {
	dst = append(dst, recUsage)
	for i, v := range counts(s, r) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(dst, v, 10)
	}
	return append(dst, ';')
}

// appendEvent appends the E record of sub-kind ev (eventOf) of the event
// payload p; false when a string of it is not valid UTF-8.
func appendEvent(dst []byte, ev byte, p *omni.Payload) ([]byte, bool) {
	dst = append(dst, recEvent, ev)
	switch ev {
	case 'e':
		if c := stopCode(p.Rest.Status); c > '-' {
			return append(dst, c), true
		}
		return appendStr(dst, p.Rest.Status)
	case 'a':
		return appendStr(append(dst, decisionCode(p.Rest.Decision)), p.ToolCallID)
	}
	return dst, true
}

// counts returns the eight counts of a U record, in its order.
func counts(s, r *omni.TokenCounts) [8]int64 {
	return [8]int64{s.CacheRead, s.CacheWrite, s.Output, s.Total, r.CacheRead, r.CacheWrite, r.Output, r.Total}
}

// appendStr appends "<n>:<s>"; false when s is not valid UTF-8 (JavaScript
// would not decode it to the same text, nor to n units).
func appendStr(dst []byte, s string) ([]byte, bool) {
	n := len(s)
	if !isASCII(s) {
		if !utf8.ValidString(s) {
			return dst, false
		}
		n = utf16Units(s)
	}
	if n < 10 {
		dst = append(dst, byte('0'+n))
	} else {
		dst = strconv.AppendInt(dst, int64(n), 10)
	}
	return append(append(dst, ':'), s...), true
}

// isASCII reports whether every byte of s is below 0x80, eight at a time.
func isASCII(s string) bool {
	i := 0
	if len(s) >= 8 {
		p := unsafe.Pointer(unsafe.StringData(s))
		for ; i+8 <= len(s); i += 8 {
			if *(*uint64)(unsafe.Add(p, i))&0x8080808080808080 != 0 {
				return false
			}
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// utf16Units returns the length in UTF-16 code units of valid UTF-8 s: a
// byte that does not continue a sequence starts one unit, or two (a
// surrogate pair) from 0xF0 on.
func utf16Units[S string | []byte](s S) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		if c := s[i]; c&0xC0 == 0x80 {
			n--
		} else if c >= 0xF0 {
			n++
		}
	}
	return n
}

// fragmentOf returns the record kind of m and the strings of its record
// when the shim can rebuild exactly its JSON from a record, else kind 0: a
// model_msg fragment (with a standard event), or a complete text,
// thinking, tool_call or tool_call_output (without an event), without
// origin, built in Go (a payload decoded from JSON may hold keys a record
// cannot carry), with a standard role and no field set but those the
// record carries.
func fragmentOf(m *omni.Message) (kind byte, strs [4]string, n int) {
	p := &m.Payload
	ev := eventCode(p.EventType)
	if !same(m.Type, omni.TypeModelMsg) || m.Origin != nil || p.Decoded() ||
		ev == 0 || roleCode(p.Role) == 0 || !restZero(p, false) {
		return 0, strs, 0
	}
	// Exactly the body field of the type (and the call's id and name) may
	// be set.
	other := 0
	switch t := p.Type; {
	case same(t, omni.PartialText) || same(t, omni.Text):
		kind, strs, n = recText, [4]string{p.Text, p.StopReason}, 2
		other = len(p.Thinking) + len(p.Arguments) + len(p.Output) + len(p.ToolCallID) + len(p.Name)
	case same(t, omni.PartialToolCall) || same(t, omni.ToolCall):
		kind, strs, n = recToolCall, [4]string{p.Arguments, p.ToolCallID, p.Name, p.StopReason}, 4
		other = len(p.Text) + len(p.Thinking) + len(p.Output)
	case same(t, omni.PartialToolCallOutput) || same(t, omni.ToolCallOutput):
		kind, strs, n = recToolOutput, [4]string{p.Output, p.ToolCallID, p.StopReason}, 3
		other = len(p.Text) + len(p.Thinking) + len(p.Arguments) + len(p.Name)
	case same(t, omni.PartialThinking) || same(t, omni.Thinking):
		kind, strs, n = recThinking, [4]string{p.Thinking, p.StopReason}, 2
		other = len(p.Text) + len(p.Arguments) + len(p.Output) + len(p.ToolCallID) + len(p.Name)
	default:
		return 0, strs, 0
	}
	// A fragment has an event, a complete message none (partial_* types
	// alone start with p).
	if other != 0 || (ev == recComplete) != (p.Type[0] != 'p') {
		return 0, strs, 0
	}
	return kind, strs, n
}

// same reports s == c, comparing addresses first: the messages the
// records and the engine make hold the omni package's constants, and on
// WebAssembly a comparison with a constant of more than six bytes is a call.
func same(s, c string) bool {
	return len(s) == len(c) && (unsafe.StringData(s) == unsafe.StringData(c) || s == c)
}

// usageOf reports whether m is a token_usage event a U record carries
// exactly: built in Go (a decoded payload goes back as JSON, see
// fragmentOf), without origin, with both counts and nothing else, and every
// count a non-negative integer JavaScript holds exactly.
func usageOf(m *omni.Message) bool {
	p := &m.Payload
	if m.Type != omni.TypeEventMsg || p.Type != omni.TokenUsage || m.Origin != nil || p.Decoded() ||
		p.Session() == nil || p.Request() == nil || !restZero(p, true) {
		return false
	}
	for _, v := range counts(p.Session(), p.Request()) {
		if uint64(v) > maxExact { // a negative count too
			return false
		}
	}
	return true
}

// eventOf returns the sub-kind of the E record that carries m exactly, or
// 0: a request_begin ('b'), a request_end with its status alone, not
// empty ('e'), or an approval_decision of a standard decision ('a'),
// built in Go (see fragmentOf), without origin and with no other field.
// These are the engine's own events: a few a request, which JavaScript
// otherwise parses as JSON.
func eventOf(m *omni.Message) byte {
	p := &m.Payload
	if !same(m.Type, omni.TypeEventMsg) || m.Origin != nil || p.Decoded() ||
		len(p.Role)+len(p.EventType)+len(p.StopReason)+len(p.Text)+len(p.Thinking)+len(p.Arguments)+len(p.Output)+len(p.Name) != 0 {
		return 0
	}
	var status, decision string
	if r := p.Rest; r != nil {
		rest := *r // every field but the two a record carries must be zero
		status, decision, rest.Status, rest.Decision = r.Status, r.Decision, "", ""
		if !restZero(&omni.Payload{Rest: &rest}, false) {
			return 0
		}
	}
	switch t := p.Type; {
	case same(t, omni.RequestBegin):
		if status == "" && decision == "" && p.ToolCallID == "" {
			return 'b'
		}
	case same(t, omni.RequestEnd):
		if status != "" && decision == "" && p.ToolCallID == "" {
			return 'e'
		}
	case same(t, omni.ApprovalDecision):
		if status == "" && decisionCode(decision) != 0 {
			return 'a'
		}
	}
	return 0
}

// decisionCode is the one-byte code of a standard approval decision, or 0.
func decisionCode(d string) byte {
	switch d {
	case omni.DecisionAllow:
		return 'a'
	case omni.DecisionDeny:
		return 'd'
	case omni.DecisionForbidden:
		return 'f'
	}
	return 0
}

// restZero reports whether every field of p that the record of its kind
// does not carry is zero: a fragment record carries Type, Role, EventType,
// StopReason, Text, Thinking, Arguments, Output, ToolCallID and Name (none
// of Rest), a U record (usage) Type and Rest's Session and Request. It
// names every field of omni.Payload and omni.Rest; a test fails when a
// field is added.
func restZero(p *omni.Payload, usage bool) bool {
	if usage && len(p.Role)+len(p.EventType)+len(p.StopReason)+len(p.Text)+len(p.Thinking)+
		len(p.Arguments)+len(p.Output)+len(p.ToolCallID)+len(p.Name) != 0 {
		return false
	}
	r := p.Rest
	if r == nil {
		return true
	}
	if !usage && (r.Session != nil || r.Request != nil) {
		return false
	}
	// Sums of lengths and an or of numbers: fewer branches, less code.
	return len(r.ImageURL)+len(r.Data)+len(r.MimeType)+len(r.Sender)+len(r.Status)+len(r.ErrorMessage)+
		len(r.Decision)+len(r.Reason)+len(r.Mode)+len(r.SessionID)+len(r.Outcome)+len(r.Provider)+
		len(r.ModelID)+len(r.SystemPrompt)+len(r.AgentState)+len(r.Workspace)+len(r.Source) == 0 &&
		int64(r.Attempt)|r.Context|r.Turns|r.Rounds|r.TokensUsed == 0 && !r.ReasonNull && r.RetryInMs == nil &&
		r.Images == nil && r.Fidelity == nil && r.Tools == nil && r.Servers == nil && r.Results == nil &&
		r.ModelContextWindow == nil && r.Extra == nil
}

// eventCode returns the record event of an event_type, recComplete for
// none, or 0.
func eventCode(ev string) byte {
	switch ev {
	case "":
		return recComplete
	case omni.EventStart:
		return 's'
	case omni.EventDelta:
		return 'd'
	case omni.EventStop:
		return 'x'
	}
	return 0
}

// The stop_reason of a record is one byte: '-' for none, the initial of a
// standard status ('h' for auth); any other string is carried as a string,
// whose length's first digit tells it apart.
const stopCodes = "-cfatmh"

var stopNames = [len(stopCodes)]string{"", omni.StatusCompleted, omni.StatusFailed, omni.StatusAborted, omni.StatusTimeout, omni.StatusMalformed, omni.StatusAuth}

// stopCode returns the code of the stop_reason s, or 0. The package's
// constants are recognized by address first.
func stopCode(s string) byte {
	for i, name := range stopNames {
		if same(s, name) {
			return stopCodes[i]
		}
	}
	return 0
}

// stopName is the stop_reason of the code c.
//
//go:noinline
func stopName(c byte) (string, bool) {
	for i := range len(stopCodes) {
		if stopCodes[i] == c {
			return stopNames[i], true
		}
	}
	return "", false
}

func eventName(c byte) string {
	switch c {
	case 's':
		return omni.EventStart
	case 'd':
		return omni.EventDelta
	case 'x':
		return omni.EventStop
	}
	return ""
}

func roleCode(role string) byte {
	switch {
	case same(role, omni.RoleAssistant):
		return 'a'
	case role == omni.RoleUser:
		return 'u'
	}
	return 0
}

func roleName(c byte) string {
	switch c {
	case 'a':
		return omni.RoleAssistant
	case 'u':
		return omni.RoleUser
	}
	return ""
}

// ---- Where a producer batch's messages go ----------------------------------------
//
// The producer side's types eachRecordAt hands its messages to, here so
// that this file, which carries no build constraint unlike the rest of the
// package, builds natively with them: its tests and fuzz target then run
// natively too (go test -fuzz fuzzes native targets only).

// batchMsgs is the most messages produce hands the engine at once: the
// engine's queue takes its lock once for them (most of the gain of
// batching), for a buffer of 15 kB.
const batchMsgs = 64

// firstBatchMsgs is the room of a producer's new buffer, which grows to
// batchMsgs only for a producer that hands over that many at once: most
// tool calls hand over a few, and a turn may run many of them at once,
// each with a buffer of its own.
const firstBatchMsgs = 8

// emitter hands a producer's messages to the engine: one at a time
// through emit, or gathered for batch (GenerateParams.EmitBatch) when it
// is set.
type emitter struct {
	_     [0]func() // not comparable
	emit  func(omni.Message)
	batch func([]omni.Message)
	buf   []omni.Message // the messages gathered, copied: up to batchMsgs
	used  int            // the most buf has held, which its end clears
}

// add takes one message that eachRecordAt decoded.
func (e *emitter) add(m *omni.Message) {
	if e.batch == nil {
		e.emit(*m)
		return
	}
	if cap(e.buf) == 0 {
		e.buf = make([]omni.Message, 0, firstBatchMsgs)
	}
	e.buf = append(e.buf, *m) // grows the buffer up to batchMsgs
	if len(e.buf) == batchMsgs {
		e.flush()
	}
}

// flush hands the messages gathered to the engine.
func (e *emitter) flush() {
	if len(e.buf) > 0 {
		e.used = max(e.used, len(e.buf))
		e.batch(e.buf)
		e.buf = e.buf[:0]
	}
}

// batchStamp is the timestamp of the messages of one producer batch that
// carry none: the session's clock is read once a batch, when a record first
// needs it.
type batchStamp struct {
	omni.Stamper
	now  func() time.Time
	read bool   // the clock was read for the current batch
	str  string // its stamp
}

// get returns the current batch's stamp; "" for a nil stamp.
func (s *batchStamp) get() string {
	if s == nil {
		return ""
	}
	if !s.read {
		s.read = true
		s.str = s.Format(s.now())
	}
	return s.str
}

// indexError names the element of a batch that failed to decode.
type indexError struct {
	_   [0]func() // not comparable: no equality code in floe.wasm
	i   int
	err error
}

func (e *indexError) Error() string { return "[" + strconv.Itoa(e.i) + "]: " + e.err.Error() }
func (e *indexError) Unwrap() error { return e.err }
