package responses

import (
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider"
	"github.com/floehq/floe/provider/sse"
)

// Decoder maps Responses API stream events to an Emitter. Segment keys are
// output indexes (item ids are not stable across all servers).
type Decoder struct {
	E *provider.Emitter

	r     omni.JSONReader
	usage provider.Usage
	total int64
	items []item
	last  int // output_index of the last item added
}

type item struct {
	index    int
	kind     string // message, reasoning, function_call; "" = skipped or done
	streamed bool   // a delta came for the item
	part     int    // reasoning: the summary part being streamed
}

// event is the part of one event this adapter reads.
type event struct {
	typ         string
	outputIndex int
	hasIndex    bool
	summaryIdx  int
	delta       string
	text        string // *.done: text or arguments
	hasText     bool
	item        itemFields
	errType     string
	errMsg      string
	failed      bool // response.failed carried an error
}

type itemFields struct {
	typ, callID, name, args string
	hasArgs                 bool
	raw                     omni.RawJSON
	encrypted               bool
}

func (d *Decoder) find(index int) *item {
	for i := range d.items {
		if d.items[i].index == index {
			return &d.items[i]
		}
	}
	return nil
}

func (d *Decoder) counts() (provider.Usage, int64) {
	t := d.total
	if t == 0 {
		t = d.usage.Input + d.usage.Output
	}
	return d.usage, t
}

// End rejects a stream that ended before response.completed or
// response.incomplete.
func (d *Decoder) End() error {
	return provider.Malformed(api, "the stream ended before response.completed")
}

