package provider

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/internal/errf"
)

// Conversation is the state every adapter keeps: where and how it sends
// requests, the conversation so far, the session's token totals and the
// tool call ids used.
type Conversation struct {
	History []omni.Message   // complete model messages, oldest first
	Session omni.TokenCounts // session totals, reported in each token_usage
	IDs     IDs
	Last    Usage // the last completed request's counts as stated
	// Mark names the endpoint the requests go to, as the member of a
	// fidelity object ("endpoint":"URL") that the reasoning of its
	// replies carries: see Emitter.Stamp and FromEndpoint. Setup names
	// the request URL without its query; KeyEndpoint adds the key.
	Mark string
	// Images is what a request's images may take: Generate sends those
	// past it as a text saying so (ImageLimit.Apply).
	Images ImageLimit

	api    string
	t      Transport
	url    string
	header map[string]string
	idle   time.Duration
}

// Setup validates what every adapter's options share and prepares c to
// send requests to url with the headers extra (names written in lower
// case) and kv (triples of a name, a value and the option that gives it;
// empty values are left out, and those extra names, but for anthropic-beta,
// a list, whose value is added to extra's), each request ended
// after idle without a byte from the server (an Options.IdleTimeout: see
// IdleTimeout). api names the adapter in errors.
func (c *Conversation) Setup(api string, t Transport, model, url string, body omni.RawJSON, session omni.TokenCounts, idle time.Duration, maxTokens int, extra map[string]string, kv ...string) error {
	switch {
	case t == nil:
		return errors.New(api + ": Options.Transport is required")
	case model == "":
		return errors.New(api + ": Options.Model is required")
	case body != nil && !omni.IsJSONObject(body):
		return errors.New(api + ": Options.ExtraBody is not a JSON object")
	case maxTokens < 0:
		return errors.New(api + ": Options.MaxTokens is negative: want 0 (the default) or a number of tokens")
	}
	if why := BaseURLProblem(url, "APIKey or Header"); why != "" {
		return errors.New(api + ": Options.BaseURL: " + why)
	}
	if why := schemeProblem(url); why != "" {
		return errors.New(api + ": Options.BaseURL: " + why)
	}
	h, err := headers(api, extra, kv)
	if err != nil {
		return err
	}
	// The query is not the endpoint's: a version (Azure's api-version),
	// which a newer one replaces while the deployment that made the
	// reasoning stays, or a key, which a Trace must not keep.
	*c = Conversation{Session: session, Mark: endpointMark(shownURL(url)), api: api, t: t, url: url, header: h, idle: IdleTimeout(idle)}
	return nil
}

// KeyEndpoint adds to the endpoint of Mark "#" and 8 letters and digits
// of a hash of key, the API key the requests send (if any): for reasoning
// that only the account that made it can verify (Anthropic's signatures,
// the Responses API's encrypted items). The key itself is not in it.
func (c *Conversation) KeyEndpoint(key string) {
	if key != "" {
		c.Mark = endpointMark(shownURL(c.url) + "#" + hashID(key, 8))
	}
}

func endpointMark(endpoint string) string {
	return string(omni.AppendJSONString([]byte(`"`+EndpointKey+`":`), endpoint))
}

// BaseURL returns u, or def when u is "", without the trailing slashes
// of its path (before its query, if any), as floe.mjs's models and
// floe-server drop them: the adapters append their paths
// ("/chat/completions": see JoinURL), and Google's documented base URL
// for Gemini ends with a slash, which made "…/openai//chat/completions".
// The slashes of a bare "scheme://" stay, for Setup to name it a URL of
// no host.
func BaseURL(u, def string) string {
	if u == "" {
		return def
	}
	q := queryAt(u)
	n := q
	for n > 0 && u[n-1] == '/' {
		n--
	}
	for i := 0; i < n; i++ {
		if u[i] == '/' {
			return u[:n] + u[q:]
		}
	}
	if n > 0 && u[n-1] == ':' {
		return u // "https://"
	}
	return u[:n] + u[q:]
}

