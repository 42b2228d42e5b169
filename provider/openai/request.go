package openai

import (
	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider"
)

// body builds the request: the system prompt, the conversation, the tools.
func (m *Model) body(p *engine.GenerateParams) []byte {
	w := &provider.JSONWriter{B: make([]byte, 0, 1024)}
	w.Open('{')
	w.KeyStr("model", m.opts.Model)
	w.Key("stream")
	w.Bool(true)
	w.Key("stream_options")
	w.Raw([]byte(`{"include_usage":true}`))
	w.Key("messages")
	w.Open('[')
	if p.SystemPrompt != "" {
		w.Open('{')
		w.KeyStr("role", "system")
		w.KeyStr("content", p.SystemPrompt)
		w.Close('}')
	}
	writeMessages(w, m.conv.Request(p.NewMessages))
	w.Close(']')
	if len(p.Tools) > 0 {
		w.Key("tools")
		w.Open('[')
		for i := range p.Tools {
			t := &p.Tools[i]
			w.Open('{')
			w.KeyStr("type", "function")
			w.Key("function")
			w.Open('{')
			w.KeyStr("name", t.Name)
			if t.Description != "" {
				w.KeyStr("description", t.Description)
			}
			w.Key("parameters")
			w.Raw(provider.Schema(t))
			w.Close('}')
			w.Close('}')
		}
		w.Close(']')
	}
	if p.ThinkingLevel != "" {
		w.KeyStr("reasoning_effort", p.ThinkingLevel)
	}
	if m.opts.MaxTokens > 0 {
		w.Key("max_tokens")
		w.Int(int64(m.opts.MaxTokens))
	}
	if m.opts.ExtraBody != nil {
		w.Members(m.opts.ExtraBody)
	}
	w.Close('}')
	return w.B
}

// writeMessages maps the conversation to Chat Completions messages: a user
// turn becomes one user message (text and image parts) plus one tool
// message per tool output; an assistant turn one assistant message with
// its text and tool calls. Thinking is not sent back (the API has no field
// for it). Images of tool outputs follow the tool messages as a user
// message, since tool messages carry text only.
func writeMessages(w *provider.JSONWriter, msgs []omni.Message) {
	provider.Turns(msgs, func(role string, turn []omni.Message) {
		if role == omni.RoleAssistant {
			writeAssistant(w, turn)
			return
		}
		var images []string
		var parts []omni.Message
		flush := func() {
			if len(parts) > 0 {
				writeUser(w, parts)
				parts = parts[:0]
			}
		}
		for i := range turn {
			p := &turn[i].Payload
			if p.Type != omni.ToolCallOutput {
				parts = append(parts, turn[i])
				continue
			}
			flush()
			w.Open('{')
			w.KeyStr("role", "tool")
			w.KeyStr("tool_call_id", p.ToolCallID)
			w.KeyStr("content", p.Output)
			w.Close('}')
			images = append(images, p.Images...)
		}
		for _, u := range images {
			parts = append(parts, omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.ImageURL, Role: omni.RoleUser, ImageURL: u}})
		}
		flush()
	})
}

func writeUser(w *provider.JSONWriter, parts []omni.Message) {
	w.Open('{')
	w.KeyStr("role", "user")
	w.Key("content")
	if len(parts) == 1 && parts[0].Payload.Type == omni.Text {
		w.Str(parts[0].Payload.Text)
		w.Close('}')
		return
	}
	w.Open('[')
	for i := range parts {
		p := &parts[i].Payload
		switch p.Type {
		case omni.Text:
			w.Open('{')
			w.KeyStr("type", "text")
			w.KeyStr("text", p.Text)
			w.Close('}')
		case omni.ImageURL, omni.InlineData:
			u := p.ImageURL
			if p.Type == omni.InlineData {
				u = provider.DataURL(p)
			}
			w.Open('{')
			w.KeyStr("type", "image_url")
			w.Key("image_url")
			w.Open('{')
			w.KeyStr("url", u)
			w.Close('}')
			w.Close('}')
		}
	}
	w.Close(']')
	w.Close('}')
}

func writeAssistant(w *provider.JSONWriter, turn []omni.Message) {
	var text []byte
	calls := 0
	for i := range turn {
		switch turn[i].Payload.Type {
		case omni.Text:
			text = append(text, turn[i].Payload.Text...)
		case omni.ToolCall:
			calls++
		}
	}
	if len(text) == 0 && calls == 0 {
		return
	}
	w.Open('{')
	w.KeyStr("role", "assistant")
	w.KeyStr("content", string(text))
	if calls > 0 {
		w.Key("tool_calls")
		w.Open('[')
		for i := range turn {
			p := &turn[i].Payload
			if p.Type != omni.ToolCall {
				continue
			}
			w.Open('{')
			w.KeyStr("id", p.ToolCallID)
			w.KeyStr("type", "function")
			w.Key("function")
			w.Open('{')
			w.KeyStr("name", p.Name)
			w.KeyStr("arguments", p.Arguments)
			w.Close('}')
			w.Close('}')
		}
		w.Close(']')
	}
	w.Close('}')
}
