package anthropic

import (
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider"
	"github.com/floehq/floe/provider/sse"
)

// Decoder maps Messages stream events to an Emitter. Segment keys are the
// content block indexes.
// Model uses it for every request (a provider.Decoder); a program
// using the adapter never needs it.
type Decoder struct {
	E *provider.Emitter

	usage   provider.Usage
	stopped bool   // message_delta with a stop_reason came
	cut     string // its stop_reason when it cut the reply short
	blocks  []block

	x event // the event being read
}

type block struct {
	_     [0]func()
	index int
	kind  string // text, thinking, tool_use; "" = a block this adapter skips
	sig   string // thinking: signature so far
	input string // tool_use: the input of content_block_start
}

// event is the part of one event this adapter reads.
type event struct {
	_                   [0]func() // not comparable: no generated equality code
	obj                 bool
	typ                 string
	index               int
	kind                string // content_block.type
	text                string // text/thinking of the block, or of the delta
	data, id, name, sig string // content_block fields
	input               string
	deltaType           string
	stopReason          string
	errType, msg        string // msg: error.message, or a refusal's delta.stop_details.explanation
}

// Usage returns the counts the stream stated and the request total.
func (d *Decoder) Usage() (provider.Usage, int64) {
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

func (d *Decoder) field(path []byte, kind byte, val []byte) error {
	x := &d.x
	if kind == 'n' {
		// A null states nothing: message_delta's counts but output_tokens
		// may be null (the API's types say so), and message_start's stand.
		return nil
	}
	switch string(path) {
	case "":
		x.obj = kind == '}'
	case "type":
		x.typ = omni.JSONString(val)
	case "index":
		x.index = int(omni.JSONInt(val))
	case "content_block.type":
		x.kind = omni.JSONString(val)
	case "content_block.text", "content_block.thinking", "delta.text", "delta.thinking", "delta.partial_json", "delta.signature":
		x.text = omni.JSONString(val)
	case "content_block.data":
		x.data = omni.JSONString(val)
	case "content_block.id":
		x.id = omni.JSONString(val)
	case "content_block.name":
		x.name = omni.JSONString(val)
	case "content_block.signature":
		x.sig = omni.JSONString(val)
	case "content_block.input":
		x.input = string(val)
	case "delta.type":
		x.deltaType = omni.JSONString(val)
	case "delta.stop_reason":
		x.stopReason = omni.JSONString(val)
	case "error.type":
		x.errType = omni.JSONString(val)
	case "error.message", "error", "delta.stop_details.explanation":
		if kind == '"' {
			x.msg = omni.JSONString(val)
		}
	case "message.usage.input_tokens", "usage.input_tokens":
		d.usage.Input = omni.JSONInt(val)
	case "message.usage.output_tokens", "usage.output_tokens":
		d.usage.Output = omni.JSONInt(val)
	case "message.usage.cache_read_input_tokens", "usage.cache_read_input_tokens":
		d.usage.CacheRead = omni.JSONInt(val)
	case "message.usage.cache_creation_input_tokens", "usage.cache_creation_input_tokens":
		d.usage.CacheWrite = omni.JSONInt(val)
	}
	return nil
}

// Event handles one SSE event.
func (d *Decoder) Event(ev *sse.Event) error {
	if string(ev.Data) == "[DONE]" {
		// OpenAI's end of stream, which some compatible proxies (GitHub
		// Copilot's) send in place of message_stop: the end, as one.
		if err := d.End(); err != nil {
			return err
		}
		return provider.ErrDone
	}
	d.x = event{}
	x := &d.x
	if err := omni.WalkJSON(ev.Data, d.field); err != nil || !x.obj {
		return provider.BadEvent(api, ev.Data, err)
	}
	if x.typ == "" {
		x.typ = ev.Type
	}
	e := d.E
	var b *block
	for i := range d.blocks {
		if d.blocks[i].index == x.index {
			b = &d.blocks[i]
		}
	}
	switch x.typ {
	case "content_block_start":
		d.blocks = append(d.blocks, block{index: x.index, kind: x.kind, sig: x.sig, input: x.input})
		switch x.kind {
		case "text":
			e.Text(x.index, x.text)
		case "thinking":
			e.OpenThinking(x.index)
			e.Thinking(x.index, x.text)
		case "redacted_thinking":
			e.Complete(omni.PartialThinking, e.Stamp(provider.Fidelity(fidRedacted, x.data)))
		case "tool_use":
			e.ToolStart(x.index, x.id, x.name)
		}
	case "content_block_delta":
		if b == nil {
			return provider.Malformed(api, "content_block_delta for a block that never started")
		}
		switch b.kind + " " + x.deltaType {
		case "text text_delta":
			e.Text(b.index, x.text)
		case "thinking thinking_delta":
			e.Thinking(b.index, x.text)
		case "thinking signature_delta":
			b.sig += x.text
		case "tool_use input_json_delta":
			e.ToolArgs(b.index, x.text)
		}
	case "content_block_stop":
		if b == nil {
			return nil
		}
		if b.kind == "thinking" && b.sig != "" {
			e.SetFidelity(b.index, e.Stamp(provider.Fidelity(fidSignature, b.sig)))
		}
		if b.kind == "tool_use" && e.ToolArgsLen(b.index) == 0 && len(b.input) > 2 {
			e.ToolArgs(b.index, b.input) // the whole input came with the start
		}
		e.Close(b.index, omni.StatusCompleted)
		b.kind = ""
	case "message_delta":
		d.stopped = d.stopped || x.stopReason != ""
		switch x.stopReason {
		case "max_tokens", "model_context_window_exceeded", "refusal", "pause_turn":
			// pause_turn: the API's own tools (web search) paused a long
			// turn. Their blocks, which a request continuing it must send
			// back, are not kept, and a callback is one request: the
			// reply ends here, as far as it went.
			d.cut = `stop_reason "` + x.stopReason + `"`
			if x.msg != "" {
				// A refusal's explanation (Claude 4's streaming
				// classifiers), its first line cut at 300 bytes as a
				// body's text is.
				d.cut += ": " + provider.ErrorDetail([]byte(x.msg))
			}
		}
	case "message_stop":
		return provider.ErrDone
	case "error":
		return provider.ErrorEvent(api, x.errType, "", x.msg)
	}
	return nil
}

// Cut implements [provider.Cutter]: stop_reason "max_tokens",
// "model_context_window_exceeded", "refusal" or "pause_turn".
func (d *Decoder) Cut() string { return d.cut }

const api = "anthropic"
