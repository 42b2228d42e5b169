package responses

import (
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider"
	"github.com/floehq/floe/provider/sse"
)

// Decoder maps Responses API stream events to an Emitter. Segment keys are
// output indexes (item ids change from event to event on some servers).
// Model uses it for every request (a provider.Decoder); a program
// using the adapter never needs it.
type Decoder struct {
	E *provider.Emitter

	usage   provider.Usage
	total   int64
	refusal string
	cut     string // response.incomplete's reason
	items   []item
	last    int // output_index of the last item added
	tags    provider.InlineThinking
	textKey int // the key of the message whose text tags holds

	x event // the event being read
}

type item struct {
	_        [0]func()
	index    int
	kind     string // message, reasoning, function_call; "" = skipped or done
	streamed bool   // a delta came for the item
	part     int    // the summary part (reasoning) or content part (message) being streamed
	// ended: the part streamed last ended (its done came, or a summary
	// part of another index was added), so a reasoning part of another
	// index is a new paragraph; without it, a new index is more of the
	// same text (vLLM gives each delta the next content_index).
	ended bool
	run   []byte // what the deltas streamed since the item's last done
}

// event is the part of one event this adapter reads.
type event struct {
	_                        [0]func() // not comparable: no generated equality code
	obj                      bool
	typ                      string
	index                    int
	summary                  int // summary_index or content_index
	delta, text              string
	itemType                 string
	callID, name             string
	args                     string
	encrypted                bool
	raw                      string // the item, raw
	itemText                 string // the texts of a message item's content
	errType, errCode, errMsg string
	incomplete               string // response.incomplete_details.reason
}

// Usage returns the counts the stream stated and the request total.
func (d *Decoder) Usage() (provider.Usage, int64) {
	if d.refusal != "" {
		// A refusal is not the model's text: it is kept in the fidelity of
		// an empty assistant text message.
		d.E.Complete(omni.PartialText, provider.Fidelity("refusal", d.refusal))
	}
	t := d.total
	if t == 0 {
		t = d.usage.Input + d.usage.Output
	}
	return d.usage, t
}

// Cut implements [provider.Cutter]: response.incomplete, with its reason.
func (d *Decoder) Cut() string { return d.cut }

// End rejects a stream that ended before response.completed or
// response.incomplete.
func (d *Decoder) End() error {
	return provider.Malformed(api, "the stream ended before response.completed")
}

func (d *Decoder) field(path []byte, kind byte, val []byte) error {
	x := &d.x
	switch string(path) {
	case "":
		x.obj = kind == '}'
	case "type":
		x.typ = omni.JSONString(val)
	case "output_index":
		x.index = int(omni.JSONInt(val))
	case "summary_index", "content_index":
		x.summary = int(omni.JSONInt(val))
	case "delta":
		x.delta = omni.JSONString(val)
	case "text", "arguments":
		x.text = omni.JSONString(val)
	case "item.type":
		x.itemType = omni.JSONString(val)
	case "item.call_id":
		x.callID = omni.JSONString(val)
	case "item.name":
		x.name = omni.JSONString(val)
	case "item.arguments":
		x.args = omni.JSONString(val)
	case "item.encrypted_content":
		x.encrypted = len(val) > 2
	case "item":
		x.raw = string(val)
	case "item.content[].text":
		x.itemText += omni.JSONString(val)
	case "error.type":
		if kind == '"' {
			x.errType = omni.JSONString(val)
		}
	case "code", "error.code", "response.error.code":
		if kind == '"' {
			x.errCode = omni.JSONString(val)
		} else if kind == '0' {
			x.errCode = string(val)
		}
	case "message", "error.message", "response.error.message", "error":
		if kind == '"' {
			x.errMsg = omni.JSONString(val)
		}
	case "response.incomplete_details.reason":
		if kind == '"' {
			x.incomplete = omni.JSONString(val)
		}
	case "response.usage.input_tokens":
		d.usage.Input = omni.JSONInt(val)
	case "response.usage.output_tokens":
		d.usage.Output = omni.JSONInt(val)
	case "response.usage.total_tokens":
		d.total = omni.JSONInt(val)
	case "response.usage.input_tokens_details.cached_tokens":
		d.usage.CacheRead = omni.JSONInt(val)
	}
	return nil
}

