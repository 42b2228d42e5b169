package anthropic

import (
	"errors"
	"strings"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/internal/errf"
	"github.com/floehq/floe/provider"
)

// Keys of the fidelity object of the thinking messages this adapter emits:
// the block's signature, or the data of a redacted_thinking block, beside
// the endpoint that made them (provider.EndpointKey). Both are sent back
// with the assistant turn, as the API requires, to that endpoint only.
const (
	fidSignature = "anthropic_signature"
	fidRedacted  = "anthropic_redacted_thinking"
)

// ThinkingBudget maps a thinking level to budget_tokens: "" and "none"
// (or "off") send no thinking setting; "minimal" 1024, "low" 2048,
// "medium" 8192, "high" 16384, "max" (or "xhigh") 32768; a decimal number
// of at least 1024 is the budget itself. Other levels are an error; the
// other adapters accept the same levels (provider.ParseThinking).
func ThinkingBudget(level string) (int, error) {
	t, err := provider.ParseThinking(api, level)
	return t.Budget, err
}

func (m *Model) body(p *engine.GenerateParams, sent []omni.Message) ([]byte, error) {
	t, err := provider.ParseThinking(api, p.ThinkingLevel)
	if err != nil {
		return nil, err
	}
	budget := t.Budget
	adaptive := budget > 0 && Adaptive(m.opts.Model)
	maxTokens := m.opts.MaxTokens
	explicit := maxTokens > 0
	if !explicit {
		maxTokens = DefaultMaxTokens
	}
	switch {
	case budget == 0 || adaptive || budget < maxTokens:
	case explicit && maxTokens > 2*provider.MinThinkingBudget:
		// The caller's max_tokens is a model's limit, or theirs: the
		// budget, which must stay below it, takes half of it.
		budget = maxTokens / 2
	default:
		maxTokens = budget + DefaultMaxTokens
	}
	w := &provider.JSONWriter{B: make([]byte, 0, 1024)}
	w.Lit("{")
	w.KeyStr("model", m.opts.Model)
	w.KeyInt("max_tokens", int64(maxTokens))
	w.Lit(`"stream":true`)
	cache := ""
	switch {
	case m.opts.NoCache:
	case m.opts.CacheTTL == "1h":
		cache = cacheControl1h
	default:
		cache = cacheControl
	}
	switch {
	case p.SystemPrompt == "":
	case cache != "" && !blank(p.SystemPrompt):
		// One text block with a breakpoint: tools and system are cached.
		w.Lit(`"system":[`)
		writeText(w, p.SystemPrompt)
		mark(w, len(w.B)-1, cache)
		w.Close(']')
	default:
		w.KeyStr("system", p.SystemPrompt)
	}
	w.Lit(`"messages":[`)
	writeMessages(w, fewer(sent), cache, m.c.Mark, m.opts.NoImages)
	w.Close(']')
	if len(p.Tools) > 0 {
		w.Lit(`"tools":[`)
		for i := range p.Tools {
			t := &p.Tools[i]
			if !toolName(t.Name) {
				return nil, errors.New(api + ": tool " + errf.Quote(t.Name) + ": the API takes a name of 1 to 128 letters, digits, '_' and '-' (rename the tool)")
			}
			w.Lit("{")
			w.KeyStr("name", t.Name)
			w.KeyStr("description", t.Description)
			w.KeyRaw("input_schema", provider.Schema(t))
			w.Close('}')
		}
		w.Close(']')
	}
	switch {
	case adaptive && m.ownConfig:
		w.Lit(`"thinking":{"type":"adaptive"}`) // ExtraBody's output_config goes instead
	case adaptive:
		// Claude 4.6 and later: the model decides how much to think, at
		// an effort (low, medium, high, max); 4.7 and later refuse a
		// budget.
		effort := t.Effort
		if effort == "minimal" {
			effort = "low"
		}
		w.Lit(`"thinking":{"type":"adaptive"},"output_config":{`)
		w.KeyStr("effort", effort)
		w.Close('}')
	case budget > 0:
		w.Lit(`"thinking":{"type":"enabled",`)
		w.KeyInt("budget_tokens", int64(budget))
		w.Close('}')
	}
	w.Members(m.opts.ExtraBody)
	w.Close('}')
	return w.B, nil
}

// cacheControl marks a prompt-cache breakpoint: the prefix up to and
// including its block is cached; cacheControl1h for an hour.
const (
	cacheControl   = `,"cache_control":{"type":"ephemeral"}`
	cacheControl1h = `,"cache_control":{"type":"ephemeral","ttl":"1h"}`
)

