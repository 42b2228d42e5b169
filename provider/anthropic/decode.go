package anthropic

import (
	"strconv"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider"
	"github.com/floehq/floe/provider/sse"
)

// Decoder maps Messages stream events to an Emitter. Segment keys are the
// content block indexes.
type Decoder struct {
	E *provider.Emitter

	r       omni.JSONReader
	usage   provider.Usage
	stopped bool // message_delta with a stop_reason came
	blocks  []block
}

type block struct {
	index int
	kind  string // text, thinking, tool_use; "" = a block this adapter skips
	sig   []byte // thinking: signature so far
	input []byte // tool_use: the input of content_block_start
}

func (d *Decoder) find(index int) *block {
	for i := range d.blocks {
		if d.blocks[i].index == index {
			return &d.blocks[i]
		}
	}
	return nil
}

func (d *Decoder) counts() (provider.Usage, int64) {
	u := d.usage
	return u, u.Input + u.CacheRead + u.CacheWrite + u.Output
}

// End accepts a stream cut after the final message_delta (its message_stop
// lost); anything shorter is truncated.
func (d *Decoder) End() error {
	if d.stopped {
		return nil
	}
	return provider.Malformed(api, "the stream ended before message_stop")
}

// event is the part of one event this adapter reads.
type event struct {
	typ        string
	index      int
	block      block  // content_block_start
	blockText  string // content_block_start: text or thinking already in the block
	redacted   string
	id, name   string
	deltaType  string
	text       string // text_delta, thinking_delta, signature_delta, input_json_delta
	stopReason string
	errType    string
	errMsg     string
	hasUsage   bool
}

// Event handles one SSE event.
func (d *Decoder) Event(ev *sse.Event) error {
	r := &d.r
	r.Reset(ev.Data)
	if r.Kind() != "object" {
		return provider.Malformed(api, "an event's data is not a JSON object: "+clip(ev.Data))
	}
	var x event
	err := r.Object(func(k []byte) error {
		var err error
		switch string(k) {
		case "type":
			x.typ, err = r.Str()
		case "index":
			var n int64
			n, err = r.Int()
			x.index = int(n)
		case "message":
			err = d.message()
		case "content_block":
			err = d.contentBlock(&x)
		case "delta":
			err = d.delta(&x)
		case "usage":
			err = d.readUsage()
		case "error":
			if r.Kind() != "object" {
				x.errMsg, err = r.Str()
				return err
			}
			var raw omni.RawJSON
			raw, err = r.Raw()
			x.errType, x.errMsg = provider.ErrorFields(raw)
		default:
			err = r.Skip()
		}
		return err
	})
	if err == nil {
		err = r.End()
	}
	if err != nil {
		return provider.Malformed(api, "bad event: "+err.Error()+": "+clip(ev.Data))
	}
	if x.typ == "" {
		x.typ = ev.Type
	}
	e := d.E
	switch x.typ {
	case "message_start", "ping":
	case "content_block_start":
		b := x.block
		b.index = x.index
		d.blocks = append(d.blocks, b)
		switch b.kind {
		case "text":
			e.Text(b.index, x.blockText)
		case "thinking":
			e.OpenThinking(b.index)
			e.Thinking(b.index, x.blockText)
		case "redacted_thinking":
			m := omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.Thinking, Role: omni.RoleAssistant, StopReason: omni.StatusCompleted}}
			m.Payload.Fidelity = fid(fidRedacted, x.redacted)
			e.Complete(m)
		case "tool_use":
			e.ToolStart(b.index, x.id, x.name)
		}
	case "content_block_delta":
		b := d.find(x.index)
		if b == nil {
			return provider.Malformed(api, "content_block_delta for block "+itoa(x.index)+", which never started")
		}
		switch {
		case x.deltaType == "text_delta" && b.kind == "text":
			e.Text(b.index, x.text)
		case x.deltaType == "thinking_delta" && b.kind == "thinking":
			e.Thinking(b.index, x.text)
		case x.deltaType == "signature_delta" && b.kind == "thinking":
			b.sig = append(b.sig, x.text...)
		case x.deltaType == "input_json_delta" && b.kind == "tool_use":
			e.ToolArgs(b.index, x.text)
		}
	case "content_block_stop":
		b := d.find(x.index)
		if b == nil {
			return nil
		}
		switch b.kind {
		case "thinking":
			if len(b.sig) > 0 {
				e.SetFidelity(b.index, fid(fidSignature, string(b.sig)))
			}
		case "tool_use":
			if e.ToolArgsLen(b.index) == 0 && len(b.input) > 2 {
				e.ToolArgs(b.index, string(b.input)) // the whole input came with the start
			}
		}
		e.Close(b.index, omni.StatusCompleted)
		b.kind = ""
	case "message_delta":
		if x.stopReason != "" {
			d.stopped = true
		}
	case "message_stop":
		return provider.ErrDone
	case "error":
		return provider.ErrorEvent(api, x.errType, x.errMsg)
	}
	return nil
}

func fid(key, value string) omni.RawJSON {
	w := provider.JSONWriter{}
	w.Open('{')
	w.KeyStr(key, value)
	w.Close('}')
	return w.B
}

func (d *Decoder) message() error {
	r := &d.r
	if r.Kind() != "object" {
		return r.Skip()
	}
	return r.Object(func(k []byte) error {
		if string(k) == "usage" {
			return d.readUsage()
		}
		return r.Skip()
	})
}

func (d *Decoder) contentBlock(x *event) error {
	r := &d.r
	if r.Kind() != "object" {
		return r.Skip()
	}
	return r.Object(func(k []byte) error {
		var err error
		switch string(k) {
		case "type":
			x.block.kind, err = r.Str()
		case "text", "thinking":
			if r.Kind() == "string" {
				x.blockText, err = r.Str()
				return err
			}
			err = r.Skip()
		case "data":
			x.redacted, err = r.Str()
		case "id":
			x.id, err = r.Str()
		case "name":
			x.name, err = r.Str()
		case "input":
			x.block.input, err = r.Raw()
		case "signature":
			var s string
			s, err = r.Str()
			x.block.sig = append(x.block.sig, s...)
		default:
			err = r.Skip()
		}
		return err
	})
}

func (d *Decoder) delta(x *event) error {
	r := &d.r
	if r.Kind() != "object" {
		return r.Skip()
	}
	return r.Object(func(k []byte) error {
		var err error
		switch string(k) {
		case "type":
			x.deltaType, err = r.Str()
		case "text", "thinking", "signature", "partial_json":
			if r.Kind() == "string" {
				x.text, err = r.Str()
				return err
			}
			err = r.Skip()
		case "stop_reason":
			x.stopReason, err = r.Str()
		default:
			err = r.Skip()
		}
		return err
	})
}

// readUsage applies the counts an event states; a later count wins.
func (d *Decoder) readUsage() error {
	r := &d.r
	if r.Kind() != "object" {
		return r.Skip()
	}
	return r.Object(func(k []byte) error {
		var p *int64
		switch string(k) {
		case "input_tokens":
			p = &d.usage.Input
		case "output_tokens":
			p = &d.usage.Output
		case "cache_read_input_tokens":
			p = &d.usage.CacheRead
		case "cache_creation_input_tokens":
			p = &d.usage.CacheWrite
		default:
			return r.Skip()
		}
		if r.Null() {
			return nil
		}
		n, err := r.Int()
		*p = n
		return err
	})
}

func itoa(n int) string { return strconv.Itoa(n) }

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}
