package openai

import (
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider"
	"github.com/floehq/floe/provider/sse"
)

// Segment keys of the Emitter: tool calls use their index (≥ 0).
const (
	keyText     = -1
	keyThinking = -2
)

// Decoder maps Chat Completions chunks to an Emitter.
type Decoder struct {
	E *provider.Emitter

	r        omni.JSONReader
	usage    provider.Usage
	total    int64
	finished bool
	calls    []call // the tool calls seen, by index
	refusal  []byte
}

type call struct {
	index int
	id    string // the provider's id, as sent
}

// delta is one choice's delta.
type delta struct {
	content, reasoning, refusal string
	tools                       []toolDelta
}

type toolDelta struct {
	index             int
	id, name, args    string
	hasIndex, hasArgs bool
}

func (d *Decoder) usageCounts() (provider.Usage, int64) {
	t := d.total
	if t == 0 {
		t = d.usage.Input + d.usage.Output
	}
	return d.usage, t
}

func (d *Decoder) counts() (provider.Usage, int64) {
	d.flushRefusal()
	return d.usageCounts()
}

// flushRefusal records a refusal: an assistant text message with empty text
// whose fidelity holds the refusal (a refusal is not the model's text).
func (d *Decoder) flushRefusal() {
	if len(d.refusal) == 0 {
		return
	}
	w := provider.JSONWriter{}
	w.Open('{')
	w.KeyStr("refusal", string(d.refusal))
	w.Close('}')
	m := omni.AssistantText("", omni.StatusCompleted)
	m.Payload.Fidelity = w.B
	d.E.Complete(m)
	d.refusal = nil
}

// End accepts a stream that ended without [DONE] once a finish_reason
// came (some compatible servers never send [DONE]).
func (d *Decoder) End() error {
	if d.finished {
		return nil
	}
	return provider.Malformed(api, "the stream ended before a finish_reason")
}

// Event handles one SSE event.
func (d *Decoder) Event(ev *sse.Event) error {
	data := ev.Data
	if string(data) == "[DONE]" {
		return provider.ErrDone
	}
	r := &d.r
	r.Reset(data)
	if r.Kind() != "object" {
		return provider.Malformed(api, "an event's data is not a JSON object: "+clip(data))
	}
	var choices []delta
	var finish bool
	isErr := false
	err := r.Object(func(k []byte) error {
		switch string(k) {
		case "choices":
			if r.Null() {
				return nil
			}
			return r.Array(func(int) error {
				dl, index, fin, err := d.choice()
				if err == nil && index == 0 {
					choices = append(choices, dl)
					finish = finish || fin
				}
				return err
			})
		case "usage":
			if r.Null() {
				return nil
			}
			return d.readUsage()
		case "error":
			isErr = true
			return r.Skip()
		case "object":
			s, err := r.Str()
			if s == "error" {
				isErr = true
			}
			return err
		}
		return r.Skip()
	})
	if err == nil {
		err = r.End()
	}
	if err != nil {
		return provider.Malformed(api, "bad chunk: "+err.Error()+": "+clip(data))
	}
	if isErr {
		typ, msg := provider.ErrorFields(data)
		return provider.ErrorEvent(api, typ, msg)
	}
	for i := range choices {
		d.apply(&choices[i])
	}
	if finish {
		d.finished = true
	}
	return nil
}

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// choice reads one element of choices.
func (d *Decoder) choice() (dl delta, index int, finish bool, err error) {
	r := &d.r
	if r.Kind() != "object" {
		return dl, 0, false, r.Skip()
	}
	err = r.Object(func(k []byte) error {
		switch string(k) {
		case "index":
			n, err := r.Int()
			index = int(n)
			return err
		case "delta", "message":
			if r.Null() {
				return nil
			}
			return d.delta(&dl)
		case "finish_reason":
			s, err := r.Str()
			finish = s != ""
			return err
		}
		return r.Skip()
	})
	return
}

func (d *Decoder) delta(dl *delta) error {
	r := &d.r
	return r.Object(func(k []byte) error {
		var err error
		switch string(k) {
		case "content":
			if r.Kind() != "string" {
				return r.Skip()
			}
			dl.content, err = r.Str()
		case "reasoning_content", "reasoning":
			if r.Kind() != "string" {
				return r.Skip()
			}
			var s string
			s, err = r.Str()
			dl.reasoning += s
		case "refusal":
			dl.refusal, err = r.Str()
		case "tool_calls":
			if r.Null() {
				return nil
			}
			err = r.Array(func(i int) error {
				t := toolDelta{index: i}
				err := r.Object(func(k []byte) error {
					var err error
					switch string(k) {
					case "index":
						var n int64
						n, err = r.Int()
						t.index, t.hasIndex = int(n), true
					case "id":
						t.id, err = r.Str()
					case "function":
						if r.Null() {
							return nil
						}
						err = r.Object(func(k []byte) error {
							var err error
							switch string(k) {
							case "name":
								t.name, err = r.Str()
							case "arguments":
								if r.Kind() == "object" { // a few servers send the object itself
									var raw omni.RawJSON
									raw, err = r.Raw()
									t.args, t.hasArgs = string(raw), true
									return err
								}
								t.args, err = r.Str()
								t.hasArgs = true
							default:
								err = r.Skip()
							}
							return err
						})
					default:
						err = r.Skip()
					}
					return err
				})
				if err == nil {
					dl.tools = append(dl.tools, t)
				}
				return err
			})
		default:
			err = r.Skip()
		}
		return err
	})
}

// apply streams one delta.
func (d *Decoder) apply(dl *delta) {
	e := d.E
	if dl.reasoning != "" {
		e.Thinking(keyThinking, dl.reasoning)
	}
	if dl.content != "" {
		e.Close(keyThinking, omni.StatusCompleted)
		e.Text(keyText, dl.content)
	}
	d.refusal = append(d.refusal, dl.refusal...)
	for i := range dl.tools {
		t := &dl.tools[i]
		key := t.index
		c := d.find(key)
		if c == nil || t.id != "" && t.id != c.id && c.id != "" {
			// a new call: its first delta, or a new id at a used index
			e.Close(keyThinking, omni.StatusCompleted)
			e.Close(keyText, omni.StatusCompleted)
			if c != nil {
				e.Close(key, omni.StatusCompleted)
				c.id = t.id
			} else {
				d.calls = append(d.calls, call{index: key, id: t.id})
			}
			e.ToolStart(key, t.id, t.name)
		} else if c.id == "" && t.id != "" {
			c.id = t.id
		}
		if t.name != "" {
			e.ToolName(key, t.name)
		}
		if t.args != "" {
			e.ToolArgs(key, t.args)
		}
	}
}

func (d *Decoder) find(index int) *call {
	for i := range d.calls {
		if d.calls[i].index == index {
			return &d.calls[i]
		}
	}
	return nil
}

func (d *Decoder) readUsage() error {
	r := &d.r
	if r.Kind() != "object" {
		return r.Skip()
	}
	return r.Object(func(k []byte) error {
		var err error
		switch string(k) {
		case "prompt_tokens", "input_tokens":
			d.usage.Input, err = r.Int()
		case "completion_tokens", "output_tokens":
			d.usage.Output, err = r.Int()
		case "total_tokens":
			d.total, err = r.Int()
		case "prompt_tokens_details", "input_tokens_details":
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