// mark puts the breakpoint cc into the block whose closing brace is w.B[at].
func mark(w *provider.JSONWriter, at int, cc string) {
	w.B = append(w.B[:at], append([]byte(cc), w.B[at:]...)...)
}

// writeMessages maps the conversation to Messages API turns. A user turn
// puts its tool results first (the API wants them before any other
// block), each with the tool's text and images; an assistant turn sends
// its signed and redacted thinking blocks back when the endpoint of ours
// (the Conversation's Mark) made them (or they name no endpoint: a Trace
// of before the marker), then its text and tool_use blocks in order.
// Unsigned thinking (another provider's) and the blocks of another
// endpoint (an Anthropic-compatible server, another account), whose
// signatures the API refuses, are not sent. To a model that takes no
// images (noImages), each image is a text block of provider.NoImage. A
// file the model made (an assistant's inline_data) is a text block of
// provider.FileNote: the API refuses an image or a document block in an
// assistant turn.
//
// With cache (a breakpoint's cache_control, "" for none), two rolling breakpoints: the last block of the last turn,
// and the last block of the user turn before it, where the previous
// request of a tool loop put its own, so that the next request, which
// appends, finds the prefix this one cached even when a turn adds more
// blocks than the API looks back over (20). A thinking block cannot carry
// one: the block before it does.
func writeMessages(w *provider.JSONWriter, msgs []omni.Message, cache, ours string, noImages bool) {
	last, user, prevUser := -1, -1, -1 // closing braces of breakpoint candidates
	provider.Turns(msgs, func(role string, turn []omni.Message) {
		start := len(w.B)
		at := -1
		w.Lit(`{"role":`)
		w.Str(role)
		w.Lit(`"content":[`)
		blocks := len(w.B)
		for pass := 0; pass < 2; pass++ { // user turns: tool results first
			for i := range turn {
				p := &turn[i].Payload
				if (p.Type == omni.ToolCallOutput) != (pass == 0) {
					continue
				}
				switch u := provider.ImageOf(p); {
				case p.Type == omni.InlineData && role == omni.RoleAssistant: // a file the model made
					writeText(w, provider.FileNote(p))
					at = len(w.B) - 1
				case p.Type == omni.ToolCallOutput:
					w.Lit(`{"type":"tool_result",`)
					w.KeyStr("tool_use_id", toolID(p.ToolCallID))
					w.Lit(`"content":[`)
					if out := p.Output; !blank(out) || len(p.Images()) == 0 {
						if blank(out) {
							out = "(no output)"
						}
						writeText(w, out)
					}
					for _, u := range p.Images() {
						writeImage(w, u, noImages)
					}
					w.Lit("]}")
					at = len(w.B) - 1
				case p.Type == omni.Text && !blank(p.Text):
					writeText(w, p.Text)
					at = len(w.B) - 1
				case u != "":
					writeImage(w, u, noImages)
					at = len(w.B) - 1
				case p.Type == omni.InlineData: // not an image: a document (a PDF)
					w.Lit(`{"type":"document","source":{"type":"base64",`)
					w.KeyStr("media_type", p.MimeType())
					w.KeyStr("data", p.Data())
					w.Lit("}}")
					at = len(w.B) - 1
				case p.Type == omni.Thinking && provider.FromEndpoint(p.Fidelity(), ours):
					sig, redacted := fidelity(p.Fidelity())
					if redacted != "" {
						w.Lit(`{"type":"redacted_thinking",`)
						w.KeyStr("data", redacted)
						w.Close('}')
					} else if sig != "" {
						w.Lit(`{"type":"thinking",`)
						w.KeyStr("thinking", p.Thinking)
						w.KeyStr("signature", sig)
						w.Close('}')
					}
				case p.Type == omni.ToolCall:
					w.Lit(`{"type":"tool_use",`)
					w.KeyStr("id", toolID(p.ToolCallID))
					w.KeyStr("name", callName(p.Name))
					w.KeyRaw("input", provider.ObjectOr(p.Arguments))
					w.Close('}')
					at = len(w.B) - 1
				}
			}
		}
		if len(w.B) == blocks {
			w.B = w.B[:start] // no block the API would accept
			return
		}
		w.Lit("]}")
		prevUser = user
		if at >= 0 {
			last = at
			if role == omni.RoleUser {
				user = at
			}
		}
	})
	if cache != "" && last >= 0 {
		mark(w, last, cache) // the later one first: the earlier offset stays
		if prevUser >= 0 && prevUser != last {
			mark(w, prevUser, cache)
		}
	}
}

