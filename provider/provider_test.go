package provider

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider/sse"
)

type recorder struct {
	msgs []omni.Message
	d    omni.Discipline
	t    *testing.T
}

func (r *recorder) emit(m omni.Message) {
	if err := m.Validate(); err != nil {
		r.t.Errorf("invalid %s: %v", m.AppendJSON(nil), err)
	}
	if err := r.d.Check(m); err != nil {
		r.t.Errorf("discipline: %v", err)
	}
	r.msgs = append(r.msgs, m)
}

func (r *recorder) lines() string {
	var b strings.Builder
	for _, m := range r.msgs {
		p := &m.Payload
		b.WriteString(p.Type + ":" + p.EventType + ":" + p.Body() + ":" + p.ToolCallID + ":" + p.StopReason + "\n")
	}
	return b.String()
}

// Interleaved tool calls stay open side by side; text and thinking close
// before another segment of their type opens; every stop is followed by
// its complete message.
func TestEmitter(t *testing.T) {
	r := &recorder{t: t}
	var ids IDs
	e := NewEmitter(r.emit, &ids)
	e.Thinking(-2, "hm")
	e.Text(-1, "a")
	e.ToolStart(0, "c0", "f")
	e.ToolStart(1, "", "g")
	e.ToolArgs(1, "{")
	e.ToolArgs(0, "[")
	e.Text(-1, "")     // nothing
	e.Thinking(-3, "") // nothing
	e.Text(-4, "b")    // a second text segment closes the first
	e.ToolArgs(7, "x") // a call that never started gets an id
	e.CloseAll(omni.StatusMalformed)
	if err := r.d.End(); err != nil {
		t.Error(err)
	}
	want := `partial_thinking:start:::
partial_thinking:delta:hm::
partial_text:start:::
partial_text:delta:a::
partial_tool_call:start::c0:
partial_tool_call:start::call_floe_1:
partial_tool_call:delta:{:call_floe_1:
partial_tool_call:delta:[:c0:
partial_text:stop:::completed
text::a::completed
partial_text:start:::
partial_text:delta:b::
partial_tool_call:start::call_floe_2:
partial_tool_call:delta:x:call_floe_2:
partial_thinking:stop:::malformed
thinking::hm::malformed
partial_tool_call:stop::c0:malformed
tool_call::[:c0:malformed
partial_tool_call:stop::call_floe_1:malformed
tool_call::{:call_floe_1:malformed
partial_text:stop:::malformed
text::b::malformed
partial_tool_call:stop::call_floe_2:malformed
tool_call::x:call_floe_2:malformed
`
	if got := r.lines(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if len(e.Out) != 6 || e.Out[5].Payload.Name != UnnamedTool || e.Out[2].Payload.Name != "f" {
		t.Errorf("Out %d messages, last named %q", len(e.Out), e.Out[len(e.Out)-1].Payload.Name)
	}
}

func TestIDs(t *testing.T) {
	var ids IDs
	ids.note(&omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.ToolCall, ToolCallID: "call_floe_1"}})
	ids.Begin()
	got := []string{ids.Claim("a"), ids.Claim("a"), ids.Claim(""), ids.Claim("call_floe_3")}
	if strings.Join(got, ",") != "a,call_floe_2,call_floe_3,call_floe_4" {
		t.Errorf("claims %v", got)
	}
	ids.Rollback()
	if id := ids.Claim("a"); id != "a" {
		t.Errorf("after Rollback, a is %q", id)
	}
}

