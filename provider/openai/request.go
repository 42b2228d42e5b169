package openai

import (
	"strings"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider"
)

// body builds the request: the system prompt, the conversation, the tools.
// The thinking level becomes reasoning_effort (provider.ParseThinking:
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
	w.Lit(`"stream":true,`)
	mistral := strings.Contains(m.opts.BaseURL, "//api.mistral.ai")
	if !mistral && !m.noStream {
		// Mistral's API refuses stream_options (422: extra inputs are not
		// permitted) and sends the usage without it.
		w.Lit(`"stream_options":{"include_usage":true},`)
	}
	w.Lit(`"messages":[`)
	if p.SystemPrompt != "" {
		w.Lit(`{"role":"system","content":`)
		w.Str(p.SystemPrompt)
		w.Close('}')
	}
	writeMessages(w, sent, &dialect{gemini: m.opts.Gemini, mistral: mistral, strict: deepseekThinking(&m.opts), noImages: m.opts.NoImages, mark: m.c.Mark})
	w.Close(']')
	if len(p.Tools) > 0 {
		w.Lit(`"tools":[`)
		for i := range p.Tools {
			t := &p.Tools[i]
			w.Lit(`{"type":"function","function":{`)
			w.KeyStr("name", t.Name)
			w.KeyStr("description", t.Description)
			w.KeyRaw("parameters", provider.Schema(t))
			w.Lit("}}")
		}
		w.Close(']')
	}
	if effort := thinking.ReasoningEffort(); effort != "" {
		if m.opts.Gemini {
			effort = geminiEffort(effort)
		}
		w.KeyStr("reasoning_effort", effort)
	}
	if m.opts.MaxTokens > 0 {
		// OpenAI's reasoning models refuse max_tokens, which the API
		// replaced with max_completion_tokens; other servers (Mistral)
		// refuse the new name.
		key := "max_tokens"
		if m.opts.BaseURL == DefaultBaseURL {
			key = "max_completion_tokens"
		}
		w.KeyInt(key, int64(m.opts.MaxTokens))
	}
	w.Members(m.opts.ExtraBody)
	w.Close('}')
	return w.B, nil
}

// geminiEffort maps a reasoning effort to one Gemini's OpenAI endpoint
// accepts: it takes none, low, medium and high, and answers 400 to
// minimal and xhigh. minimal is low (Google maps both to the same 1,024
// tokens of a Gemini 2.5 and to Gemini 3 Pro's low), xhigh high, the
// deepest it has.
func geminiEffort(effort string) string {
	switch effort {
	case "minimal":
		return "low"
	case "xhigh":
		return "high"
	}
	return effort
}

// dialect is what the messages of a request are written for.
type dialect struct {
	gemini, mistral bool
	// strict is DeepSeek's API in its thinking mode, which refuses a
	// turn that called tools without the reasoning_content it came with.
	strict bool
	// noImages sends each image as provider.NoImage (Options.NoImages).
	noImages bool
	mark     string          // the conversation's Mark
	flat     map[string]bool // the calls written as text (strict)
}