// blank reports whether s is empty or only whitespace: the API refuses
// such a text block ("text content blocks must contain non-whitespace
// text").
func blank(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != ' ' && c != '\n' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// toolID is id as the API takes a tool_use id (^[a-zA-Z0-9_-]+$): another
// provider's ids ("functions.get_weather:0") have each other byte as "_"
// and "_" and 8 letters and digits of a hash of the id after them, so that
// two ids that differ only in those bytes ("调用一", "调用二") stay two; the
// same in the call and its result.
func toolID(id string) string {
	var b []byte
	for i := 0; i < len(id); i++ {
		if !idByte(id[i]) {
			if b == nil {
				b = []byte(id)
			}
			b[i] = '_'
		}
	}
	if b == nil {
		return id
	}
	return string(b) + "_" + provider.AlnumID(id, 8) // id is not 8 letters and digits: its hash
}

// idByte reports whether c is of the API's pattern of tool names and
// tool_use ids: [a-zA-Z0-9_-].
func idByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// toolName reports whether name is one the API takes
// (^[a-zA-Z0-9_-]{1,128}$): it answers 400 to a request with another,
// and so to every request of the session.
func toolName(name string) bool {
	if len(name) == 0 || len(name) > 128 {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !idByte(name[i]) {
			return false
		}
	}
	return true
}

// callName is a tool call's name of the history as the API takes it
// (^[a-zA-Z0-9_-]{1,128}$): another provider's ("fs.read", from before a
// session changed models) goes as toolID sends an id, cut at 118 bytes
// and marked by a "?" first (so that toolID rewrites it and the hash
// keeps two names two). Its result names the call by id alone. (A tool's
// own name is refused instead, before the request: the model's calls
// must name it as it is.)
func callName(name string) string {
	if toolName(name) {
		return name
	}
	return toolID(name[:min(len(name), 118)] + "?")
}

// Adaptive reports whether model takes adaptive thinking rather than a
// budget: Claude 4.6 and later (an id "claude-…-<major>-<minor>…", the
// minor one or two digits: a date is no minor), and Mythos.
func Adaptive(model string) bool {
	_, rest, ok := strings.Cut(model, "claude-")
	if !ok {
		return false
	}
	if strings.HasPrefix(rest, "mythos") {
		return true
	}
	v := [2]int{-1, 0} // major, minor
	k := 0
	for _, f := range strings.Split(rest, "-") {
		if len(f) == 0 || len(f) > 2 || f[0] < '0' || f[0] > '9' || len(f) == 2 && (f[1] < '0' || f[1] > '9') {
			if k > 0 {
				break
			}
			continue
		}
		n := int(f[0] - '0')
		if len(f) == 2 {
			n = n*10 + int(f[1]-'0')
		}
		v[k] = n
		if k++; k == 2 {
			break
		}
	}
	return v[0] > 4 || v[0] == 4 && v[1] >= 6
}

func writeText(w *provider.JSONWriter, s string) {
	w.Lit(`{"type":"text",`)
	w.KeyStr("text", s)
	w.Close('}')
}

// writeImage writes the image block of u, a data: URL in base64 or a web
// URL. An image goes with the media type its bytes show (PNG, JPEG, GIF,
// WebP): the API refuses one whose type says otherwise (a JPEG labelled
// image/png), as it refuses image/jpg for image/jpeg. An image the API
// would refuse (provider.NotSent; bytes or sides past its limits:
// oversize) is a text block saying so: sent, it made the API refuse the
// request, and with it every later request of the session, whose history
// holds the image. To a model that takes none (noImages), every image is
// provider.NoImage.
func writeImage(w *provider.JSONWriter, u string, noImages bool) {
	t := provider.NoImage
	if !noImages {
		t = provider.NotSent(u, "Anthropic")
	}
	if t != "" {
		writeText(w, t)
		return
	}
	if mime, data, ok := provider.ParseDataURL(u); ok {
		media := mediaType(mime, data)
		if why := oversize(media, data); why != "" {
			writeText(w, "[image not sent: "+why+"]")
			return
		}
		w.Lit(`{"type":"image","source":{"type":"base64",`)
		w.KeyStr("media_type", media)
		w.KeyStr("data", data)
	} else {
		w.Lit(`{"type":"image","source":{"type":"url",`)
		w.KeyStr("url", u)
	}
	w.Lit("}}")
}

// mediaType is the media type an image of base64 data goes with
// (provider.ImageType), "" for one the API refuses.
func mediaType(mime, data string) string { return provider.ImageType(mime, data) }

func fidelity(raw omni.RawJSON) (sig, redacted string) {
	omni.WalkJSON(raw, func(path []byte, kind byte, val []byte) error {
		switch string(path) {
		case fidSignature:
			sig = omni.JSONString(val)
		case fidRedacted:
			redacted = omni.JSONString(val)
		}
		return nil
	})
	return sig, redacted
}
