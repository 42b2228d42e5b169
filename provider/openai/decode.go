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
// Model uses it for every request (a provider.Decoder); a program
// using the adapter never needs it.
type Decoder struct {
	E *provider.Emitter

	usage    provider.Usage
	total    int64
	finished bool
	cached   bool   // a cached_tokens came: DeepSeek's prompt_cache_hit_tokens is not read
	calls    []call // the tool calls seen, by index
	refusal  []byte
	tags     provider.InlineThinking // thinking inline in content
	rcFid    omni.RawJSON            // fidReasoningContent stamped with the endpoint
	details  []detail                // reasoning_details so far, consecutive texts merged
	last     []byte                  // the text of the last of details so far (seal)

	// the chunk being read
	obj, isErr     bool
	finishErr      string // choice 0's finish_reason when it says the reply broke
	cut            string // choice 0's finish_reason when it cut the reply short
	choice         int64
	content, think string
	fromRC         bool // think came in reasoning_content
	tools          []toolDelta
	tool           toolDelta
	nTools         int
	det            detail   // the reasoning detail being read
	dets           []detail // the choice's reasoning details
	detThink       []byte   // their text and summaries
}

// detail is one object of OpenRouter's reasoning_details: a
// reasoning.text's members apart (the pieces of a stream are merged into
// one), any other as it came.
type detail struct {
	_                                 [0]func()
	typ, text, sig, id, format, index string
	raw                               string
}

type call struct {
	_     [0]func()
	index int
	id    string // the provider's id, as sent
}

type toolDelta struct {
	_                     [0]func() // not comparable: no generated equality code
	index                 int
	id, name, args, extra string
	hasIndex              bool
}

// Usage returns the counts the stream stated and the request total.
func (d *Decoder) Usage() (provider.Usage, int64) {
	if len(d.refusal) > 0 {
		// A refusal is not the model's text: it is kept in the fidelity of
		// an empty assistant text message.
		d.E.Complete(omni.PartialText, provider.Fidelity("refusal", string(d.refusal)))
	}
	t := d.total
	if t == 0 {
		t = d.usage.Input + d.usage.Output
	}
	return d.usage, t
}

// Cut implements [provider.Cutter]: finish_reason "length",
// "content_filter", Zhipu's "sensitive" (its safety review) or Mistral's
// "model_length" (the model's context window reached).
func (d *Decoder) Cut() string { return d.cut }

// End accepts a stream that ended without [DONE] once a finish_reason
// came (some compatible servers never send [DONE]).
func (d *Decoder) End() error {
	if d.finished {
		d.flush()
		return nil
	}
	return provider.Malformed(api, "the stream ended before a finish_reason")
}

// Event handles one SSE event.
func (d *Decoder) Event(ev *sse.Event) error {
	if string(ev.Data) == "[DONE]" {
		d.flush()
		return provider.ErrDone
	}
	d.obj, d.finishErr = false, ""
	// An event of type error: llama.cpp's server sends its errors in a
	// stream as {"code","message","type"} on a line "error:", then [DONE].
	d.isErr = ev.Type == "error"
	if err := omni.WalkJSON(ev.Data, d.field); err != nil || !d.obj {
		if typ, code, msg := provider.ErrorFields(ev.Data); err == nil && typ+code+msg != "" {
			// An error given as a list, as Gemini gives its errors
			// ([{"error":{…}}]), in a 200 stream.
			return provider.ErrorEvent(api, typ, code, msg)
		}
		return provider.BadEvent(api, ev.Data, err)
	}
	if d.isErr {
		typ, code, msg := provider.ErrorFields(ev.Data)
		return provider.ErrorEvent(api, typ, code, msg)
	}
	if d.finishErr != "" {
		// OpenRouter ends a stream its upstream broke with finish_reason
		// "error", at times without an error object, Zhipu's GLM with
		// "network_error" when its inference failed, and DeepSeek with
		// "insufficient_system_resource" when it ran short: the answer so
		// far is not the model's whole answer.
		return provider.ErrorEvent(api, "server_error", "", `the stream ended with finish_reason "`+d.finishErr+`"`)
	}
	return nil
}