// Event handles one SSE event.
func (d *Decoder) Event(ev *sse.Event) error {
	r := &d.r
	r.Reset(ev.Data)
	if r.Kind() != "object" {
		return provider.Malformed(api, "an event's data is not a JSON object: "+clip(ev.Data))
	}
	x := event{outputIndex: -1}
	err := r.Object(func(k []byte) error {
		var err error
		switch string(k) {
		case "type":
			x.typ, err = r.Str()
		case "output_index":
			var n int64
			n, err = r.Int()
			x.outputIndex, x.hasIndex = int(n), true
		case "summary_index":
			var n int64
			n, err = r.Int()
			x.summaryIdx = int(n)
		case "delta":
			if r.Kind() != "string" {
				return r.Skip()
			}
			x.delta, err = r.Str()
		case "text", "arguments":
			if r.Kind() != "string" {
				return r.Skip()
			}
			x.text, err = r.Str()
			x.hasText = true
		case "item":
			err = d.itemFields(&x.item)
		case "response":
			err = d.response(&x)
		case "error":
			if r.Null() {
				return nil
			}
			if r.Kind() == "string" {
				x.errMsg, err = r.Str()
				return err
			}
			var raw omni.RawJSON
			if raw, err = r.Raw(); err == nil {
				x.errType, x.errMsg = provider.ErrorFields(raw)
			}
		case "code":
			if r.Kind() == "string" {
				x.errType, err = r.Str()
				return err
			}
			err = r.Skip()
		case "message":
			if r.Kind() == "string" {
				x.errMsg, err = r.Str()
				return err
			}
			err = r.Skip()
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
	if !x.hasIndex {
		x.outputIndex = d.last
	}
	return d.apply(&x)
}

func (d *Decoder) apply(x *event) error {
	e := d.E
	key := x.outputIndex
	it := d.find(key)
	switch x.typ {
	case "response.output_item.added":
		d.last = key
		if it == nil {
			d.items = append(d.items, item{index: key})
			it = &d.items[len(d.items)-1]
		}
		it.kind, it.streamed = x.item.typ, false
		switch it.kind {
		case "function_call":
			e.ToolStart(key, x.item.callID, x.item.name)
			if x.item.args != "" {
				e.ToolArgs(key, x.item.args)
				it.streamed = true
			}
		case "reasoning":
			e.OpenThinking(key)
		}
	case "response.output_text.delta":
		if it = d.ensure(key, "message"); it.kind == "message" {
			it.streamed = it.streamed || x.delta != ""
			e.Text(key, x.delta)
		}
	case "response.output_text.done":
		if it = d.ensure(key, "message"); it.kind == "message" && !it.streamed && x.text != "" {
			it.streamed = true
			e.Text(key, x.text)
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if it = d.ensure(key, "reasoning"); it.kind == "reasoning" {
			if x.summaryIdx != it.part && it.streamed {
				e.Thinking(key, "\n\n")
			}
			it.part = x.summaryIdx
			it.streamed = it.streamed || x.delta != ""
			e.Thinking(key, x.delta)
		}
	case "response.reasoning_summary_text.done", "response.reasoning_text.done":
		if it = d.ensure(key, "reasoning"); it.kind == "reasoning" && !it.streamed && x.text != "" {
			it.streamed = true
			e.Thinking(key, x.text)
		}
	case "response.function_call_arguments.delta":
		if it = d.ensure(key, "function_call"); it.kind == "function_call" {
			it.streamed = it.streamed || x.delta != ""
			e.ToolArgs(key, x.delta)
		}
	case "response.function_call_arguments.done":
		if it = d.ensure(key, "function_call"); it.kind == "function_call" && !it.streamed && x.text != "" {
			it.streamed = true
			e.ToolArgs(key, x.text)
		}
	case "response.output_item.done":
		if it == nil || it.kind == "" {
			return nil
		}
		switch it.kind {
		case "function_call":
			if !it.streamed && x.item.args != "" {
				e.ToolArgs(key, x.item.args)
			}
		case "reasoning":
			if x.item.encrypted && len(x.item.raw) > 0 {
				w := provider.JSONWriter{}
				w.Open('{')
				w.Key(fidItem)
				w.Raw(x.item.raw)
				w.Close('}')
				e.SetFidelity(key, w.B)
			}
		}
		e.Close(key, omni.StatusCompleted)
		it.kind = ""
	case "response.completed", "response.incomplete", "response.done":
		return provider.ErrDone
	case "response.failed":
		msg := "response failed"
		if x.errMsg != "" {
			msg += ": " + x.errMsg
		}
		return provider.ErrorEvent(api, x.errType, msg)
	case "error":
		return provider.ErrorEvent(api, x.errType, x.errMsg)
	}
	return nil
}

// ensure returns the item at key, adding one of kind when a server sent
// deltas without output_item.added.
func (d *Decoder) ensure(key int, kind string) *item {
	if it := d.find(key); it != nil {
		return it
	}
	d.items = append(d.items, item{index: key, kind: kind})
	if kind == "function_call" {
		d.E.ToolStart(key, "", "")
	}
	return &d.items[len(d.items)-1]
}

func (d *Decoder) itemFields(f *itemFields) error {
	r := &d.r
	if r.Kind() != "object" {
		return r.Skip()
	}
	var err error
	if f.raw, err = r.Raw(); err != nil {
		return err
	}
	sub := omni.NewJSONReader(f.raw)
	return sub.Object(func(k []byte) error {
		var err error
		switch string(k) {
		case "type":
			f.typ, err = sub.Str()
		case "call_id":
			f.callID, err = sub.Str()
		case "name":
			f.name, err = sub.Str()
		case "arguments":
			f.args, err = sub.Str()
			f.hasArgs = true
		case "encrypted_content":
			var s string
			s, err = sub.Str()
			f.encrypted = s != ""
		default:
			err = sub.Skip()
		}
		return err
	})
}

// response reads the response object of response.* events: its usage and
// its error.
func (d *Decoder) response(x *event) error {
	r := &d.r
	if r.Kind() != "object" {
		return r.Skip()
	}
	return r.Object(func(k []byte) error {
		switch string(k) {
		case "usage":
			if r.Null() {
				return nil
			}
			return d.readUsage()
		case "error":
			if r.Null() {
				return nil
			}
			raw, err := r.Raw()
			if err == nil {
				x.errType, x.errMsg = provider.ErrorFields(raw)
			}
			return err
		}
		return r.Skip()
	})
}

func (d *Decoder) readUsage() error {
	r := &d.r
	if r.Kind() != "object" {
		return r.Skip()
	}
	return r.Object(func(k []byte) error {
		var err error
		switch string(k) {
		case "input_tokens":
			d.usage.Input, err = r.Int()
		case "output_tokens":
			d.usage.Output, err = r.Int()
		case "total_tokens":
			d.total, err = r.Int()
		case "input_tokens_details":
			if r.Kind() != "object" {
				return r.Skip()
			}
			err = r.Object(func(k []byte) error {
				if string(k) == "cached_tokens" {
					var err error
					d.usage.CacheRead, err = r.Int()
					return err
				}
				return r.Skip()
			})
		default:
			err = r.Skip()
		}
		return err
	})
}

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}