// JoinURL returns the URL of an adapter's path (such as
// "/chat/completions") under base, a base URL as BaseURL returns it: the
// path goes before base's query, which the request keeps (Azure OpenAI's
// deployment URLs want "?api-version=…").
func JoinURL(base, path string) string {
	q := queryAt(base)
	return base[:q] + path + base[q:]
}

// queryAt returns the index of u's "?", or len(u).
func queryAt(u string) int {
	for i := 0; i < len(u); i++ {
		if u[i] == '?' {
			return i
		}
	}
	return len(u)
}

// headers returns the headers of Setup's extra and kv, or what is wrong
// with one. It and its helpers are kept out of line: inlined, their map
// and string code made floe.wasm's Setup several KB larger.
//
//go:noinline
func headers(api string, extra map[string]string, kv []string) (map[string]string, error) {
	h := make(map[string]string, len(extra)+len(kv)/3+2)
	for k, v := range extra {
		if why := HeaderProblem(k, v); why != "" {
			return nil, optionError(api, "Header["+errf.Quote(k)+"]", why)
		}
		lower := lowerASCII(k)
		if _, dup := h[lower]; dup {
			// X-Key and x-key: one value was sent, which one at random.
			return nil, optionError(api, "Header", errf.Quote(k)+" is there twice, its name in two cases")
		}
		h[lower] = v
	}
	kv = append(kv, "content-type", "application/json", "", "accept", "text/event-stream", "")
	for i := 0; i+2 < len(kv); i += 3 {
		if v := kv[i+1]; v != "" {
			if why := valueProblem(v); why != "" {
				return nil, optionError(api, kv[i+2], why)
			}
			switch have, set := h[kv[i]]; {
			case !set: // an extra header replaces the adapter's
				h[kv[i]] = v
			case kv[i] == "anthropic-beta" && !strings.Contains(have, v):
				// A list: the caller's betas and the adapter's, both sent.
				h[kv[i]] = have + "," + v
			}
		}
	}
	return h, nil
}

// optionError is the error of an adapter's option.
//
//go:noinline
func optionError(api, option, why string) error {
	return errors.New(api + ": Options." + option + ": " + why)
}

// HeaderProblem says what is wrong with a request header, or "": its name
// must be an HTTP token, and its value hold no line break or other control
// character but a tab (net/http refuses the request, fetch a line break
// or a NUL). The value is never shown: it may be a key.
//
//go:noinline
func HeaderProblem(name, value string) string {
	if name == "" {
		return "the header name is empty"
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return "not a header name (letters, digits and !#$%&'*+-.^_`|~ only)"
		}
	}
	return valueProblem(value)
}

// valueProblem says what is wrong with a header's value, or "".
//
//go:noinline
func valueProblem(v string) string {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			if rest := v[i:]; rest == "\n" || rest == "\r\n" || rest == "\r" {
				return "the value ends in a line break, which a header cannot hold (read from a file with it?)"
			}
			return "the value holds a line break or another control character, which a header cannot hold"
		}
	}
	return ""
}

// lowerASCII returns s with its ASCII letters in lower case.
//
//go:noinline
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// schemeProblem refuses a base URL that no Transport can send: one with
// another scheme than http or https, or none ("localhost:8080/v1",
// "127.0.0.1:11434"), which net/http refuses at every request, each failure
// then retried as a network error. A path ("/v1") is kept for a browser's
// fetch, which resolves it against the page.
func schemeProblem(u string) string {
	if u == "" || u[0] == '/' || hasPrefixFold(u, "http://") || hasPrefixFold(u, "https://") {
		return ""
	}
	return "want an http:// or https:// URL (or a path, for a page's fetch): it names no scheme a request can use"
}

// hasPrefixFold reports whether s starts with prefix, an ASCII string of
// lower case, ignoring the case of ASCII letters.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && equalFold(s[:len(prefix)], prefix)
}