// writeMessages maps the conversation to Chat Completions messages: a run
// of user text and images becomes one user message of parts, each tool
// output a tool message, an assistant turn one assistant message with its
// text and tool calls. Thinking is not sent back (the API has no field for
// it), except the reasoning of a turn that called tools when it came in
// reasoning_content from this endpoint (writeAssistant). Images of tool
// outputs follow the tool messages as a user message, since tool
// messages carry text only, before the user's text that follows them (to
// a model that takes none, d.noImages, each is a line of provider.NoImage in its
// tool message). Tool call ids go as callID makes them, to
// Mistral's API as it takes them. The output of a call written as text
// is text too, a part of the user message.
func writeMessages(w *provider.JSONWriter, msgs []omni.Message, d *dialect) {
	provider.Turns(msgs, func(role string, turn []omni.Message) {
		if role == omni.RoleAssistant {
			writeAssistant(w, turn, d)
			return
		}
		var images []string
		open := false
		for i := range turn {
			p := &turn[i].Payload
			if p.Type == omni.ToolCallOutput && !d.flat[p.ToolCallID] {
				if open {
					w.Lit("]}")
					open = false
				}
				w.Lit(`{"role":"tool",`)
				w.KeyStr("tool_call_id", callID(p.ToolCallID, d.mistral))
				out := p.Output
				if d.noImages {
					for range p.Images() {
						if out != "" {
							out += "\n"
						}
						out += provider.NoImage
					}
				} else {
					images = append(images, p.Images()...)
				}
				w.KeyStr("content", out)
				w.Close('}')
				continue
			}
			if !open {
				w.Lit(`{"role":"user","content":[`)
				open = true
				for _, u := range images { // the outputs' images before what follows them
					writeImage(w, u, d)
				}
				images = images[:0]
			}
			if p.Type == omni.ToolCallOutput {
				st := p.StopReason
				if st == "" {
					st = omni.StatusCompleted
				}
				writeText(w, `[tool_call_output id="`+p.ToolCallID+`" status="`+st+`"]`+p.Output+"[/tool_call_output]")
				images = append(images, p.Images()...)
			} else if p.Type == omni.Text {
				writeText(w, p.Text)
			} else if u := provider.ImageOf(p); u != "" {
				writeImage(w, u, d)
			} else if u, name := provider.DocumentOf(p); u != "" {
				w.Lit(`{"type":"file","file":{`)
				w.KeyStr("filename", name)
				w.KeyStr("file_data", u)
				w.Lit("}}")
			}
		}
		if len(images) > 0 {
			if !open {
				w.Lit(`{"role":"user","content":[`)
				open = true
			}
			for _, u := range images {
				writeImage(w, u, d)
			}
		}
		if open {
			w.Lit("]}")
		}
	})
}

func writeText(w *provider.JSONWriter, s string) {
	w.Lit(`{"type":"text",`)
	w.KeyStr("text", s)
	w.Close('}')
}

// writeImage writes the image_url part of u, a data: URL or a web URL; an
// image the API would refuse (provider.NotSent: a data: URL of a media
// type other than PNG, JPEG, GIF and WebP…), or any image to a model that
// takes none (d.noImages), is a text part saying so: sent, it made the
// server refuse the request, and every later one of the session, whose
// history holds the image.
func writeImage(w *provider.JSONWriter, u string, d *dialect) {
	t := provider.NoImage
	if !d.noImages {
		t = provider.NotSent(u, "the API")
	}
	if t != "" {
		writeText(w, t)
		return
	}
	w.Lit(`{"type":"image_url","image_url":{`)
	w.KeyStr("url", u)
	w.Lit("}}")
}

// writeAssistant writes an assistant turn. A file the model made
// (inline_data) is a line of provider.FileNote in its text. Its reasoning goes back in
// reasoning_content when the turn called tools and the reasoning came in
// that field from d's endpoint (or names no endpoint: a Trace of before
// the marker): DeepSeek's thinking mode answers 400 without it (and
// ignores it in a turn without tool calls), another server may refuse the
// field (Cerebras). To DeepSeek's API in that mode (d.strict), a turn
// that called tools without reasoning_content of its own (another
// model's) has no value DeepSeek documents or accepts in its place: its
// calls go as text, in the form of the engine's transcripts
// ([tool_call name="…" id="…"]arguments[/tool_call]), and their outputs
// as text too (writeMessages).
//
// To Gemini (d.gemini), a tool call's fidelity that holds its thought
// signature goes back as the call's extra_content, as it came; a turn
// whose first call has none (a call of another model, or from a Trace of
// before signatures were kept) sends Google's documented stand-in on that
// call, since Gemini 3 checks the first call of each step of the current
// turn and answers 400 without it (the later calls of parallel ones come
// without a signature and go back so). Other servers get no
// extra_content.
func writeAssistant(w *provider.JSONWriter, turn []omni.Message, d *dialect) {
	var text, reasoning, details []byte
	calls, noted := 0, false
	for i := range turn {
		switch p := &turn[i].Payload; p.Type {
		case omni.Text:
			if noted && p.Text != "" {
				text = append(text, '\n')
			}
			text, noted = append(text, p.Text...), false
		case omni.InlineData: // a file the model made: its content takes text only
			if len(text) > 0 {
				text = append(text, '\n')
			}
			text, noted = append(text, provider.FileNote(p)...), true
		case omni.ToolCall:
			calls++
			if f := p.Fidelity(); details == nil && provider.FromEndpoint(f, d.mark) {
				details = reasoningDetails(f)
			}
		case omni.Thinking:
			if ownReasoning(p.Fidelity(), d.mark) {
				reasoning = append(reasoning, p.Thinking...)
			}
		}
	}
	if len(text) == 0 && calls == 0 {
		return
	}
	if calls > 0 && len(reasoning) == 0 && d.strict {
		for i := range turn {
			if p := &turn[i].Payload; p.Type == omni.ToolCall {
				if len(text) > 0 {
					text = append(text, '\n')
				}
				text = append(text, `[tool_call name="`+p.Name+`" id="`+p.ToolCallID+`"]`+p.Arguments+"[/tool_call]"...)
				if d.flat == nil {
					d.flat = map[string]bool{}
				}
				d.flat[p.ToolCallID] = true
			}
		}
		calls = 0
	}
	w.Lit(`{"role":"assistant",`)
	w.KeyStr("content", string(text))
	if calls > 0 && len(reasoning) > 0 {
		w.KeyStr("reasoning_content", string(reasoning))
	}
	if calls > 0 && details != nil {
		w.KeyRaw("reasoning_details", details)
	}
	if calls > 0 {
		w.Lit(`"tool_calls":[`)
		first := true
		for i := range turn {
			if p := &turn[i].Payload; p.Type == omni.ToolCall {
				w.Lit("{")
				w.KeyStr("id", callID(p.ToolCallID, d.mistral))
				if d.gemini {
					if f := p.Fidelity(); hasSignature(f) {
						w.KeyRaw("extra_content", f)
					} else if first {
						w.Lit(`"extra_content":{"google":{"thought_signature":"` + skipSignature + `"}},`)
					}
				}
				first = false
				w.Lit(`"type":"function","function":{`)
				w.KeyStr("name", p.Name)
				w.KeyStr("arguments", string(provider.ObjectOr(p.Arguments))) // servers that parse it (vLLM, Ollama) refuse "" or a cut-off object
				w.Lit("}}")
			}
		}
		w.Close(']')
	}
	w.Close('}')
}

