package omni

import (
	"runtime"
	"slices"

	"github.com/floehq/floe/internal/lock"
)

// completeOf returns the complete payload type a partial_* type streams
// (partial_text → text), or "".
func completeOf(partialType string) string {
	switch {
	case same(partialType, PartialText):
		return Text
	case same(partialType, PartialThinking):
		return Thinking
	case same(partialType, PartialToolCall):
		return ToolCall
	case same(partialType, PartialToolCallOutput):
		return ToolCallOutput
	}
	return ""
}

// partialOf returns the partial_* type that streams the complete payload
// type (text → partial_text), or "" for types that are never streamed.
func partialOf(completeType string) string {
	switch {
	case same(completeType, Text):
		return PartialText
	case same(completeType, Thinking):
		return PartialThinking
	case same(completeType, ToolCall):
		return PartialToolCall
	case same(completeType, ToolCallOutput):
		return PartialToolCallOutput
	}
	return ""
}

// defaultRole is the only (or usual) role of a streamed payload type.
func defaultRole(partialType string) string {
	if partialType == PartialToolCallOutput {
		return RoleUser
	}
	return RoleAssistant
}

// setBody stores body in the field that payload type p.Type streams.
func (p *Payload) setBody(body string) {
	switch p.Type {
	case Text, PartialText:
		p.Text = body
	case Thinking, PartialThinking:
		p.Thinking = body
	case ToolCall, PartialToolCall:
		p.Arguments = body
	case ToolCallOutput, PartialToolCallOutput:
		p.Output = body
	}
}

// fragment is the state of one streamed segment: the fragments seen so far
// for one (payload type, tool_call_id[, origin]) key.
type fragment struct {
	typ    string   // partial_* payload type
	callID string   // tool_call_id, "" for text and thinking
	origin []string // envelope origin (Aggregator only)

	body      []byte   // concatenated bodies
	images    []string // last non-empty images
	hasImages bool
	name      string // last non-empty name (partial_tool_call)
	role      string // last non-empty role
	stop      string // last non-empty stop_reason
	firstTS   string // timestamp of the first fragment
	lastTS    string // timestamp of the latest fragment
	stopped   bool   // a stop was seen (Aggregator only)
}

// newFragment is out of line, as are label and invalid: inlined at each
// start and error of the checks, they made floe.wasm larger (Sizes in
// the README).
//
//go:noinline
func newFragment(m *Message) *fragment {
	return &fragment{typ: m.Payload.Type, callID: m.Payload.ToolCallID, origin: m.Origin, firstTS: m.Timestamp}
}

func (f *fragment) is(typ, callID string, origin []string) bool {
	return same(f.typ, typ) && f.callID == callID && slices.Equal(f.origin, origin)
}

// note records the metadata a fragment message carries and appends its
// body field k (bodyText...; bodyNone appends nothing). It is out of line,
// as newFragment is: inlined into Discipline.check for its hot fragment,
// it made floe.wasm 1.1 KB larger.
//
//go:noinline
func (f *fragment) note(m *Message, k uint8) {
	p := &m.Payload
	if k != bodyNone {
		f.appendBody(p.field(k))
	}
	if images := p.Images(); len(images) > 0 {
		f.images, f.hasImages = images, true
	}
	if p.Name != "" {
		f.name = p.Name
	}
	if p.Role != "" {
		f.role = p.Role
	}
	if p.StopReason != "" {
		f.stop = p.StopReason
	}
	if m.Timestamp != "" {
		f.lastTS = m.Timestamp
		if f.firstTS == "" {
			f.firstTS = m.Timestamp
		}
	}
}

// bodies recycles the body buffers of long fragments: a stream of many
// deltas would otherwise allocate about five times its length as the
// buffer grows, for every request. Only buffers of minPooled to
// maxPooledBody bytes are kept.
var bodies bodyPool

// bodyPool is a small pool of buffers that, as a sync.Pool does, lets
// the collector have them: every collection empties it. sync.Pool costs
// the WebAssembly build about 6 kB (brotli).
type bodyPool struct {
	mu    lock.Mutex
	free  []*[]byte
	armed bool // a sentinel is waiting for the next collection
}