// equalFold reports whether s equals lower, an ASCII string of lower case,
// ignoring the case of ASCII letters: for a lower without s or k (the only
// ASCII letters with a fold outside ASCII, ſ and K), strings.EqualFold,
// without the unicode package's case tables, which it links.
func equalFold(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// BaseURLProblem says what is wrong with u, an adapter's base URL (or
// its URL: the base URL and its path), or "": a fragment never reaches
// the server, credentials would go to it as Basic authentication (keyHow
// says how to send a key instead), and a URL names a host. A query is
// taken (JoinURL puts the adapter's path before it). The scheme is the
// caller's to check.
func BaseURLProblem(u, keyHow string) string {
	authority := true // before the first "/" after "scheme://"
	slashes := 0
	query := false
	for i := 0; i < len(u); i++ {
		switch c := u[i]; {
		case c == '#':
			return "want the API's base URL without a fragment (#…): a fragment is not sent to the server"
		case c <= ' ' || c == 0x7f:
			return "a URL holds no spaces or control characters"
		case query:
		case c == '?':
			query = true
			if slashes == 2 && u[i-1] == '/' {
				return "the URL names no host"
			}
		case c == '/':
			if slashes++; slashes == 3 {
				authority = false
				if u[i-1] == '/' {
					return "the URL names no host"
				}
			}
		case c == '@' && authority:
			return "want the API's base URL without credentials (user:password@): send the key with " + keyHow
		}
	}
	if slashes == 2 && !query && u[len(u)-1] == '/' {
		return "the URL names no host"
	}
	return ""
}

// Fresh returns a new conversation with c's setup and the given session
// totals (an engine.LLMFactory's fresh context).
func (c *Conversation) Fresh(session omni.TokenCounts) Conversation {
	return Conversation{Session: session, Mark: c.Mark, Images: c.Images, api: c.api, t: c.t, url: c.url, header: c.header, idle: c.idle}
}

// Generate is one request of an adapter (engine.LLM.StreamGenerate): body
// writes the request for the messages sent, and decoder returns the
// decoder of the response's events.
func (c *Conversation) Generate(ctx context.Context, p *engine.GenerateParams, emit func(omni.Message), body func(p *engine.GenerateParams, sent []omni.Message) ([]byte, error), decoder func(e *Emitter) Decoder) engine.Outcome {
	sent := c.Request(p.NewMessages)
	b, err := body(p, c.Images.Apply(sent))
	if err != nil {
		return engine.Outcome{Status: omni.StatusFailed, ErrorMessage: err.Error(), Permanent: true}
	}
	e := NewEmitter(emit, &c.IDs)
	e.mark = c.Mark
	return c.Run(ctx, &Request{Method: "POST", URL: c.url, Header: c.header, Body: b}, e, decoder(e), sent)
}

// Load replaces the conversation with history (engine.HistoryLoader).
func (c *Conversation) Load(history []omni.Message) {
	c.History = nil
	c.History = c.Request(history)
	for i := range c.History {
		c.IDs.note(&c.History[i])
	}
}

// Request returns the messages a request sends: the history then the
// complete model messages of input.
//
//go:noinline
func (c *Conversation) Request(input []omni.Message) []omni.Message {
	out := append([]omni.Message(nil), c.History...)
	for i := range input {
		if m := &input[i]; m.Type == omni.TypeModelMsg && !m.IsPartial() && len(m.Origin) == 0 {
			out = append(out, *m)
		}
	}
	return out
}

// Run is the whole of one request, shared by the adapters: it streams req
// through t into d, whose events drive e. On success it closes e's open
// segments, emits token_usage last (the request counts from usage, the
// session totals kept here) and sets the conversation to sent plus the
// reply. On failure it closes the open segments with the failure's status
// and leaves the conversation as it was.
func (c *Conversation) Run(ctx context.Context, req *Request, e *Emitter, d Decoder, sent []omni.Message) engine.Outcome {
	c.IDs.Begin()
	if f := Stream(ctx, c.t, req, c.api, c.idle, d); f != nil {
		e.CloseAll(f.Status)
		c.IDs.Rollback()
		return f.Outcome()
	}
	e.CloseAll(omni.StatusCompleted)
	u, total := d.Usage()
	r := omni.TokenCounts{CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, Output: u.Output, Total: total}
	c.Session = c.Session.Add(r)
	// Last is set before token_usage goes out: the run's consumer, on
	// another goroutine, reads Usage() when it takes that message (the
	// input count token_usage does not carry), and the engine's queue
	// orders this write before its read.
	c.Last = u
	e.emit(omni.TokenUsageMsg(c.Session, r))
	c.History = append(sent, e.Out...)
	o := engine.Outcome{Status: omni.StatusCompleted}
	if cd, ok := d.(Cutter); ok {
		o.Cut = cd.Cut()
	}
	return o
}

// Turns groups msgs into alternating turns of one role, in order: a turn
// is a run of messages of the same role. Tool outputs are user turns.
func Turns(msgs []omni.Message, fn func(role string, turn []omni.Message)) {
	for i := 0; i < len(msgs); {
		role := roleOf(&msgs[i])
		j := i + 1
		for j < len(msgs) && roleOf(&msgs[j]) == role {
			j++
		}
		fn(role, msgs[i:j])
		i = j
	}
}

//go:noinline
func roleOf(m *omni.Message) string {
	switch m.Payload.Type {
	case omni.ToolCallOutput:
		return omni.RoleUser
	case omni.ToolCall, omni.Thinking, omni.InlineThinking:
		return omni.RoleAssistant
	}
	if m.Payload.Role == omni.RoleAssistant {
		return omni.RoleAssistant
	}
	return omni.RoleUser
}

// DataURL returns the data: URL of an inline_data message.
func DataURL(p *omni.Payload) string { return "data:" + p.MimeType() + ";base64," + p.Data() }

// ParseDataURL splits a base64 data: URL into its media type and data
// (the scheme and the base64 token in any case).
func ParseDataURL(u string) (mime, data string, ok bool) {
	const pre, b64 = "data:", ";base64"
	if !hasPrefixFold(u, pre) {
		return "", "", false
	}
	rest := u[len(pre):]
	for i := 0; i < len(rest); i++ {
		if rest[i] == ',' {
			meta := rest[:i]
			if len(meta) < len(b64) || !equalFold(meta[len(meta)-len(b64):], b64) {
				return "", "", false
			}
			return meta[:len(meta)-len(b64)], rest[i+1:], true
		}
	}
	return "", "", false
}

// IsWebURL reports whether u is an http or https URL (the scheme in any
// case).
func IsWebURL(u string) bool { return hasPrefixFold(u, "https://") || hasPrefixFold(u, "http://") }

// ImageOf returns the URL (a data: URL for inline data) of an image_url
// or an image's inline_data message, or "".
func ImageOf(p *omni.Payload) string {
	switch {
	case p.Type == omni.ImageURL:
		return p.ImageURL()
	case p.Type == omni.InlineData && isImage(p.MimeType()):
		return DataURL(p)
	}
	return ""
}

// DocumentOf returns the data: URL of an inline_data message of another
// media type than an image's (a PDF), which goes to a model as a file or a
// document, and the file name it is sent under; or "".
func DocumentOf(p *omni.Payload) (url, name string) {
	if p.Type != omni.InlineData || isImage(p.MimeType()) {
		return "", ""
	}
	name = "document"
	if equalFold(p.MimeType(), "application/pdf") {
		name += ".pdf"
	}
	return DataURL(p), name
}

// FileNote is the text an assistant's inline_data (a file the model made,
// such as a generated image) goes as to an API whose assistant messages
// take text only (OpenAI's Chat Completions and Responses, Anthropic's
// Messages, which refuses an image block in an assistant turn with a
// 400): the model is told what it made, not shown it.
func FileNote(p *omni.Payload) string {
	return "[file not sent: " + p.MimeType() + ", made by the model; the API takes no file in an assistant message]"
}

func isImage(mime string) bool { return hasPrefixFold(mime, "image/") }

// IsImage reports whether mime is an image's media type (image/…, in any
// case).
func IsImage(mime string) bool { return isImage(mime) }