// ownReasoning reports whether f, a thinking message's fidelity, says it
// came in reasoning_content from the endpoint of mark (or from one it
// does not name).
func ownReasoning(f omni.RawJSON, mark string) bool {
	return strings.HasPrefix(string(f), string(fidReasoningContent[:len(fidReasoningContent)-1])) && provider.FromEndpoint(f, mark)
}

// deepseekHost serves DeepSeek's API.
const deepseekHost = "api.deepseek.com"

// deepseekThinking reports whether o sends requests to DeepSeek's API in
// its thinking mode, which is on unless the model is deepseek-chat (the
// name of its mode without thinking) or ExtraBody holds
// "thinking":{"type":"disabled"}.
func deepseekThinking(o *Options) bool {
	if !hostIs(o.BaseURL, deepseekHost) || o.Model == "deepseek-chat" {
		return false
	}
	off := false
	if len(o.ExtraBody) > 0 {
		omni.WalkJSON(o.ExtraBody, func(path []byte, kind byte, val []byte) error {
			off = off || string(path) == "thinking.type" && string(val) == `"disabled"`
			return nil
		})
	}
	return !off
}

// callID is a tool call id as the server takes it: at most 40 bytes
// (OpenAI's limit; an id of another provider may be longer), and to
// Mistral's API (mistral) 9 letters and digits, its only form. A longer or
// other id is replaced by one made from its hash, the same in the call
// and its output.
func callID(id string, mistral bool) string {
	if mistral {
		return provider.AlnumID(id, 9)
	}
	return provider.CallID(id, 40)
}

// reasoningDetails returns the reasoning_details array kept in f, a tool
// call's fidelity (Decoder.flush), or nil.
func reasoningDetails(f omni.RawJSON) []byte {
	var r []byte
	omni.WalkJSON(f, func(path []byte, kind byte, val []byte) error {
		if kind == ']' && string(path) == "reasoning_details" {
			r = val
		}
		return nil
	})
	return r
}

// skipSignature is the thought signature Google documents for a function
// call Gemini did not make, which its check of signatures lets pass.
const skipSignature = "skip_thought_signature_validator"

// hasSignature reports whether f, a tool call's fidelity, holds Gemini's
// thought signature (extra_content.google.thought_signature, as the
// decoder keeps it).
func hasSignature(f omni.RawJSON) bool {
	found := false
	omni.WalkJSON(f, func(path []byte, kind byte, val []byte) error {
		found = found || kind == '"' && len(val) > 2 && string(path) == "google.thought_signature"
		return nil
	})
	return found
}