func TestErrorDetail(t *testing.T) {
	for body, want := range map[string]string{
		`{"error":{"message":"bad key","type":"invalid_request_error","code":"invalid_api_key"}}`: "invalid_request_error: bad key",
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`:             "overloaded_error: Overloaded",
		`{"code":"rate_limit_exceeded","message":"slow"}`:                                         "rate_limit_exceeded: slow",
		`{"error":"plain text"}`:                                   "plain text",
		`{"error":{"code":429,"message":"quota"}}`:                 "429: quota",
		"<html><head><TITLE>502 Bad Gateway</TITLE></head></html>": "502 Bad Gateway",
		"  upstream timed out\nmore":                               "upstream timed out",
		"":                                                         "",
		strings.Repeat("é", 400):                                   strings.Repeat("é", 150) + "…",
	} {
		if got := ErrorDetail([]byte(body)); got != want {
			t.Errorf("ErrorDetail(%.40q) = %q, want %q", body, got, want)
		}
	}
}

// A validation error's location is a few names: one of a hostile or
// broken server, a list of thousands (or one name of thousands of bytes),
// is cut, and read in time linear in its length (joined piece by piece,
// 64 KiB of it took seconds, an event stream's 8 MiB hours).
func TestErrorFieldsLocBounded(t *testing.T) {
	for name, loc := range map[string]string{
		"many names": `"body",` + strings.Repeat(`0,`, 30000) + `0`,
		"a long one": `"body","` + strings.Repeat("n", 60000) + `"`,
	} {
		_, _, msg := ErrorFields([]byte(`{"detail":[{"loc":[` + loc + `],"msg":"Extra inputs are not permitted"}]}`))
		if !strings.HasPrefix(msg, "body.") || !strings.HasSuffix(msg, "…: Extra inputs are not permitted") || len(msg) > 300 {
			t.Errorf("%s: a message of %d bytes: %.80q…%q", name, len(msg), msg, msg[max(0, len(msg)-60):])
		}
	}
}

// An error's type and code are names: a hostile or broken server's
// megabyte of either, in an error body or in a stream's error event, is
// cut as its message is.
func TestErrorNamesBounded(t *testing.T) {
	long := strings.Repeat("n", 1<<20)
	typ, code, msg := ErrorFields([]byte(`{"error":{"type":"` + long + `","code":"` + long + `","message":"m"}}`))
	if len(typ) > 204 || len(code) > 204 || !strings.HasSuffix(typ, "n…") || msg != "m" {
		t.Errorf("ErrorFields: type of %d bytes, code of %d, message %q", len(typ), len(code), msg)
	}
	if d := ErrorDetail([]byte(`{"error":{"type":"` + long + `","message":"m"}}`)); len(d) > 300 || !strings.HasSuffix(d, "…: m") {
		t.Errorf("ErrorDetail: %d bytes: %.60q…", len(d), d)
	}
	if f := ErrorEvent("x", long, strings.Repeat("c", 1<<20), "m"); len(f.Message) > 600 || !strings.HasSuffix(f.Message, "…): m") {
		t.Errorf("ErrorEvent: %d bytes: %.60q…", len(f.Message), f.Message)
	}
}

// What a server said is cut at the README's sizes, written out (the
// bounds above would pass a larger cut): its own message at 2 KiB, a
// validation error's location and an error's type and code at 200 bytes,
// OpenRouter's metadata.raw at 600, each marked "…".
func TestErrorFieldsCutSizes(t *testing.T) {
	typ, code, msg := ErrorFields([]byte(`{"error":{"type":"` + strings.Repeat("t", 300) + `","code":"` + strings.Repeat("c", 300) +
		`","message":"` + strings.Repeat("m", 3000) + `"}}`))
	if typ != strings.Repeat("t", 200)+"…" || code != strings.Repeat("c", 200)+"…" || msg != strings.Repeat("m", 2048)+"…" {
		t.Errorf("type of %d bytes, code of %d, message of %d; want 200, 200 and 2048, each and …", len(typ), len(code), len(msg))
	}
	_, _, msg = ErrorFields([]byte(`{"detail":[{"loc":["body","` + strings.Repeat("n", 300) + `"],"msg":"Extra inputs are not permitted"}]}`))
	if want := "body." + strings.Repeat("n", 195) + "…: Extra inputs are not permitted"; msg != want {
		t.Errorf("a validation error's location: %q, want %q", msg, want)
	}
	_, _, msg = ErrorFields([]byte(`{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"` + strings.Repeat("r", 700) + `","provider_name":"P"}}}`))
	if want := "Provider returned error (P): " + strings.Repeat("r", 600) + "…"; msg != want {
		t.Errorf("metadata.raw: %q, want %q", msg, want)
	}
}

func TestStatusFailure(t *testing.T) {
	permanent := map[int]bool{400: true, 402: true, 404: true, 405: true, 413: true, 415: true, 422: true}
	for st, want := range map[int]string{401: "auth", 403: "auth", 408: "timeout", 409: "timeout", 429: "timeout", 500: "timeout", 529: "timeout",
		400: "failed", 404: "failed", 402: "failed", 405: "failed", 413: "failed", 415: "failed", 422: "failed", 418: "failed"} {
		f := StatusFailure("x", &Response{Status: st, Body: io.NopCloser(strings.NewReader("{}"))})
		if f.Status != want {
			t.Errorf("%d → %s, want %s", st, f.Status, want)
		}
		if perm := f.Outcome().Permanent; perm != permanent[st] {
			t.Errorf("%d permanent %v", st, perm)
		}
	}
}

// Ollama's 403 of no body (an origin it does not allow) names
// OLLAMA_ORIGINS; a 403 with a body (a hosted API's) is quoted as it
// came; both are auth.
func TestStatusFailureEmpty403(t *testing.T) {
	for body, want := range map[string]string{
		"": "x: HTTP 403: no body: most likely Ollama refusing a request from an origin it does not allow (list the origin in its OLLAMA_ORIGINS), else a proxy's refusal",
		`{"error":{"message":"Project does not have access to model o3","type":"invalid_request_error"}}`: "x: HTTP 403: invalid_request_error: Project does not have access to model o3",
		"Forbidden": "x: HTTP 403: Forbidden",
	} {
		f := StatusFailure("x", &Response{Status: 403, Body: io.NopCloser(strings.NewReader(body))})
		if f.Status != "auth" || f.Message != want {
			t.Errorf("403 %q: %s %q, want auth %q", body, f.Status, f.Message, want)
		}
	}
	if f := StatusFailure("x", &Response{Status: 401, Body: io.NopCloser(strings.NewReader(""))}); f.Message != "x: HTTP 401" {
		t.Errorf("401 of no body: %q", f.Message)
	}
}

// llama.cpp's server started without --jinja answers a request with tools
// 500 (server_error): it was retried 5 times over a minute, then ended as
// "reconnect failed"; it is failed, permanent. Another 500 stays timeout.
func TestStatusFailureLlamaCppJinja(t *testing.T) {
	for body, want := range map[string]string{
		`{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}`:   "failed",
		`{"error":{"code":500,"message":"llama runner process has terminated","type":"server_error"}}`: "timeout",
	} {
		f := StatusFailure("x", &Response{Status: 500, Body: io.NopCloser(strings.NewReader(body))})
		if f.Status != want || f.Outcome().Permanent != (want == "failed") || !strings.Contains(f.Message, "server_error: ") {
			t.Errorf("%s: %+v", body, f)
		}
	}
}

// OpenAI answers a spent quota or credit (insufficient_quota) with a 429,
// as it does a rate limit: it was retried 5 times over a minute, then
// ended as "reconnect failed"; it is failed, permanent, as a 402 is, and
// so is the same error in a 200 stream. A rate limit stays timeout.
func TestQuotaSpent(t *testing.T) {
	for body, want := range map[string]string{
		`{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`: "failed",
		`{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}`:                                                                    "timeout",
		`{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit."}}`:                                                                "timeout",
	} {
		f := StatusFailure("x", &Response{Status: 429, Body: io.NopCloser(strings.NewReader(body))})
		if f.Status != want || f.Outcome().Permanent != (want == "failed") || !strings.Contains(f.Message, "x: HTTP 429: ") {
			t.Errorf("429 %s: %s permanent %v %q, want %s", body, f.Status, f.Permanent, f.Message, want)
		}
	}
	// Anthropic's billing_error (its 402, a credit balance too low) is
	// the same: it was retried 5 times.
	for _, tc := range [][2]string{{"insufficient_quota", ""}, {"", "insufficient_quota"}, {"tokens", "insufficient_quota"}, {"billing_error", ""}} {
		if f := ErrorEvent("x", tc[0], tc[1], "quota"); f.Status != "failed" || !f.Outcome().Permanent {
			t.Errorf("error event %q %q: %s permanent %v, want failed, permanent", tc[0], tc[1], f.Status, f.Permanent)
		}
	}
	if f := ErrorEvent("x", "invalid_request_error", "", "m"); f.Outcome().Permanent {
		t.Errorf("another error event is permanent: %q", f.Message)
	}
}

// A 404 names the URL requested, but not what of it may be a secret: a
// Stream caller's URL may carry a key in its query (Google's ?key=) or
// credentials before its host, and the message goes to the Trace and to a
// page.
func TestStatusFailure404NamesURLWithoutSecrets(t *testing.T) {
	notFound := TransportFunc(func(context.Context, *Request) (*Response, error) {
		return &Response{Status: 404, Header: map[string]string{"content-type": "text/plain"}, Body: io.NopCloser(strings.NewReader("404 page not found"))}, nil
	})
	for u, want := range map[string]string{
		"http://localhost:11434/chat/completions":                                    "http://localhost:11434/chat/completions",
		"https://g.example/v1beta/models/m:streamGenerateContent?alt=sse&key=SECRET": "https://g.example/v1beta/models/m:streamGenerateContent",
		"https://user:SECRET@proxy.example/v1/chat/completions#SECRET":               "https://proxy.example/v1/chat/completions",
		"https://a:SECRET@b:SECRET@proxy.example/v1?x=@y":                            "https://proxy.example/v1",
		"https://proxy.example/v1/a@b":                                               "https://proxy.example/v1/a@b",
	} {
		f := Stream(context.Background(), notFound, &Request{URL: u}, "x", 0, &doneDecoder{})
		if f == nil || !strings.HasSuffix(f.Message, "404 page not found (at "+want+")") || strings.Contains(f.Message, "SECRET") {
			t.Errorf("%s: %+v, want the message to end (at %s)", u, f, want)
		}
	}
}

// A request that failed names its URL as the transport's error does
// (Go's net/http: Post "…?key=…" with the password as ***; fetch: the URL
// as given), but not what of it may be a secret, as a 404 does not.
func TestRequestFailedNamesURLWithoutSecrets(t *testing.T) {
	for u, echoed := range map[string]string{
		"https://g.example/v1beta/models/m:streamGenerateContent?alt=sse&key=SECRET": `Post "https://g.example/v1beta/models/m:streamGenerateContent?alt=sse&key=SECRET": dial tcp: no such host`,
		"https://user:SECRET@proxy.example/v1?key=SECRET":                            `Post "https://user:***@proxy.example/v1?key=SECRET": dial tcp: no such host`,
		"https://user:SECRET@proxy.example/v1/chat/completions":                      "fetch https://user:SECRET@proxy.example/v1/chat/completions: Request cannot be constructed from a URL that includes credentials: https://user:SECRET@proxy.example/v1/chat/completions",
		"http://[::1]:8080/v1?key=SECRET#SECRET":                                     "fetch http://[::1]:8080/v1?key=SECRET#SECRET: fetch failed",
	} {
		refused := TransportFunc(func(context.Context, *Request) (*Response, error) { return nil, errors.New(echoed) })
		f := Stream(context.Background(), refused, &Request{URL: u}, "x", 0, &doneDecoder{})
		if f == nil || strings.Contains(f.Message, "SECRET") || !strings.Contains(f.Message, "proxy.example/v1") && !strings.Contains(f.Message, "g.example/v1beta") && !strings.Contains(f.Message, "[::1]:8080/v1") {
			t.Errorf("%s: %+v, want the URL named without its secrets", u, f)
		}
	}
}

func TestJSONWriter(t *testing.T) {
	w := &JSONWriter{}
	w.Lit("{")
	w.KeyStr("a", "x\"y")
	w.Lit(`"b":[`)
	w.Str("1")
	w.Lit("{")
	w.KeyInt("n", -3)
	w.Close('}')
	w.Lit("]")
	w.Members(omni.RawJSON(` {"c":true, "d":null} `))
	w.Members(omni.RawJSON(`{}`))
	w.Members(nil)
	w.KeyRaw("e", ObjectOr(`{"unfinished":`))
	w.Close('}')
	if got, want := string(w.B), `{"a":"x\"y","b":["1",{"n":-3}],"c":true, "d":null,"e":{}}`; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	if m, d, ok := ParseDataURL("data:image/png;base64,QUJD"); !ok || m != "image/png" || d != "QUJD" {
		t.Errorf("ParseDataURL: %q %q %v", m, d, ok)
	}
	if _, _, ok := ParseDataURL("https://x/y.png"); ok {
		t.Error("ParseDataURL accepted a URL")
	}
}

func TestErrorEvent(t *testing.T) {
	// Anthropic's timeout_error is its gateway's timeout (a 504 outside a
	// stream): transient, as overloaded_error is.
	for typ, want := range map[string]string{"overloaded_error": "timeout", "rate_limit_exceeded": "timeout", "server_error": "timeout", "timeout_error": "timeout",
		"authentication_error": "auth", "permission_error": "auth", "invalid_api_key": "auth", "insufficient_quota": "failed", "": "failed"} {
		if f := ErrorEvent("x", typ, "", "m"); f.Status != want || !strings.Contains(f.Message, "m") {
			t.Errorf("%q → %s %q, want %s", typ, f.Status, f.Message, want)
		}
	}
	// The code says it as well as the type: OpenAI's rate limit is type
	// "tokens", code "rate_limit_exceeded"; a bad key type
	// "invalid_request_error", code "invalid_api_key".
	for _, c := range []struct{ body, status, msg string }{
		{`{"error":{"type":"tokens","code":"rate_limit_exceeded","message":"Rate limit reached"}}`, "timeout", "x: error event: tokens (rate_limit_exceeded): Rate limit reached"},
		{`{"error":{"type":"invalid_request_error","code":"invalid_api_key","message":"Incorrect API key"}}`, "auth", "x: error event: invalid_request_error (invalid_api_key): Incorrect API key"},
		{`{"error":{"type":"invalid_request_error","code":401,"message":"no"}}`, "auth", "x: error event: invalid_request_error (401): no"},
		{`{"error":{"code":503,"message":"busy"}}`, "timeout", "x: error event: 503: busy"},
		{`{"error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"too long"}}`, "failed", "x: error event: invalid_request_error (context_length_exceeded): too long"},
		// Google's: a list of one error, its status a name.
		{"[{\n  \"error\": {\n    \"code\": 429,\n    \"message\": \"Quota exceeded\",\n    \"status\": \"RESOURCE_EXHAUSTED\"\n  }\n}\n]", "timeout", "x: error event: RESOURCE_EXHAUSTED (429): Quota exceeded"},
		{`[{"error":{"code":400,"message":"Invalid reasoning_effort","status":"INVALID_ARGUMENT"}}]`, "failed", "x: error event: INVALID_ARGUMENT (400): Invalid reasoning_effort"},
	} {
		typ, code, msg := ErrorFields([]byte(c.body))
		if f := ErrorEvent("x", typ, code, msg); f.Status != c.status || f.Message != c.msg {
			t.Errorf("%s → %s %q, want %s %q", c.body, f.Status, f.Message, c.status, c.msg)
		}
	}
}

// doneDecoder ends the stream at its first event.
type doneDecoder struct{ events int }

func (d *doneDecoder) Event(*sse.Event) error { d.events++; return ErrDone }
func (d *doneDecoder) End() error             { return nil }
func (d *doneDecoder) Usage() (Usage, int64)  { return Usage{}, 0 }

// A 200 answer that is JSON or HTML, not an event stream, is named with
// what it says (a proxy's error with status 200, a server that ignored
// "stream": true), not read as a broken stream. The body decides, not the
// Content-Type: an event stream labelled JSON is read.
func TestStreamNotAnEventStream(t *testing.T) {
	answer := func(ct, body string) Transport {
		return TransportFunc(func(context.Context, *Request) (*Response, error) {
			h := map[string]string{}
			if ct != "" {
				h["content-type"] = ct
			}
			return &Response{Status: 200, Header: h, Body: io.NopCloser(strings.NewReader(body))}, nil
		})
	}
	for _, c := range []struct{ ct, body, status, want string }{
		{"application/json", `{"error":{"type":"insufficient_quota","message":"You exceeded your quota."}}`, omni.StatusFailed,
			"x: HTTP 200 answered a JSON body (application/json), not an event stream: insufficient_quota: You exceeded your quota."},
		{"text/event-stream", "\r\n  {\"error\":{\"code\":429,\"message\":\"Rate limited\"}}", omni.StatusTimeout,
			"x: HTTP 200 answered a JSON body (text/event-stream), not an event stream: 429: Rate limited"},
		{"", `{"error":{"type":"authentication_error","message":"bad key"}}`, omni.StatusAuth,
			"x: HTTP 200 answered a JSON body, not an event stream: authentication_error: bad key"},
		{"application/json; charset=utf-8", `{"id":"chatcmpl-1","choices":[]}`, omni.StatusMalformed,
			`x: malformed stream: HTTP 200 answered a JSON body (application/json; charset=utf-8), not an event stream: {"id":"chatcmpl-1","choices":[]}`},
		{"text/html", "\xEF\xBB\xBF<html><head><title>Sign in</title></head></html>", omni.StatusMalformed,
			"x: malformed stream: HTTP 200 answered an HTML page (text/html), not an event stream: Sign in"},
	} {
		f := Stream(context.Background(), answer(c.ct, c.body), &Request{}, "x", 0, &doneDecoder{})
		if f == nil || f.Status != c.status || f.Message != c.want {
			t.Errorf("%q: %+v\nwant %s %q", c.ct, f, c.status, c.want)
		}
	}
	// An event stream, labelled or not, labelled wrongly, or after blank
	// lines and a comment, is read.
	for _, c := range []struct{ ct, body string }{
		{"text/event-stream; charset=utf-8", "data: {}\n\n"},
		{"", "data: {}\n\n"},
		{"application/octet-stream", "data: {}\n\n"},
		{"application/json", "data: {}\n\n"},
		{"text/html", "\n\n: keep-alive\n\nevent: x\ndata: {}\n\n"},
		{"application/json", strings.Repeat("\n", 2000) + "data: {}\n\n"},
	} {
		d := &doneDecoder{}
		if f := Stream(context.Background(), answer(c.ct, c.body), &Request{}, "x", 0, d); f != nil || d.events != 1 {
			t.Errorf("%q %q: %+v after %d events", c.ct, c.body[:min(len(c.body), 20)], f, d.events)
		}
	}
	// An empty body is the decoder's to judge (End), and a body that fails
	// before its first byte is the network's failure.
	d := &doneDecoder{}
	if f := Stream(context.Background(), answer("text/event-stream", ""), &Request{}, "x", 0, d); f != nil || d.events != 0 {
		t.Errorf("empty body: %+v after %d events", f, d.events)
	}
	broken := TransportFunc(func(context.Context, *Request) (*Response, error) {
		return &Response{Status: 200, Header: map[string]string{}, Body: io.NopCloser(&failingReader{})}, nil
	})
	if f := Stream(context.Background(), broken, &Request{}, "x", 0, &doneDecoder{}); f == nil || f.Status != omni.StatusTimeout ||
		f.Message != "x: the connection failed mid-stream: connection reset" {
		t.Errorf("broken body: %+v", f)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

// collectDecoder records each event's data; End fails as a decoder does
// when no terminal event came.
type collectDecoder struct{ data []string }

func (d *collectDecoder) Event(ev *sse.Event) error {
	d.data = append(d.data, string(ev.Data))
	return nil
}
func (d *collectDecoder) End() error            { return Malformed("x", "the stream ended before its end") }
func (d *collectDecoder) Usage() (Usage, int64) { return Usage{}, 0 }

// An event of no data (a "data:" line alone) is not handed to the decoder;
// a 2xx body that held no event at all (a proxy's text/plain error) is
// quoted in the failure.
func TestStreamEventsOfNoData(t *testing.T) {
	answer := func(body string) Transport {
		return TransportFunc(func(context.Context, *Request) (*Response, error) {
			return &Response{Status: 200, Header: map[string]string{"content-type": "text/plain"}, Body: io.NopCloser(strings.NewReader(body))}, nil
		})
	}
	d := &collectDecoder{}
	f := Stream(context.Background(), answer("data: \n\ndata:\n\ndata: {}\n\n"), &Request{}, "x", 0, d)
	if strings.Join(d.data, "|") != "{}" || f == nil || f.Message != "x: malformed stream: the stream ended before its end" {
		t.Errorf("events %q, failure %+v", d.data, f)
	}
	// A stream cut in its first event keeps its own message.
	d = &collectDecoder{}
	if f = Stream(context.Background(), answer("\ndata: {\"choices\":[{\"delta\""), &Request{}, "x", 0, d); f == nil || f.Message != "x: malformed stream: sse: stream ended in the middle of an event" {
		t.Errorf("cut in the first event: %+v", f)
	}
	// Quoted whole whatever the reads gave (the quote was the first
	// read's bytes: "u" of a server that sent one byte first), after blank
	// lines (it was empty).
	oneByte := func(body string) Transport {
		return TransportFunc(func(context.Context, *Request) (*Response, error) {
			return &Response{Status: 200, Header: map[string]string{}, Body: io.NopCloser(iotest.OneByteReader(strings.NewReader(body)))}, nil
		})
	}
	for _, body := range []string{
		"upstream connect error or disconnect/reset before headers. reset reason: overflow",
		"upstream connect error or disconnect/reset before headers. reset reason: overflow\n",
		"\r\n\n \xEF\xBB\xBFupstream connect error or disconnect/reset before headers. reset reason: overflow\nmore",
	} {
		for _, tr := range []Transport{answer(body), oneByte(body)} {
			d = &collectDecoder{}
			f = Stream(context.Background(), tr, &Request{}, "x", 0, d)
			if f == nil || f.Status != omni.StatusMalformed || f.Message != "x: malformed stream: the body held no event: upstream connect error or disconnect/reset before headers. reset reason: overflow" {
				t.Errorf("%q: %+v", body, f)
			}
		}
	}
	// A first line longer than the quote is cut, marked so, in any reads.
	long := strings.Repeat("x", 300) + strings.Repeat(" ", 600) + "y"
	for _, tr := range []Transport{answer(long), oneByte(long)} {
		f = Stream(context.Background(), tr, &Request{}, "x", 0, &collectDecoder{})
		if f == nil || f.Message != "x: malformed stream: the body held no event: "+strings.Repeat("x", 300)+"…" {
			t.Errorf("a long first line: %+v", f)
		}
	}
}

// A 2xx body of nothing, or of white space or control bytes alone, says
// so: the failure read "the body held no event: " and stopped there.
func TestStreamEmptyBody(t *testing.T) {
	for body, want := range map[string]string{
		"":           "x: malformed stream: the body was empty",
		"\n\n  \r\n": "x: malformed stream: the body held no event, only white space or control characters",
		"\x00\x01":   "x: malformed stream: the body held no event, only white space or control characters",
	} {
		tr := TransportFunc(func(context.Context, *Request) (*Response, error) {
			return &Response{Status: 200, Header: map[string]string{}, Body: io.NopCloser(strings.NewReader(body))}, nil
		})
		if f := Stream(context.Background(), tr, &Request{}, "x", 0, &collectDecoder{}); f == nil || f.Status != omni.StatusMalformed || f.Message != want {
			t.Errorf("%q: %+v, want %q", body, f, want)
		}
	}
}

// An event longer than the reader takes (a huge inline image in one
// event) is named with the limit: "sse: line too long" said neither what
// the line was nor how long one may be.
func TestStreamLineTooLong(t *testing.T) {
	if sse.DefaultMaxLine != 8<<20 {
		t.Fatal("the failure's message says 8 MiB")
	}
	body := "data: {\"x\":\"" + strings.Repeat("x", sse.DefaultMaxLine) + "\"}\n\n"
	tr := TransportFunc(func(context.Context, *Request) (*Response, error) {
		return &Response{Status: 200, Header: map[string]string{}, Body: io.NopCloser(strings.NewReader(body))}, nil
	})
	f := Stream(context.Background(), tr, &Request{}, "x", 0, &collectDecoder{})
	if f == nil || f.Status != omni.StatusMalformed || f.Message != "x: malformed stream: a line or an event of the event stream is longer than 8 MiB, the most the adapter reads" {
		t.Errorf("%+v", f)
	}
}

// An event of data lines that do not end is bounded as a line is: the
// reader gathered them all, a server that never sent the blank line
// growing its memory without end.
func TestStreamEventTooLong(t *testing.T) {
	line := "data: " + strings.Repeat("x", 1<<16) + "\n"
	body := strings.Repeat(line, sse.DefaultMaxLine/(1<<16)+1) + "\n"
	tr := TransportFunc(func(context.Context, *Request) (*Response, error) {
		return &Response{Status: 200, Header: map[string]string{}, Body: io.NopCloser(strings.NewReader(body))}, nil
	})
	f := Stream(context.Background(), tr, &Request{}, "x", 0, &collectDecoder{})
	if f == nil || f.Status != omni.StatusMalformed || !strings.Contains(f.Message, "longer than 8 MiB") {
		t.Errorf("%+v", f)
	}
}

// TestEqualFold checks the media types' ASCII comparison against
// strings.EqualFold (which links the unicode package's case tables): every
// code point in each position of each fixed string, in both cases.
func TestEqualFold(t *testing.T) {
	for _, lower := range []string{"image/", "application/pdf", "http://"} {
		for i := range len(lower) {
			for r := rune(0); r <= 0x2200; r++ {
				for _, s := range []string{lower[:i] + string(r) + lower[i+1:], strings.ToUpper(lower[:i]) + string(r) + lower[i+1:]} {
					if got, want := equalFold(s, lower), strings.EqualFold(s, lower); got != want {
						t.Fatalf("equalFold(%q, %q) = %v, strings.EqualFold %v", s, lower, got, want)
					}
				}
			}
		}
	}
	for _, c := range []struct {
		mime string
		want bool
	}{{"image/png", true}, {"IMAGE/PNG", true}, {"Image/", true}, {"image", false}, {"imagE\x0f", false}, {"application/pdf", false}, {"", false}} {
		if got := isImage(c.mime); got != c.want {
			t.Errorf("isImage(%q) = %v, want %v", c.mime, got, c.want)
		}
	}
}

// A Transport's *Failure keeps its stop reason: a request it cannot send
// (nethttp's header net/http refuses) ends failed and permanent at once,
// where any other error of RoundTrip is the network's, retried as timeout.
func TestStreamKeepsATransportsFailure(t *testing.T) {
	refuse := TransportFunc(func(context.Context, *Request) (*Response, error) {
		return nil, &Failure{Status: omni.StatusFailed, Permanent: true, Message: `header "x-key": not a header name`}
	})
	f := Stream(context.Background(), refuse, &Request{}, "x", 0, &doneDecoder{})
	if f == nil || f.Status != omni.StatusFailed || !f.Permanent || f.Message != `x: request failed: header "x-key": not a header name` {
		t.Errorf("failure %+v", f)
	}
	if o := f.Outcome(); o.Status != omni.StatusFailed || !o.Permanent {
		t.Errorf("outcome %+v", o)
	}
	network := TransportFunc(func(context.Context, *Request) (*Response, error) { return nil, errors.New("connection refused") })
	if f := Stream(context.Background(), network, &Request{}, "x", 0, &doneDecoder{}); f == nil || f.Status != omni.StatusTimeout || f.Permanent {
		t.Errorf("a network error: %+v", f)
	}
}

// IsWebURL and ParseDataURL take a scheme (and ParseDataURL its base64
// token) in any case, as their docs say, and nothing else.
func TestURLSchemesInAnyCase(t *testing.T) {
	for u, want := range map[string]bool{"http://h/a.png": true, "HTTPS://h/a.png": true, "hTtP://h": true, "data:image/png;base64,AA": false, "ftp://h": false, "https:/h": false, "http\x1a//h": false, "": false} {
		if got := IsWebURL(u); got != want {
			t.Errorf("IsWebURL(%q) = %v, want %v", u, got, want)
		}
	}
	if m, d, ok := ParseDataURL("DATA:image/png;BASE64,QUJD"); !ok || m != "image/png" || d != "QUJD" {
		t.Errorf("ParseDataURL of upper case: %q %q %v", m, d, ok)
	}
	if _, _, ok := ParseDataURL("data:image/png,QUJD"); ok {
		t.Error("ParseDataURL took a data: URL not in base64")
	}
}