func (d *Decoder) field(path []byte, kind byte, val []byte) error {
	switch string(path) {
	case "":
		d.obj = kind == '}'
	case "error":
		// Foundry Local sends "error": null in every chunk: no error.
		d.isErr = d.isErr || kind != 'n'
	case "object":
		d.isErr = d.isErr || omni.JSONString(val) == "error"
	case "choices[].index":
		d.choice = omni.JSONInt(val)
	case "choices[].delta.content":
		if kind == '"' {
			d.content = omni.JSONString(val)
		}
	case "choices[].delta.content[].text":
		// Content as parts (Mistral's Magistral): text parts, and
		// thinking parts whose own parts hold the text.
		d.content += omni.JSONString(val)
	case "choices[].delta.content[].thinking[].text":
		d.think += omni.JSONString(val)
	case "choices[].delta.reasoning_details[].type":
		d.det.typ = omni.JSONString(val)
	case "choices[].delta.reasoning_details[].text", "choices[].delta.reasoning_details[].summary":
		d.det.text = omni.JSONString(val)
		d.detThink = append(d.detThink, d.det.text...)
	case "choices[].delta.reasoning_details[].signature":
		d.det.sig = omni.JSONString(val)
	case "choices[].delta.reasoning_details[].id":
		d.det.id = omni.JSONString(val)
	case "choices[].delta.reasoning_details[].format":
		d.det.format = omni.JSONString(val)
	case "choices[].delta.reasoning_details[].index":
		d.det.index = string(val)
	case "choices[].delta.reasoning_details[]":
		if kind == '}' {
			d.det.raw = string(val)
			d.dets = append(d.dets, d.det)
		}
		d.det = detail{}
	case "choices[].delta.reasoning_content", "choices[].delta.reasoning":
		// Some servers send each piece in both fields: it is one piece.
		if d.think == "" {
			d.think = omni.JSONString(val)
			d.fromRC = len(path) > len("choices[].delta.reasoning") // reasoning_content
		}
	case "choices[].delta.refusal":
		d.refusal = append(d.refusal, omni.JSONString(val)...)
	case "choices[].delta.tool_calls[].index":
		d.tool.index, d.tool.hasIndex = int(omni.JSONInt(val)), true
	case "choices[].delta.tool_calls[].id":
		d.tool.id = omni.JSONString(val)
	case "choices[].delta.tool_calls[].function.name":
		d.tool.name = omni.JSONString(val)
	case "choices[].delta.tool_calls[].function.arguments":
		if kind == '}' { // a few servers send the object itself
			d.tool.args = string(val)
		} else {
			d.tool.args = omni.JSONString(val)
		}
	case "choices[].delta.tool_calls[].extra_content":
		// Gemini 3's thought signature ({"google":{"thought_signature":…}}),
		// which must come back on the call: kept in its fidelity.
		if kind == '}' {
			d.tool.extra = string(val)
		}
	case "choices[].delta.tool_calls[]":
		if !d.tool.hasIndex {
			d.tool.index = d.nTools
		}
		d.nTools++
		d.tools = append(d.tools, d.tool)
		d.tool = toolDelta{}
	case "choices[].finish_reason":
		if kind == '"' && len(val) > 2 && d.choice == 0 {
			d.finished = true
			switch r := omni.JSONString(val); r {
			case "error", "network_error", "insufficient_system_resource":
				d.finishErr = r
			case "length", "content_filter", "sensitive", "model_length": // Zhipu's filter says "sensitive"; Mistral's context window, "model_length"
				d.cut = `finish_reason "` + r + `"`
			}
		}
	case "choices[]":
		if d.choice == 0 {
			d.apply()
		}
		d.choice, d.content, d.think, d.fromRC, d.tools, d.nTools = 0, "", "", false, d.tools[:0], 0
		d.dets, d.detThink = d.dets[:0], d.detThink[:0]
	case "usage.prompt_tokens", "usage.input_tokens", "x_groq.usage.prompt_tokens", "choices[].usage.prompt_tokens":
		// Groq's chunks carry the counts in x_groq.usage too, and only
		// there when the top-level usage is null; Moonshot's (Kimi) in
		// the last chunk's choice.
		d.usage.Input = omni.JSONInt(val)
	case "usage.completion_tokens", "usage.output_tokens", "x_groq.usage.completion_tokens", "choices[].usage.completion_tokens":
		d.usage.Output = omni.JSONInt(val)
	case "usage.total_tokens", "x_groq.usage.total_tokens", "choices[].usage.total_tokens":
		d.total = omni.JSONInt(val)
	case "usage.prompt_tokens_details.cached_tokens", "usage.input_tokens_details.cached_tokens", "choices[].usage.cached_tokens", "usage.cached_tokens":
		d.usage.CacheRead = omni.JSONInt(val)
		d.cached = true
	case "usage.prompt_cache_hit_tokens":
		// DeepSeek's documented count of the prompt's cache hits: read
		// when no cached_tokens comes (one that does is kept).
		if !d.cached {
			d.usage.CacheRead = omni.JSONInt(val)
		}
	}
	return nil
}

