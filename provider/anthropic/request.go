package anthropic

import (
	"strconv"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/internal/errf"
	"github.com/floehq/floe/provider"
)

// Keys of the fidelity object of the thinking messages this adapter emits:
// the block's signature, or the data of a redacted_thinking block. Both
// are sent back with the assistant turn, as the API requires.
const (
	fidSignature = "anthropic_signature"
	fidRedacted  = "anthropic_redacted_thinking"
)

// ThinkingBudget maps a thinking level to budget_tokens: "" and "none"
// (or "off") send no thinking setting; "minimal" 1024, "low" 2048,
// "medium" 8192, "high" 16384, "max" 32768; a decimal number is taken as
// the budget itself. Other levels are an error.
func ThinkingBudget(level string) (int, error) {
	switch level {
	case "", "none", "off":
		return 0, nil
	case "minimal":
		return 1024, nil
	case "low":
		return 2048, nil
	case "medium":
		return 8192, nil
	case "high":
		return 16384, nil
	case "max", "xhigh":
		return 32768, nil
	}
	if n, err := strconv.Atoi(level); err == nil && n >= 1024 {
		return n, nil
	}
	return 0, errf.Errorf("anthropic: unknown thinking level %q (want none, minimal, low, medium, high, max or a budget of at least 1024 tokens)", level)
}

func (m *Model) body(p *engine.GenerateParams) ([]byte, error) {
	budget, err := ThinkingBudget(p.ThinkingLevel)
	if err != nil {
		return nil, err
	}
	maxTokens := m.opts.MaxTokens
	if budget > 0 && maxTokens <= budget {
		maxTokens = budget + DefaultMaxTokens
	}
	w := &provider.JSONWriter{B: make([]byte, 0, 1024)}
	w.Open('{')
	w.KeyStr("model", m.opts.Model)
	w.Key("max_tokens")
	w.Int(int64(maxTokens))
	w.Key("stream")
	w.Bool(true)
	if p.SystemPrompt != "" {
		w.KeyStr("system", p.SystemPrompt)
	}
	w.Key("messages")
	w.Open('[')
	writeMessages(w, m.conv.Request(p.NewMessages))
	w.Close(']')
	if len(p.Tools) > 0 {
		w.Key("tools")
		w.Open('[')
		for i := range p.Tools {
			t := &p.Tools[i]
			w.Open('{')
			w.KeyStr("name", t.Name)
			if t.Description != "" {
				w.KeyStr("description", t.Description)
			}
			w.Key("input_schema")
			w.Raw(provider.Schema(t))
			w.Close('}')
		}
		w.Close(']')
	}
	if budget > 0 {
		w.Key("thinking")
		w.Open('{')
		w.KeyStr("type", "enabled")
		w.Key("budget_tokens")
		w.Int(int64(budget))
		w.Close('}')
	}
	if m.opts.ExtraBody != nil {
		w.Members(m.opts.ExtraBody)
	}
	w.Close('}')
	return w.B, nil
}

// writeMessages maps the conversation to Messages API turns. A user turn
// puts its tool results first (the API wants them before any other
// block), each with the tool's text and images; an assistant turn sends
// its signed and redacted thinking blocks back, then text and tool_use
// blocks in order.
func writeMessages(w *provider.JSONWriter, msgs []omni.Message) {
	provider.Turns(msgs, func(role string, turn []omni.Message) {
		start := len(w.B)
		w.Open('{')
		w.KeyStr("role", role)
		w.Key("content")
		w.Open('[')
		blocks := 0
		if role == omni.RoleAssistant {
			for i := range turn {
				if writeAssistant(w, &turn[i].Payload) {
					blocks++
				}
			}
		} else {
			for i := range turn {
				if p := &turn[i].Payload; p.Type == omni.ToolCallOutput {
					writeToolResult(w, p)
					blocks++
				}
			}
			for i := range turn {
				if p := &turn[i].Payload; p.Type != omni.ToolCallOutput && writeUserBlock(w, p) {
					blocks++
				}
			}
		}
		if blocks == 0 {
			w.B = w.B[:start] // nothing the API would accept
			return
		}
		w.Close(']')
		w.Close('}')
	})
}

func writeAssistant(w *provider.JSONWriter, p *omni.Payload) bool {
	switch p.Type {
	case omni.Text:
		if p.Text == "" {
			return false
		}
		w.Open('{')
		w.KeyStr("type", "text")
		w.KeyStr("text", p.Text)
		w.Close('}')
	case omni.Thinking:
		sig, redacted := fidelity(p.Fidelity)
		switch {
		case redacted != "":
			w.Open('{')
			w.KeyStr("type", "redacted_thinking")
			w.KeyStr("data", redacted)
			w.Close('}')
		case sig != "":
			w.Open('{')
			w.KeyStr("type", "thinking")
			w.KeyStr("thinking", p.Thinking)
			w.KeyStr("signature", sig)
			w.Close('}')
		default:
			return false // unsigned thinking (another provider's) is not sent back
		}
	case omni.ToolCall:
		w.Open('{')
		w.KeyStr("type", "tool_use")
		w.KeyStr("id", p.ToolCallID)
		w.KeyStr("name", p.Name)
		w.Key("input")
		w.Raw(provider.ObjectOr(p.Arguments))
		w.Close('}')
	default:
		return false
	}
	return true
}

func fidelity(raw omni.RawJSON) (sig, redacted string) {
	if len(raw) == 0 {
		return "", ""
	}
	r := omni.NewJSONReader(raw)
	if r.Kind() != "object" {
		return "", ""
	}
	r.Object(func(k []byte) error {
		var err error
		switch string(k) {
		case fidSignature:
			sig, err = r.Str()
		case fidRedacted:
			redacted, err = r.Str()
		default:
			err = r.Skip()
		}
		return err
	})
	return sig, redacted
}

func writeToolResult(w *provider.JSONWriter, p *omni.Payload) {
	w.Open('{')
	w.KeyStr("type", "tool_result")
	w.KeyStr("tool_use_id", p.ToolCallID)
	w.Key("content")
	w.Open('[')
	if p.Output != "" || len(p.Images) == 0 {
		w.Open('{')
		w.KeyStr("type", "text")
		out := p.Output
		if out == "" {
			out = "(no output)"
		}
		w.KeyStr("text", out)
		w.Close('}')
	}
	for _, u := range p.Images {
		writeImage(w, u)
	}
	w.Close(']')
	w.Close('}')
}

func writeUserBlock(w *provider.JSONWriter, p *omni.Payload) bool {
	switch p.Type {
	case omni.Text:
		if p.Text == "" {
			return false
		}
		w.Open('{')
		w.KeyStr("type", "text")
		w.KeyStr("text", p.Text)
		w.Close('}')
	case omni.ImageURL:
		writeImage(w, p.ImageURL)
	case omni.InlineData:
		writeImage(w, provider.DataURL(p))
	default:
		return false
	}
	return true
}

func writeImage(w *provider.JSONWriter, u string) {
	w.Open('{')
	w.KeyStr("type", "image")
	w.Key("source")
	w.Open('{')
	if mime, data, ok := provider.ParseDataURL(u); ok {
		w.KeyStr("type", "base64")
		w.KeyStr("media_type", mime)
		w.KeyStr("data", data)
	} else {
		w.KeyStr("type", "url")
		w.KeyStr("url", u)
	}
	w.Close('}')
	w.Close('}')
}
