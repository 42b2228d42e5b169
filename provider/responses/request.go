package responses

import (
	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider"
)

// fidItem is the fidelity key of a thinking message that holds the whole
// reasoning item (its id, summary and encrypted_content), sent back as is.
const fidItem = "openai_reasoning_item"

// body builds the request. The adapter keeps the conversation itself, so
// it sends store:false; with a thinking level it asks for reasoning
// summaries and the encrypted reasoning, which later requests send back.
func (m *Model) body(p *engine.GenerateParams) []byte {
	w := &provider.JSONWriter{B: make([]byte, 0, 1024)}
	w.Open('{')
	w.KeyStr("model", m.opts.Model)
	w.Key("stream")
	w.Bool(true)
	w.Key("store")
	w.Bool(false)
	if p.SystemPrompt != "" {
		w.KeyStr("instructions", p.SystemPrompt)
	}
	w.Key("input")
	w.Open('[')
	writeItems(w, m.conv.Request(p.NewMessages))
	w.Close(']')
	if len(p.Tools) > 0 {
		w.Key("tools")
		w.Open('[')
		for i := range p.Tools {
			t := &p.Tools[i]
			w.Open('{')
			w.KeyStr("type", "function")
			w.KeyStr("name", t.Name)
			if t.Description != "" {
				w.KeyStr("description", t.Description)
			}
			w.Key("parameters")
			w.Raw(provider.Schema(t))
			w.Key("strict")
			w.Bool(false)
			w.Close('}')
		}
		w.Close(']')
	}
	if p.ThinkingLevel != "" {
		w.Key("reasoning")
		w.Open('{')
		w.KeyStr("effort", p.ThinkingLevel)
		w.KeyStr("summary", "auto")
		w.Close('}')
		w.Key("include")
		w.Raw([]byte(`["reasoning.encrypted_content"]`))
	}
	if m.opts.MaxTokens > 0 {
		w.Key("max_output_tokens")
		w.Int(int64(m.opts.MaxTokens))
	}
	if m.opts.ExtraBody != nil {
		w.Members(m.opts.ExtraBody)
	}
	w.Close('}')
	return w.B
}

// writeItems maps the conversation to input items: user text and images
// as one user message per run, assistant text as assistant messages,
// reasoning items this adapter received sent back verbatim, function
// calls and their outputs as function_call / function_call_output items.
// Images of tool outputs follow as a user message.
func writeItems(w *provider.JSONWriter, msgs []omni.Message) {
	var parts []*omni.Payload
	var images []string
	flush := func() {
		for _, u := range images {
			parts = append(parts, &omni.Payload{Type: omni.ImageURL, ImageURL: u})
		}
		images = images[:0]
		if len(parts) == 0 {
			return
		}
		w.Open('{')
		w.KeyStr("role", "user")
		w.Key("content")
		w.Open('[')
		for _, p := range parts {
			w.Open('{')
			switch p.Type {
			case omni.Text:
				w.KeyStr("type", "input_text")
				w.KeyStr("text", p.Text)
			case omni.InlineData:
				w.KeyStr("type", "input_image")
				w.KeyStr("image_url", provider.DataURL(p))
			default:
				w.KeyStr("type", "input_image")
				w.KeyStr("image_url", p.ImageURL)
			}
			w.Close('}')
		}
		w.Close(']')
		w.Close('}')
		parts = parts[:0]
	}
	for i := range msgs {
		p := &msgs[i].Payload
		assistant := p.Role == omni.RoleAssistant || p.Type == omni.ToolCall || p.Type == omni.Thinking
		switch {
		case p.Type == omni.ToolCallOutput:
			if len(parts) > 0 {
				flush()
			}
			w.Open('{')
			w.KeyStr("type", "function_call_output")
			w.KeyStr("call_id", p.ToolCallID)
			w.KeyStr("output", p.Output)
			w.Close('}')
			images = append(images, p.Images...)
			continue
		case !assistant && (p.Type == omni.Text || p.Type == omni.ImageURL || p.Type == omni.InlineData):
			parts = append(parts, p)
			continue
		}
		flush()
		switch p.Type {
		case omni.Text:
			if p.Text == "" {
				continue
			}
			w.Open('{')
			w.KeyStr("role", "assistant")
			w.KeyStr("content", p.Text)
			w.Close('}')
		case omni.Thinking:
			if item := reasoningItem(p.Fidelity); item != nil {
				w.Raw(item)
			}
		case omni.ToolCall:
			w.Open('{')
			w.KeyStr("type", "function_call")
			w.KeyStr("call_id", p.ToolCallID)
			w.KeyStr("name", p.Name)
			w.KeyStr("arguments", p.Arguments)
			w.Close('}')
		}
	}
	flush()
}

// reasoningItem returns the reasoning item kept in a fidelity object.
func reasoningItem(raw omni.RawJSON) []byte {
	if len(raw) == 0 {
		return nil
	}
	var item []byte
	r := omni.NewJSONReader(raw)
	if r.Kind() != "object" {
		return nil
	}
	r.Object(func(k []byte) error {
		if string(k) == fidItem && r.Kind() == "object" {
			var err error
			item, err = r.Raw()
			return err
		}
		return r.Skip()
	})
	return item
}