// Event handles one SSE event.
func (d *Decoder) Event(ev *sse.Event) error {
	d.x = event{index: d.last}
	x := &d.x
	if err := omni.WalkJSON(ev.Data, d.field); err != nil || !x.obj {
		return provider.BadEvent(api, ev.Data, err)
	}
	if x.typ == "" {
		x.typ = ev.Type
	}
	e := d.E
	key := x.index
	var it *item
	for i := range d.items {
		if d.items[i].index == key {
			it = &d.items[i]
		}
	}
	want := "" // the item kind the event streams into
	var stream func(int, string)
	done := false // the event repeats what deltas streamed
	switch x.typ {
	case "response.output_item.added":
		d.last = key
		// Arguments given whole here (a server that sends no deltas)
		// count as streamed: output_item.done and arguments.done repeat them.
		d.items = append(d.items, item{index: key, kind: x.itemType, streamed: x.itemType == "function_call" && x.args != ""})
		switch x.itemType {
		case "function_call":
			e.ToolStart(key, x.callID, x.name)
			e.ToolArgs(key, x.args)
		case "reasoning":
			d.apart()
			e.OpenThinking(key)
		}
		return nil
	case "response.output_text.delta", "response.output_text.done":
		want, stream, done = "message", e.Text, x.typ[len(x.typ)-4:] == "done"
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta",
		"response.reasoning_summary_text.done", "response.reasoning_text.done":
		want, stream, done = "reasoning", e.Thinking, x.typ[len(x.typ)-4:] == "done"
	case "response.function_call_arguments.delta", "response.function_call_arguments.done":
		want, stream, done = "function_call", e.ToolArgs, x.typ[len(x.typ)-4:] == "done"
	case "response.output_item.done":
		if it == nil && x.itemType == "message" { // no output_item.added
			d.items = append(d.items, item{index: key, kind: "message"})
			it = &d.items[len(d.items)-1]
		}
		if it == nil || it.kind == "" {
			return nil
		}
		if it.kind == "function_call" && !it.streamed {
			e.ToolArgs(key, x.args)
		}
		if it.kind == "message" {
			if !it.streamed && x.itemText != "" { // its text given here only, whole
				d.textKey = key
				d.inline(d.tags.Feed(x.itemText))
			}
			d.inline(d.tags.Flush())
			e.Close(^key, omni.StatusCompleted)
		}
		if it.kind == "reasoning" && x.encrypted {
			w := provider.JSONWriter{}
			w.Lit("{")
			w.KeyRaw(fidItem, []byte(x.raw))
			w.Close('}')
			e.SetFidelity(key, e.Stamp(w.B))
		}
		e.Close(key, omni.StatusCompleted)
		it.kind = ""
		return nil
	case "response.reasoning_summary_part.added":
		if it != nil && it.kind == "reasoning" && x.summary != it.part {
			it.ended = true
		}
		return nil
	case "response.refusal.delta":
		d.refusal += x.delta
		return nil
	case "response.incomplete":
		d.cut = "incomplete"
		if x.incomplete != "" {
			d.cut += `: "` + x.incomplete + `"`
		}
		d.inline(d.tags.Flush())
		return provider.ErrDone
	case "response.completed", "response.done":
		d.inline(d.tags.Flush())
		return provider.ErrDone
	case "response.failed":
		msg := "response failed"
		if x.errMsg != "" {
			msg += ": " + x.errMsg
		}
		return provider.ErrorEvent(api, x.errType, x.errCode, msg)
	case "error":
		return provider.ErrorEvent(api, x.errType, x.errCode, x.errMsg)
	default:
		return nil
	}
	if it == nil { // deltas without output_item.added
		d.items = append(d.items, item{index: key, kind: want})
		it = &d.items[len(d.items)-1]
	}
	if it.kind != want {
		return nil
	}
	piece := x.delta
	if done {
		// It repeats the part its deltas streamed, or all the deltas
		// since the last done (vLLM's, under an index none of them had).
		repeat := it.streamed && x.summary == it.part || len(it.run) > 0 && x.text == string(it.run)
		it.run = it.run[:0]
		if repeat {
			it.ended = true
			return nil
		}
		piece = x.text // a part of no deltas
	} else {
		it.run = append(it.run, piece...)
	}
	if want == "reasoning" && x.summary != it.part && it.streamed && it.ended {
		e.Thinking(key, "\n\n") // summary parts are paragraphs
	}
	it.part, it.ended = x.summary, done
	it.streamed = it.streamed || piece != ""
	if want == "message" {
		d.textKey = key
		d.inline(d.tags.Feed(piece))
		return nil
	}
	if want == "reasoning" {
		d.apart()
	}
	stream(key, piece)
	return nil
}

// inline streams a piece of a message's thinking inline in its text
// (provider.InlineThinking), under the bitwise complement of the
// message's key, then one of its text.
func (d *Decoder) inline(think, text string) {
	e, key := d.E, d.textKey
	if think != "" {
		e.Thinking(^key, think)
	}
	if text != "" {
		e.Close(^key, omni.StatusCompleted)
		e.Text(key, text)
	}
}

// apart: the server sends reasoning items, so a message's text is text.
func (d *Decoder) apart() {
	if s := d.tags.Apart(); s != "" {
		d.E.Text(d.textKey, s)
	}
}

const api = "openai responses"