// maxPooled bounds the pool; a buffer put beyond it is left to the
// collector.
const maxPooled = 16

// Get returns a pooled buffer, or nil.
func (p *bodyPool) Get() *[]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.free)
	if n == 0 {
		return nil
	}
	v := p.free[n-1]
	p.free[n-1] = nil
	p.free = p.free[:n-1]
	return v
}

// Put adds v to the pool.
func (p *bodyPool) Put(v *[]byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) < maxPooled {
		p.free = append(p.free, v)
	}
	if !p.armed {
		p.armed = true
		p.arm()
	}
}

// arm sets a finalizer on a fresh sentinel: it runs after the next
// collection and empties the pool.
func (p *bodyPool) arm() {
	runtime.SetFinalizer(new(sentinel), func(*sentinel) {
		p.mu.Lock()
		defer p.mu.Unlock()
		clear(p.free)
		p.free = p.free[:0]
		p.armed = false
	})
}

type sentinel struct{ _ int } // not zero-sized: each one is its own allocation

const minPooled = 4 << 10

// maxPooledBody: a longer body's buffer is left to the collector. On
// WebAssembly 256 KB: a long text's buffer (W2's is 1 MB) would count as
// live in the next collection and set the heap's goal; natively 4 MB.
const maxPooledBody = poolBodiesTo

// firstBody is the capacity of a fragment's first body buffer: a short
// body (most tool calls' arguments and outputs) then takes one allocation
// instead of one for each doubling from 8 bytes.
const firstBody = 256

// doubleBodies: natively, a body the pool has no buffer for grows by
// doubling, as a short slice does; append grows a long one by a quarter,
// so a body of many deltas costs about five times its length in
// allocations rather than two (W2's 800 KB text: 4 MB). On WebAssembly
// the module's memory follows the largest buffer, so a body keeps
// append's growth there.
const doubleBodies = runtime.GOARCH != "wasm"

// appendBody appends b to the body, taking a larger buffer from the pool
// when the body outgrows a buffer of minPooled bytes or more.
func (f *fragment) appendBody(b string) {
	if cap(f.body) == 0 && len(b) > 0 && len(b) < firstBody {
		f.body = make([]byte, 0, firstBody)
	}
	if n := len(f.body) + len(b); n > cap(f.body) && n >= minPooled {
		if v := bodies.Get(); v != nil {
			if cap(*v) >= n {
				nb := append((*v)[:0], f.body...)
				*v = f.body
				f.body = nb
			}
			if cap(*v) >= minPooled {
				bodies.Put(v)
			}
		}
		if doubleBodies && n > cap(f.body) {
			nb := make([]byte, len(f.body), max(n, 2*cap(f.body)))
			copy(nb, f.body)
			f.body = nb
		}
	}
	f.body = append(f.body, b...)
}

// release returns the body buffer to the pool; f's body is empty after.
func (f *fragment) release() {
	if c := cap(f.body); c >= minPooled && c <= maxPooledBody {
		b := f.body[:0]
		bodies.Put(&b)
	}
	f.body = nil
}

// message builds a message of payload type typ carrying what f
// accumulated.
func (f *fragment) message(typ, ts string) Message {
	role := f.role
	if role == "" {
		role = defaultRole(f.typ)
	}
	p := Payload{Type: typ, Role: role, ToolCallID: f.callID, StopReason: f.stop}
	if f.images != nil {
		p.Rest = &Rest{Images: f.images}
	}
	if same(f.typ, PartialToolCall) {
		p.Name = f.name
	}
	p.setBody(string(f.body))
	return Message{Timestamp: ts, Type: TypeModelMsg, Origin: f.origin, Payload: p}
}

// label names the fragment in error messages.
//
//go:noinline
func (f *fragment) label() string {
	if f.callID == "" {
		return f.typ
	}
	return f.typ + " " + quoteValue(f.callID)
}
