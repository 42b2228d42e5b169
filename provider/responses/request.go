package responses

import (
	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider"
)

// fidItem is the fidelity key of a thinking message that holds the whole
// reasoning item (its id, summary and encrypted_content), sent back as is
// to the endpoint that made it (provider.EndpointKey beside it: the
// base URL and the account, which alone can decrypt it).
const fidItem = "openai_reasoning_item"

// body builds the request. The adapter keeps the conversation itself, so
// it sends store:false; with a thinking level it asks for reasoning
// summaries and the encrypted reasoning, which later requests of a
// thinking level send back.
// The level is read as every adapter reads it (provider.ParseThinking:
// "max" is "xhigh", a budget its named level, none nothing); a level no
// adapter accepts fails the request.
func (m *Model) body(p *engine.GenerateParams, sent []omni.Message) ([]byte, error) {
	thinking, err := provider.ParseThinking(api, p.ThinkingLevel)
	if err != nil {
		return nil, err
	}
	w := &provider.JSONWriter{B: make([]byte, 0, 1024)}
	w.Lit("{")
	w.KeyStr("model", m.opts.Model)
	w.Lit(`"stream":true,"store":false`)
	if p.SystemPrompt != "" {
		w.KeyStr("instructions", p.SystemPrompt)
	}
	w.Lit(`"input":[`)
	effort := thinking.ReasoningEffort()
	writeItems(w, sent, effort != "", m.opts.NoImages, m.c.Mark)
	w.Close(']')
	if len(p.Tools) > 0 {
		w.Lit(`"tools":[`)
		for i := range p.Tools {
			t := &p.Tools[i]
			w.Lit(`{"type":"function","strict":false`)
			w.KeyStr("name", t.Name)
			w.KeyStr("description", t.Description)
			w.KeyRaw("parameters", provider.Schema(t))
			w.Close('}')
		}
		w.Close(']')
	}
	if effort != "" {
		w.Lit(`"include":["reasoning.encrypted_content"],"reasoning":{"summary":"auto"`)
		w.KeyStr("effort", effort)
		w.Close('}')
	}
	if m.opts.MaxTokens > 0 {
		w.KeyInt("max_output_tokens", int64(m.opts.MaxTokens))
	}
	w.Members(m.opts.ExtraBody)
	w.Close('}')
	return w.B, nil
}

// writeItems maps the conversation to input items: a run of user text and
// images as one user message, assistant text as assistant messages,
// reasoning items this adapter received sent back verbatim when the
// request names a thinking level (reasoning, which sends the reasoning
// setting: a model that does not reason refuses reasoning items, and a
// run without a level is how one is asked of a model switched to) and
// they came from the endpoint of mark, the Conversation's Mark (or name
// none: a Trace of before the marker; another server or account cannot
// decrypt them), function calls and their outputs as function_call /
// function_call_output items, their call_id of at most 64 bytes as the
// API takes it (provider.CallID); a file the model made (an assistant's
// inline_data) as an assistant message of provider.FileNote, its content
// taking text only. Images of tool outputs follow as a user
// message (to a model that takes none, noImages, each is a line of
// provider.NoImage in its output).
func writeItems(w *provider.JSONWriter, msgs []omni.Message, reasoning, noImages bool, mark string) {
	open := false // a user message is open
	var images []string
	for i := 0; i <= len(msgs); i++ {
		var p *omni.Payload
		if i < len(msgs) {
			p = &msgs[i].Payload
		}
		user := p != nil && p.Role != omni.RoleAssistant && (p.Type == omni.Text || p.Type == omni.InlineData || provider.ImageOf(p) != "")
		if !user && p != nil && p.Type == omni.ToolCallOutput {
			if open {
				w.Lit("]}")
				open = false
			}
			w.Lit(`{"type":"function_call_output",`)
			w.KeyStr("call_id", provider.CallID(p.ToolCallID, 64))
			out := p.Output
			if noImages {
				for range p.Images() {
					if out != "" {
						out += "\n"
					}
					out += provider.NoImage
				}
			} else {
				images = append(images, p.Images()...)
			}
			w.KeyStr("output", out)
			w.Close('}')
			continue
		}
		if len(images) > 0 || user && !open {
			if !open {
				w.Lit(`{"role":"user","content":[`)
				open = true
			}
			for _, u := range images {
				writeImage(w, u, noImages)
			}
			images = images[:0]
		}
		if user {
			if p.Type == omni.Text {
				w.Lit(`{"type":"input_text",`)
				w.KeyStr("text", p.Text)
			} else if u, name := provider.DocumentOf(p); u != "" {
				w.Lit(`{"type":"input_file",`)
				w.KeyStr("filename", name)
				w.KeyStr("file_data", u)
			} else {
				writeImage(w, provider.ImageOf(p), noImages)
				continue
			}
			w.Close('}')
			continue
		}
		if open {
			w.Lit("]}")
			open = false
		}
		if p == nil {
			break
		}
		switch p.Type {
		case omni.Text, omni.InlineData: // a file the model made: its note (provider.FileNote)
			t := p.Text
			if p.Type == omni.InlineData {
				t = provider.FileNote(p)
			}
			if t != "" {
				w.Lit(`{"role":"assistant",`)
				w.KeyStr("content", t)
				w.Close('}')
			}
		case omni.Thinking:
			if !reasoning || !provider.FromEndpoint(p.Fidelity(), mark) {
				break
			}
			omni.WalkJSON(p.Fidelity(), func(path []byte, kind byte, val []byte) error {
				if string(path) == fidItem && kind == '}' {
					w.Lit(string(val))
				}
				return nil
			})
		case omni.ToolCall:
			w.Lit(`{"type":"function_call",`)
			w.KeyStr("call_id", provider.CallID(p.ToolCallID, 64))
			w.KeyStr("name", p.Name)
			w.KeyStr("arguments", p.Arguments)
			w.Close('}')
		}
	}
}

// writeImage writes the input_image part of u, a data: URL or a web URL,
// with detail "auto", OpenAI's default: vLLM checks the part against
// OpenAI's type, where detail is required, and refused one without it
// with a 400; an image the API would refuse (provider.NotSent: a data: URL of a media
// type other than PNG, JPEG, GIF and WebP…), or any image to a model that
// takes none (noImages), is an input_text part saying so: sent, it made
// the API refuse the request, and every later one of the session, whose
// history holds the image.
func writeImage(w *provider.JSONWriter, u string, noImages bool) {
	t := provider.NoImage
	if !noImages {
		t = provider.NotSent(u, "the API")
	}
	if t != "" {
		w.Lit(`{"type":"input_text",`)
		w.KeyStr("text", t)
	} else {
		w.Lit(`{"type":"input_image","detail":"auto",`)
		w.KeyStr("image_url", u)
	}
	w.Close('}')
}