// apply streams the delta of choice 0.
func (d *Decoder) apply() {
	if d.think == "" {
		// OpenRouter sends its reasoning in reasoning and again in
		// reasoning_details, at times only there.
		d.think = string(d.detThink)
	}
	for _, n := range d.dets {
		if k := len(d.details) - 1; n.typ == "reasoning.text" && k >= 0 && d.details[k].typ == n.typ {
			d.last = append(d.last, n.text...)
			if d.details[k].sig == "" {
				d.details[k].sig = n.sig
			}
		} else {
			d.seal()
			d.details = append(d.details, n)
			d.last = append(d.last[:0], n.text...)
		}
	}
	if d.think != "" {
		// The server sends thinking apart: its content is text.
		d.content = d.tags.Apart() + d.content
	}
	if d.content != "" {
		think, text := d.tags.Feed(d.content)
		d.think += think
		d.content = text
	}
	d.stream(d.think, d.content)
	if d.finished || len(d.tools) > 0 {
		d.flush() // what was held goes before the calls
	}
	e := d.E
	for i := range d.tools {
		t := &d.tools[i]
		key := t.index
		var c *call
		for j := range d.calls {
			if d.calls[j].index == key {
				c = &d.calls[j]
			}
		}
		if c == nil || t.id != "" && c.id != "" && t.id != c.id {
			// a new call: its first delta, or a new id at a used index
			e.Close(keyThinking, omni.StatusCompleted)
			e.Close(keyText, omni.StatusCompleted)
			e.Close(key, omni.StatusCompleted)
			if c == nil {
				d.calls = append(d.calls, call{index: key})
				c = &d.calls[len(d.calls)-1]
			}
			c.id = t.id
			e.ToolOpen(key, t.id, t.name) // its start waits for the name's last piece
		} else if c.id == "" {
			c.id = t.id
		}
		e.ToolName(key, t.name)
		e.ToolArgs(key, t.args)
		if t.extra != "" {
			e.SetFidelity(key, omni.RawJSON(t.extra))
		}
	}
}

// flush streams what content the tags held back (Decoder.tags), once the
// reply ended, and gives the first tool call the reasoning details of
// the reply (writeAssistant sends them back with the turn's calls).
func (d *Decoder) flush() {
	d.stream(d.tags.Flush())
	if len(d.details) > 0 && len(d.calls) > 0 {
		d.seal()
		w := &provider.JSONWriter{}
		w.Lit(`{"reasoning_details":[`)
		for i := range d.details {
			n := &d.details[i]
			if n.typ != "reasoning.text" {
				w.Lit(n.raw)
				continue
			}
			w.Lit(`{"type":"reasoning.text",`)
			w.KeyStr("text", n.text)
			for _, m := range [...][2]string{{"signature", n.sig}, {"id", n.id}, {"format", n.format}} {
				if m[1] != "" {
					w.KeyStr(m[0], m[1])
				}
			}
			if n.index != "" {
				w.Lit(`"index":` + n.index)
			}
			w.Close('}')
		}
		w.Close(']')
		w.Close('}')
		d.E.SetFidelity(d.calls[0].index, d.E.Stamp(w.B))
		d.details = nil
	}
}

// seal sets the text of the last reasoning detail, its pieces joined in
// d.last: appended to, a reasoning of many pieces is joined in linear
// time.
func (d *Decoder) seal() {
	if k := len(d.details) - 1; k >= 0 {
		d.details[k].text = string(d.last)
	}
}

// stream streams a piece of thinking, then one of text.
func (d *Decoder) stream(think, text string) {
	e := d.E
	if think != "" {
		e.Close(keyText, omni.StatusCompleted) // reasoning after text is a segment of its own, in order
		e.Thinking(keyThinking, think)
		if d.fromRC {
			if d.rcFid == nil {
				d.rcFid = e.Stamp(fidReasoningContent)
			}
			e.SetFidelity(keyThinking, d.rcFid)
		}
	}
	if text != "" {
		e.Close(keyThinking, omni.StatusCompleted)
		e.Text(keyText, text)
	}
}

const api = "openai"

// fidReasoningContent is the fidelity of a thinking message that came in
// reasoning_content (DeepSeek, Kimi, llama.cpp, vLLM), stamped with the
// endpoint it came from (provider.EndpointKey): writeAssistant sends it
// back there, to that endpoint only, with the turn's tool calls, as
// DeepSeek's thinking mode requires of a turn that called tools.
var fidReasoningContent = omni.RawJSON(`{"reasoning_field":"reasoning_content"}`)
