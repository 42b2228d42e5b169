package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/enginetest"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider/internal/ptest"
)

func chunk(delta string) string {
	return `{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}`
}

const finish = `{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`

func usage(in, out, cached int) string {
	return `{"id":"c1","choices":[],"usage":{"prompt_tokens":` + itoa(in) + `,"completion_tokens":` + itoa(out) + `,"total_tokens":` + itoa(in+out) + `,"prompt_tokens_details":{"cached_tokens":` + itoa(cached) + `}}}`
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func newModel(t *testing.T, tr *ptest.Transport, o Options) *Model {
	t.Helper()
	o.Transport = tr
	if o.Model == "" {
		o.Model = "gpt-test"
	}
	m, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func run(t *testing.T, m *Model, p engine.GenerateParams) (*ptest.Collector, engine.Outcome) {
	t.Helper()
	c := &ptest.Collector{T: t}
	out := m.StreamGenerate(context.Background(), p, c.Emit)
	c.End()
	return c, out
}

func js(v any) string { b, _ := json.Marshal(v); return string(b) }

// The conversation is mapped to Chat Completions messages: system prompt,
// user parts, the assistant's text and tool calls, one tool message per
// output in call order, tool images as a user message after them; tools
// with their schemas; options in the body and headers.
func TestRequestMapping(t *testing.T) {
	tr := &ptest.Transport{Replies: []ptest.Reply{
		{Chunks: ptest.SSE(chunk(`{"role":"assistant","content":"Checking."}`),
			chunk(`{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"look","arguments":"{\"q\":1}"}}]}`),
			chunk(`{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"look","arguments":"{}"}}]}`),
			finish, usage(10, 5, 0), "[DONE]")},
		{Chunks: ptest.SSE(chunk(`{"content":"Done."}`), finish, "[DONE]")},
	}}
	m := newModel(t, tr, Options{APIKey: "sk-test", BaseURL: "http://127.0.0.1:1/v1", MaxTokens: 99,
		ExtraBody: omni.RawJSON(`{"temperature":0.5}`), Header: map[string]string{"x-extra": "1"}})
	tools := []omni.ToolDefinition{{Name: "look", Description: "Looks.", Parameters: omni.RawJSON(`{"type":"object","properties":{"q":{"type":"number"}}}`)}}
	_, out := run(t, m, engine.GenerateParams{
		NewMessages:   []omni.Message{omni.UserText("Look twice."), {Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.ImageURL, Role: omni.RoleUser, Rest: &omni.Rest{ImageURL: "https://x/y.png"}}}},
		SystemPrompt:  "Be brief.",
		Tools:         tools,
		ThinkingLevel: "low",
	})
	if out.Status != omni.StatusCompleted {
		t.Fatalf("outcome %+v", out)
	}
	req := tr.Requests[0]
	if req.URL != "http://127.0.0.1:1/v1/chat/completions" || req.Method != "POST" {
		t.Errorf("request to %s %s", req.Method, req.URL)
	}
	if req.Header["authorization"] != "Bearer sk-test" || req.Header["x-extra"] != "1" || req.Header["content-type"] != "application/json" {
		t.Errorf("headers %v", req.Header)
	}
	b := tr.Body(t, 0)
	if b["model"] != "gpt-test" || b["stream"] != true || js(b["stream_options"]) != `{"include_usage":true}` ||
		b["reasoning_effort"] != "low" || b["max_tokens"] != 99.0 || b["temperature"] != 0.5 {
		t.Errorf("body %s", tr.Requests[0].Body)
	}
	if got, want := js(b["messages"]), `[{"content":"Be brief.","role":"system"},{"content":[{"text":"Look twice.","type":"text"},{"image_url":{"url":"https://x/y.png"},"type":"image_url"}],"role":"user"}]`; got != want {
		t.Errorf("messages\n got %s\nwant %s", got, want)
	}
	if got, want := js(b["tools"]), `[{"function":{"description":"Looks.","name":"look","parameters":{"properties":{"q":{"type":"number"}},"type":"object"}},"type":"function"}]`; got != want {
		t.Errorf("tools\n got %s\nwant %s", got, want)
	}

	// The next request sends only the new input; the adapter adds history.
	out2 := omni.ToolOutput("call_b", "B", omni.StatusCompleted)
	out2.Payload.Edit().Images = []string{"data:image/png;base64,AAAA"}
	_, out = run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.ToolOutput("call_a", "A", omni.StatusCompleted), out2}, SystemPrompt: "Be brief.", Tools: tools})
	if out.Status != omni.StatusCompleted {
		t.Fatalf("second outcome %+v", out)
	}
	msgs := tr.Body(t, 1)["messages"].([]any)
	if got, want := js(msgs[2:]), `[{"content":"Checking.","role":"assistant","tool_calls":[{"function":{"arguments":"{\"q\":1}","name":"look"},"id":"call_a","type":"function"},{"function":{"arguments":"{}","name":"look"},"id":"call_b","type":"function"}]},{"content":"A","role":"tool","tool_call_id":"call_a"},{"content":"B","role":"tool","tool_call_id":"call_b"},{"content":[{"image_url":{"url":"data:image/png;base64,AAAA"},"type":"image_url"}],"role":"user"}]`; got != want {
		t.Errorf("history\n got %s\nwant %s", got, want)
	}
	if _, ok := tr.Body(t, 1)["reasoning_effort"]; ok {
		t.Error("reasoning_effort sent without a thinking level")
	}
}

// A failed request leaves the conversation as it was: the retry's input is
// not sent after the failed one's.
func TestFailureNotCommitted(t *testing.T) {
	tr := &ptest.Transport{Replies: []ptest.Reply{
		{Chunks: ptest.SSE(chunk(`{"content":"Half"}`)), Err: errors.New("connection reset by peer")},
		{Chunks: ptest.SSE(chunk(`{"content":"Whole"}`), finish, "[DONE]")},
		{Chunks: ptest.SSE(chunk(`{"content":"Next"}`), finish, "[DONE]")},
	}}
	m := newModel(t, tr, Options{})
	c, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("hi")}})
	if out.Status != omni.StatusTimeout || !strings.Contains(out.ErrorMessage, "connection reset by peer") {
		t.Fatalf("outcome %+v", out)
	}
	if got := c.Complete(); len(got) != 1 || !strings.Contains(got[0], `"text":"Half","stop_reason":"timeout"`) {
		t.Errorf("messages %v", got)
	}
	run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("hi")}})
	run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("more")}})
	if got, want := js(tr.Body(t, 1)["messages"]), `[{"content":[{"text":"hi","type":"text"}],"role":"user"}]`; got != want {
		t.Errorf("retry sent %s", got)
	}
	if got, want := js(tr.Body(t, 2)["messages"]), `[{"content":[{"text":"hi","type":"text"}],"role":"user"},{"content":"Whole","role":"assistant"},{"content":[{"text":"more","type":"text"}],"role":"user"}]`; got != want {
		t.Errorf("third request sent %s", got)
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name      string
		reply     ptest.Reply
		status    string
		permanent bool
		contains  []string
	}{
		{"401", ptest.Reply{Status: 401, Chunks: []string{`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`}}, omni.StatusAuth, false, []string{"HTTP 401", "Incorrect API key provided"}},
		{"403", ptest.Reply{Status: 403, Chunks: []string{`{"error":{"message":"Forbidden"}}`}}, omni.StatusAuth, false, []string{"Forbidden"}},
		{"429 with Retry-After", ptest.Reply{Status: 429, Header: map[string]string{"retry-after": "20"}, Chunks: []string{`{"error":{"message":"Rate limit reached","type":"requests"}}`}}, omni.StatusTimeout, false, []string{"Rate limit reached", "Retry-After: 20"}},
		{"429 of a spent quota", ptest.Reply{Status: 429, Chunks: []string{`{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`}}, omni.StatusFailed, true, []string{"HTTP 429: insufficient_quota: You exceeded your current quota"}},
		{"408", ptest.Reply{Status: 408}, omni.StatusTimeout, false, []string{"HTTP 408"}},
		{"503 HTML", ptest.Reply{Status: 503, Chunks: []string{"<html><head><title>503 Service Unavailable</title></head><body>busy</body></html>"}}, omni.StatusTimeout, false, []string{"503 Service Unavailable"}},
		{"404 unknown model", ptest.Reply{Status: 404, Chunks: []string{`{"error":{"message":"The model 'nope' does not exist","code":"model_not_found"}}`}}, omni.StatusFailed, true, []string{"model_not_found", "does not exist"}},
		{"402", ptest.Reply{Status: 402, Chunks: []string{"pay up\nsecond line"}}, omni.StatusFailed, true, []string{"HTTP 402: pay up"}},
		{"network", ptest.Reply{Fail: errors.New("dial tcp: connection refused")}, omni.StatusTimeout, false, []string{"connection refused"}},
		{"error event", ptest.Reply{Chunks: ptest.SSE(`{"error":{"message":"quota","type":"insufficient_quota"}}`)}, omni.StatusFailed, true, []string{"insufficient_quota", "quota"}},
		{"server_error event", ptest.Reply{Chunks: ptest.SSE(`{"error":{"message":"oops","type":"server_error"}}`)}, omni.StatusTimeout, false, []string{"oops"}},
		{"not JSON", ptest.Reply{Chunks: ptest.SSE(`{nope}`)}, omni.StatusMalformed, false, []string{"malformed"}},
		// OpenRouter: an upstream's failure as an error with an HTTP code,
		// or a finish_reason "error" alone, in a 200 stream.
		{"error event with a 502 code", ptest.Reply{Chunks: ptest.SSE(chunk(`{"content":"Hel"}`), `{"error":{"code":502,"message":"Upstream error from provider"}}`)}, omni.StatusTimeout, false, []string{"502", "Upstream error from provider"}},
		{"error event with a 401 code", ptest.Reply{Chunks: ptest.SSE(`{"error":{"code":401,"message":"No auth credentials found"}}`)}, omni.StatusAuth, false, []string{"No auth credentials found"}},
		{"finish_reason error", ptest.Reply{Chunks: ptest.SSE(`{"choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":"error"}]}`, "[DONE]")}, omni.StatusTimeout, false, []string{`finish_reason "error"`}},
		// OpenRouter passes an upstream's refusal on in metadata.raw, its
		// message only "Provider returned error"; in a 200 stream too.
		{"400 with metadata.raw", ptest.Reply{Status: 400, Chunks: []string{`{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"Gemini models require OpenRouter reasoning details to be preserved in each request.","provider_name":"Google AI Studio"}}}`}}, omni.StatusFailed, true, []string{"Provider returned error (Google AI Studio): Gemini models require OpenRouter reasoning details"}},
		{"error event with metadata.raw", ptest.Reply{Chunks: ptest.SSE(`{"error":{"code":502,"message":"Provider returned error","metadata":{"raw":"upstream overloaded"}}}`)}, omni.StatusTimeout, false, []string{"Provider returned error: upstream overloaded"}},
		// Mistral's 422: the message an object of validation details.
		{"422 detail", ptest.Reply{Status: 422, Chunks: []string{`{"object":"error","message":{"detail":[{"type":"extra_forbidden","loc":["body","messages",2,"assistant","name"],"msg":"Extra inputs are not permitted","input":""},{"type":"extra_forbidden","loc":["body","n"],"msg":"other"}]},"type":"invalid_request_error","param":null,"code":null}`}}, omni.StatusFailed, true, []string{"invalid_request_error: body.messages.2.assistant.name: Extra inputs are not permitted"}},
		{"422 top-level detail", ptest.Reply{Status: 422, Chunks: []string{`{"detail":[{"loc":["body","tools"],"msg":"Input should be a valid list"}]}`}}, omni.StatusFailed, true, []string{"HTTP 422: body.tools: Input should be a valid list"}},
		{"cut before finish", ptest.Reply{Chunks: ptest.SSE(chunk(`{"content":"a"}`))}, omni.StatusMalformed, false, []string{"finish_reason"}},
		{"cut mid-event", ptest.Reply{Chunks: []string{"data: " + chunk(`{"content":"a"}`) + "\n\ndata: {\"id"}}, omni.StatusMalformed, false, []string{"middle of an event"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newModel(t, &ptest.Transport{Replies: []ptest.Reply{tc.reply}}, Options{})
			_, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("hi")}})
			if string(out.Status) != tc.status || out.Permanent != tc.permanent {
				t.Errorf("outcome %+v, want %s (permanent %v)", out, tc.status, tc.permanent)
			}
			for _, s := range tc.contains {
				if !strings.Contains(out.ErrorMessage, s) {
					t.Errorf("error message %q lacks %q", out.ErrorMessage, s)
				}
			}
		})
	}
}

// Cancelling ctx mid-stream aborts the request and closes open fragments.
func TestAbort(t *testing.T) {
	tr := &ptest.Transport{Reading: make(chan struct{}), Replies: []ptest.Reply{{Hang: true, Chunks: ptest.SSE(
		chunk(`{"content":"Hel"}`), chunk(`{"tool_calls":[{"index":0,"id":"call_x","function":{"name":"f","arguments":"{\"a\""}}]}`))}}}
	m := newModel(t, tr, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-tr.Reading; cancel() }()
	c := &ptest.Collector{T: t}
	out := m.StreamGenerate(ctx, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("hi")}}, c.Emit)
	c.End()
	if out.Status != omni.StatusAborted {
		t.Fatalf("outcome %+v", out)
	}
	got := c.Complete()
	// The text closed when the tool call began; the call was cut.
	if len(got) != 2 || !strings.Contains(got[0], `"text":"Hel","stop_reason":"completed"`) || !strings.Contains(got[1], `"arguments":"{\"a\"","tool_call_id":"call_x","stop_reason":"aborted"`) {
		t.Errorf("messages %v", got)
	}
}

// Tool call ids are unique in the session: a missing id or one used before
// (in this request, an earlier one or the loaded history) is replaced.
func TestToolCallIDs(t *testing.T) {
	call := func(i int, id string) string {
		return chunk(`{"tool_calls":[{"index":` + itoa(i) + `,"id":"` + id + `","function":{"name":"f","arguments":"{}"}}]}`)
	}
	tr := &ptest.Transport{Replies: []ptest.Reply{
		{Chunks: ptest.SSE(call(0, "dup"), call(1, ""), call(2, "dup"), call(3, "old"), finish, "[DONE]")},
		{Chunks: ptest.SSE(call(0, "dup"), finish, "[DONE]")},
	}}
	m := newModel(t, tr, Options{})
	m.LoadHistory(context.Background(), []omni.Message{omni.UserText("before"), omni.ToolCallMsg("old", "f", "{}"), omni.ToolOutput("old", "x", omni.StatusCompleted)})
	c1, _ := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("go")}})
	c2, _ := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("again")}})
	var ids []string
	for _, c := range append(c1.Calls(), c2.Calls()...) {
		ids = append(ids, c.Payload.ToolCallID)
	}
	if got, want := strings.Join(ids, ","), "dup,call_floe_1,call_floe_2,call_floe_3,call_floe_4"; got != want {
		t.Errorf("ids %s, want %s", got, want)
	}
	// The loaded history is sent before the new input.
	if got := js(tr.Body(t, 0)["messages"]); !strings.HasPrefix(got, `[{"content":[{"text":"before","type":"text"}],"role":"user"},{"content":"","role":"assistant","tool_calls":[{"function":{"arguments":"{}","name":"f"},"id":"old"`) {
		t.Errorf("history not sent: %s", got)
	}
}

// token_usage is the last message; its session counts add up the
// requests, from the totals a Factory context starts with.
func TestTokenUsage(t *testing.T) {
	tr := &ptest.Transport{Replies: []ptest.Reply{
		{Chunks: ptest.SSE(chunk(`{"content":"a"}`), finish, usage(100, 10, 40), "[DONE]")},
		{Chunks: ptest.SSE(chunk(`{"content":"b"}`), finish, usage(120, 20, 100), "[DONE]")},
		{Chunks: ptest.SSE(chunk(`{"content":"c"}`), finish, usage(5, 1, 0), "[DONE]")},
	}}
	m := newModel(t, tr, Options{})
	run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("1")}})
	c, _ := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("2")}})
	last := c.Last()
	if !last.IsEvent(omni.TokenUsage) {
		t.Fatalf("last message %s", last.AppendJSON(nil))
	}
	if got, want := js(last.Payload.Request()), `{"cache_read":100,"cache_write":0,"output":20,"total":140}`; got != want {
		t.Errorf("request %s, want %s", got, want)
	}
	if got, want := js(last.Payload.Session()), `{"cache_read":140,"cache_write":0,"output":30,"total":250}`; got != want {
		t.Errorf("session %s, want %s", got, want)
	}
	if u := m.Usage(); u.Input != 120 || u.Output != 20 || u.CacheRead != 100 {
		t.Errorf("Usage() %+v", u)
	}
	fresh := m.Factory()(omni.TokenCounts{Output: 1000, Total: 5000}).(*Model)
	c, _ = run(t, fresh, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("3")}})
	if got, want := js(c.Last().Payload.Rest.Session), `{"cache_read":0,"cache_write":0,"output":1001,"total":5006}`; got != want {
		t.Errorf("fresh session %s, want %s", got, want)
	}
	if got := js(tr.Body(t, 2)["messages"]); got != `[{"content":[{"text":"3","type":"text"}],"role":"user"}]` {
		t.Errorf("a fresh context sent history: %s", got)
	}
}

func TestOptions(t *testing.T) {
	tr := &ptest.Transport{}
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Model: "m"}, "Options.Transport is required"},
		{Options{Transport: tr}, "Options.Model is required"},
		{Options{Transport: tr, Model: "m", ExtraBody: omni.RawJSON(`[1]`)}, "Options.ExtraBody is not a JSON object"},
		// A fragment never reaches the server (a query does: see
		// TestBaseURLQuery).
		{Options{Transport: tr, Model: "m", BaseURL: "http://h/v1#x"}, "openai: Options.BaseURL: want the API's base URL without a fragment (#…): a fragment is not sent to the server"},
		{Options{Transport: tr, Model: "m", BaseURL: "https://x.openai.azure.com/openai/deployments/d?api-version=1#x"}, "without a fragment"},
		{Options{Transport: tr, Model: "m", BaseURL: "http://?api-version=1"}, "openai: Options.BaseURL: the URL names no host"},
		{Options{Transport: tr, Model: "m", BaseURL: "http://h/v1?q=a b"}, "a URL holds no spaces or control characters"},
		{Options{Transport: tr, Model: "m", BaseURL: "http://u:pw@h/v1"}, "openai: Options.BaseURL: want the API's base URL without credentials (user:password@): send the key with APIKey or Header"},
		{Options{Transport: tr, Model: "m", BaseURL: "http://h/v1 "}, "a URL holds no spaces or control characters"},
		{Options{Transport: tr, Model: "m", BaseURL: "http:///v1"}, "openai: Options.BaseURL: the URL names no host"},
		{Options{Transport: tr, Model: "m", BaseURL: "http://"}, "the URL names no host"},
		// No scheme, or one no transport sends: each request failed, and was
		// retried as a network error.
		{Options{Transport: tr, Model: "m", BaseURL: "localhost:8080/v1"}, "openai: Options.BaseURL: want an http:// or https:// URL (or a path, for a page's fetch): it names no scheme a request can use"},
		{Options{Transport: tr, Model: "m", BaseURL: "127.0.0.1:11434/v1"}, "want an http:// or https:// URL"},
		{Options{Transport: tr, Model: "m", BaseURL: "ftp://h/v1"}, "want an http:// or https:// URL"},
		// Each was taken without a word: a negative MaxTokens as none, a
		// header net/http refuses failed every request, retried as a
		// network error.
		{Options{Transport: tr, Model: "m", MaxTokens: -1}, "openai: Options.MaxTokens is negative: want 0 (the default) or a number of tokens"},
		{Options{Transport: tr, Model: "m", APIKey: "sk-secret\n"}, "openai: Options.APIKey: the value ends in a line break, which a header cannot hold (read from a file with it?)"},
		{Options{Transport: tr, Model: "m", APIKey: "sk-secret\r\n"}, "openai: Options.APIKey: the value ends in a line break"},
		{Options{Transport: tr, Model: "m", APIKey: "sk-\nsecret"}, "openai: Options.APIKey: the value holds a line break or another control character, which a header cannot hold"},
		{Options{Transport: tr, Model: "m", Header: map[string]string{"X Bad": "secret"}}, `openai: Options.Header["X Bad"]: not a header name (letters, digits and !#$%&'*+-.^_` + "`|~ only)"},
		{Options{Transport: tr, Model: "m", Header: map[string]string{"": "secret"}}, `openai: Options.Header[""]: the header name is empty`},
		{Options{Transport: tr, Model: "m", Header: map[string]string{"x-key": "se\x7fcret"}}, `openai: Options.Header["x-key"]: the value holds a line break or another control character`},
		{Options{Transport: tr, Model: "m", Header: map[string]string{"X-Key": "secret", "x-key": "secret"}}, "is there twice, its name in two cases"},
	} {
		_, err := New(tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want %q", tc.o, err, tc.want)
		} else if strings.Contains(err.Error(), "secret") {
			t.Errorf("New(%+v) = %v: it shows the value", tc.o, err)
		}
	}
	// A tab is a header's white space; a name in any case replaces the
	// adapter's header of that name (sent in lower case, it was sent
	// with the adapter's, net/http keeping one of the two at random).
	proxied, err := New(Options{Transport: tr, Model: "m", APIKey: "k", Header: map[string]string{"Authorization": "Bearer\tproxy", "X-Extra": "é"}})
	if err != nil {
		t.Fatal(err)
	}
	run(t, proxied, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}})
	if h := tr.Requests[0].Header; h["authorization"] != "Bearer\tproxy" || h["x-extra"] != "é" || h["Authorization"] != "" || h["X-Extra"] != "" {
		t.Errorf("headers %q", h)
	}
	tr.Requests = nil
	for _, u := range []string{"HTTPS://h/v1", "/v1"} { // a scheme in any case; a path, for a page's fetch
		if _, err := New(Options{Transport: tr, Model: "m", BaseURL: u}); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	if _, err := New(Options{Transport: tr, Model: "m", BaseURL: "http://h/v1/models@latest"}); err != nil {
		t.Errorf("an @ in the path: %v", err)
	}
	m, err := New(Options{Transport: tr, Model: "m"})
	if err != nil || m.opts.BaseURL != DefaultBaseURL {
		t.Fatalf("defaults: %v %q", err, m.opts.BaseURL)
	}
	run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}})
	if tr.Requests[0].URL != "https://api.openai.com/v1/chat/completions" {
		t.Errorf("URL %s", tr.Requests[0].URL)
	}
	if _, ok := tr.Requests[0].Header["authorization"]; ok {
		t.Error("authorization sent without an API key")
	}
}

// A refusal is not text: it is kept in the fidelity of an empty text.
func TestRefusal(t *testing.T) {
	tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: ptest.SSE(chunk(`{"refusal":"I can't"}`), chunk(`{"refusal":" help."}`), finish, "[DONE]")}}}
	c, out := run(t, newModel(t, tr, Options{}), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}})
	if out.Status != omni.StatusCompleted || c.Text(omni.Text) != "" {
		t.Fatalf("outcome %+v text %q", out, c.Text(omni.Text))
	}
	if got := c.Complete()[0]; !strings.Contains(got, `"fidelity":{"refusal":"I can't help."}`) {
		t.Errorf("refusal message %s", got)
	}
}

// Reasoning: a piece sent in both reasoning_content and reasoning (some
// servers send each so) is one piece; reasoning that comes back after
// text is a thinking segment of its own, after the text so far.
func TestReasoningFields(t *testing.T) {
	tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: ptest.SSE(
		chunk(`{"reasoning_content":"The","reasoning":"The"}`), chunk(`{"reasoning":" user","reasoning_content":" user"}`),
		chunk(`{"reasoning_content":"","reasoning":" asks"}`),
		chunk(`{"content":"A"}`), chunk(`{"reasoning_content":"t2"}`), chunk(`{"content":"B"}`), finish, "[DONE]")}}}
	c, out := run(t, newModel(t, tr, Options{}), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}})
	if out.Status != omni.StatusCompleted {
		t.Fatalf("outcome %+v", out)
	}
	var got []string
	for _, m := range c.Complete() {
		var v struct {
			Payload struct{ Type, Text, Thinking string }
		}
		json.Unmarshal([]byte(m), &v)
		got = append(got, v.Payload.Type+":"+v.Payload.Text+v.Payload.Thinking)
	}
	if want := []string{"thinking:The user asks", "text:A", "thinking:t2", "text:B", "token_usage:"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("complete messages %q, want %q", got, want)
	}
}

// DeepSeek's thinking mode: the reasoning of a turn that called tools, if
// it came in reasoning_content, goes back there with the turn, in every
// later request; reasoning of a turn without tool calls, or that came in
// reasoning (OpenRouter's field), does not.
func TestReasoningContentSentBack(t *testing.T) {
	call := func(id string) string {
		return chunk(`{"tool_calls":[{"index":0,"id":"` + id + `","type":"function","function":{"name":"f","arguments":"{}"}}]}`)
	}
	tr := &ptest.Transport{Replies: []ptest.Reply{
		{Chunks: ptest.SSE(chunk(`{"reasoning_content":"Need "}`), chunk(`{"reasoning_content":"a tool."}`), call("c1"), finish, "[DONE]")},
		{Chunks: ptest.SSE(chunk(`{"reasoning_content":"Done."}`), chunk(`{"content":"Sunny."}`), finish, "[DONE]")},
		{Chunks: ptest.SSE(chunk(`{"reasoning":"Again."}`), call("c2"), finish, "[DONE]")},
		{Chunks: ptest.SSE(chunk(`{"content":"ok"}`), finish, "[DONE]")},
	}}
	m := newModel(t, tr, Options{})
	run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("weather?")}})
	run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.ToolOutput("c1", "sun", omni.StatusCompleted)}})
	run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("again")}})
	run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.ToolOutput("c2", "sun", omni.StatusCompleted)}})
	var assistants []string
	for _, msg := range tr.Body(t, 3)["messages"].([]any) {
		if v := msg.(map[string]any); v["role"] == "assistant" {
			rc, _ := v["reasoning_content"].(string)
			assistants = append(assistants, fmt.Sprintf("%v/%q", v["tool_calls"] != nil, rc))
		}
	}
	if want := []string{`true/"Need a tool."`, `false/""`, `true/""`}; strings.Join(assistants, " ") != strings.Join(want, " ") {
		t.Errorf("assistant messages (tool calls / reasoning_content) %v, want %v", assistants, want)
	}
}

// OpenRouter's reasoning_details: the pieces of a reasoning.text are
// merged (their text joined, the signature that came in a piece of its
// own kept), other details kept as they came; they go back unchanged on
// the assistant message of a turn that called tools, to the endpoint
// that sent them only, and the thinking is the reasoning text once.
func TestReasoningDetailsSentBack(t *testing.T) {
	text := func(s, sig string) string {
		return `{"type":"reasoning.text","text":` + js(s) + `,"signature":` + sig + `,"id":null,"format":"anthropic-claude-v1","index":0}`
	}
	tr := &ptest.Transport{Replies: []ptest.Reply{
		{Chunks: ptest.SSE(
			chunk(`{"reasoning":"Need ","reasoning_details":[`+text("Need ", "null")+`]}`),
			chunk(`{"reasoning":"a \"tool\".","reasoning_details":[`+text(`a "tool".`, "null")+`]}`),
			chunk(`{"reasoning":null,"reasoning_details":[`+text("", `"c2lnbmF0dXJl"`)+`,{"type":"reasoning.encrypted","data":"ZW5j","id":"tool_c1","format":"google-gemini-v1","index":1}]}`),
			chunk(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}`),
			chunk(`{"tool_calls":[{"index":1,"id":"c2","type":"function","function":{"name":"f","arguments":"{}"}}]}`),
			finish, "[DONE]")},
		{Chunks: ptest.SSE(chunk(`{"reasoning_details":[`+text("Sunny, say so.", `"c2ln"`)+`]}`), chunk(`{"content":"Sunny."}`), finish, "[DONE]")},
		{Chunks: ptest.SSE(chunk(`{"content":"ok"}`), finish, "[DONE]")},
		{Chunks: ptest.SSE(chunk(`{"content":"ok"}`), finish, "[DONE]")},
	}}
	m := newModel(t, tr, Options{BaseURL: "https://openrouter.ai/api/v1"})
	c, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("weather?")}})
	if out.Status != omni.StatusCompleted {
		t.Fatalf("outcome %+v", out)
	}
	if got := c.Text(omni.Thinking); got != `Need a "tool".` {
		t.Errorf("thinking %q, want the reasoning once", got)
	}
	run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.ToolOutput("c1", "sun", omni.StatusCompleted), omni.ToolOutput("c2", "sun", omni.StatusCompleted)}})
	run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("again")}})
	want := `[{"type":"reasoning.text","text":"Need a \"tool\".","signature":"c2lnbmF0dXJl","format":"anthropic-claude-v1","index":0},{"type":"reasoning.encrypted","data":"ZW5j","id":"tool_c1","format":"google-gemini-v1","index":1}]`
	for i := 1; i <= 2; i++ {
		var got []string
		for _, msg := range tr.Body(t, i)["messages"].([]any) {
			if v := msg.(map[string]any); v["role"] == "assistant" {
				got = append(got, js(v["reasoning_details"]))
			}
		}
		// The second turn called no tool: its details are not kept.
		var details any
		json.Unmarshal([]byte(want), &details)
		if w := []string{js(details), "null"}[:i]; strings.Join(got, " ") != strings.Join(w, " ") {
			t.Errorf("request %d: assistant reasoning_details %v, want %v", i, got, w)
		}
	}
	// Another endpoint given the same history gets none of them.
	other := newModel(t, tr, Options{BaseURL: "https://api.example.com/v1"})
	other.LoadHistory(context.Background(), m.c.History)
	run(t, other, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("more")}})
	if b := string(tr.Requests[3].Body); strings.Contains(b, "reasoning_details") {
		t.Errorf("another endpoint was sent the reasoning details: %s", b)
	}
}

// reasoning_details are merged in time linear in their length: a long
// reasoning of many small pieces, in many chunks or in one, cost bytes in
// proportion to it, not to its square (joined piece by piece, 1 MiB of
// reasoning in 50-byte pieces allocated 9 GiB).
func TestReasoningDetailsLinear(t *testing.T) {
	piece := `{"type":"reasoning.text","text":"` + strings.Repeat("x", 40) + `","index":0}`
	call := chunk(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}`)
	for _, shape := range []struct {
		name   string
		chunks func(n int) []string
	}{
		{"a piece a chunk", func(n int) []string {
			var cs []string
			for range n {
				cs = append(cs, chunk(`{"reasoning_details":[`+piece+`]}`))
			}
			return cs
		}},
		{"the pieces in one chunk", func(n int) []string {
			return []string{chunk(`{"reasoning_details":[` + strings.Repeat(piece+",", n-1) + piece + `]}`)}
		}},
	} {
		allocated := func(n int) uint64 {
			tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: ptest.SSE(append(shape.chunks(n), call, finish, "[DONE]")...)}}}
			m := newModel(t, tr, Options{BaseURL: "https://openrouter.ai/api/v1"})
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			c, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("Go.")}})
			runtime.ReadMemStats(&after)
			if out.Status != omni.StatusCompleted || len(c.Text(omni.Thinking)) != 40*n {
				t.Fatalf("%s, %d pieces: %+v, %d bytes of thinking", shape.name, n, out, len(c.Text(omni.Thinking)))
			}
			return after.TotalAlloc - before.TotalAlloc
		}
		small, large := allocated(1000), allocated(4000)
		if large > 8*small {
			t.Errorf("%s: 4,000 pieces allocated %d KiB, 1,000 %d KiB: more than 8 times", shape.name, large>>10, small>>10)
		}
	}
}

// Content as an array of parts (Mistral's Magistral): text parts are
// text, thinking parts thinking.
func TestContentParts(t *testing.T) {
	tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: ptest.SSE(
		chunk(`{"role":"assistant","content":[{"type":"thinking","thinking":[{"type":"text","text":"Let me "},{"type":"text","text":"think."}]}]}`),
		chunk(`{"content":[{"type":"text","text":"Hel"}]}`), chunk(`{"content":[{"type":"text","text":"lo"}]}`), finish, "[DONE]")}}}
	c, out := run(t, newModel(t, tr, Options{}), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}})
	if out.Status != omni.StatusCompleted || c.Text(omni.Thinking) != "Let me think." || c.Text(omni.Text) != "Hello" {
		t.Fatalf("outcome %+v, thinking %q, text %q", out, c.Text(omni.Thinking), c.Text(omni.Text))
	}
}

// A tool name streamed in pieces is whole in the call's start and its
// complete message (the start waits for the arguments); a name repeated
// in every delta, or sent whole so far in each, is not doubled.
func TestToolNameInPieces(t *testing.T) {
	for _, tc := range []struct{ name, pieces string }{
		{"pieces", `"get_","weather"`},
		{"repeated", `"get_weather","get_weather","get_weather"`},
		{"whole so far", `"get","get_wea","get_weather"`},
		{"whole", `"get_weather"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pieces []string
			if err := json.Unmarshal([]byte("["+tc.pieces+"]"), &pieces); err != nil {
				t.Fatal(err)
			}
			var chunks []string
			for i, p := range pieces {
				id := ""
				if i == 0 {
					id = `"id":"c1",`
				}
				chunks = append(chunks, chunk(`{"tool_calls":[{"index":0,`+id+`"function":{"name":"`+p+`","arguments":""}}]}`))
			}
			chunks = append(chunks, chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}`),
				chunk(`{"tool_calls":[{"index":0,"function":{"name":"get_weather","arguments":"\"Oslo\"}"}}]}`), finish, "[DONE]")
			tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: ptest.SSE(chunks...)}}}
			c, out := run(t, newModel(t, tr, Options{}), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}})
			if out.Status != omni.StatusCompleted {
				t.Fatalf("outcome %+v", out)
			}
			var got []string
			for _, m := range c.Msgs {
				if m.Payload.Type == omni.PartialToolCall && m.Payload.EventType == omni.EventStart || m.IsModel(omni.ToolCall) {
					got = append(got, m.Payload.Type+" "+m.Payload.Name+" "+m.Payload.Arguments)
				}
			}
			want := []string{"partial_tool_call get_weather ", `tool_call get_weather {"city":"Oslo"}`}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

// A call with no arguments at all starts before the next one does, and
// stops and completes with the rest.
func TestToolCallNoArguments(t *testing.T) {
	tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: ptest.SSE(
		chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"no"}}]}`),
		chunk(`{"tool_calls":[{"index":0,"function":{"name":"w"}}]}`),
		chunk(`{"tool_calls":[{"index":1,"id":"b","function":{"name":"next","arguments":"{}"}}]}`), finish, "[DONE]")}}}
	c, out := run(t, newModel(t, tr, Options{}), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}})
	if out.Status != omni.StatusCompleted {
		t.Fatalf("outcome %+v", out)
	}
	var got []string
	for _, m := range c.Msgs {
		got = append(got, m.Payload.Type+":"+m.Payload.EventType+":"+m.Payload.Name)
	}
	want := "partial_tool_call:start:now|partial_tool_call:start:next|partial_tool_call:delta:next|partial_tool_call:stop:now|tool_call::now|partial_tool_call:stop:next|tool_call::next|token_usage::"
	if strings.Join(got, "|") != want {
		t.Errorf("got %s\nwant %s", strings.Join(got, "|"), want)
	}
}

// max_tokens is max_completion_tokens on OpenAI's own API (its reasoning
// models refuse the old name), max_tokens elsewhere; Mistral's API gets no
// stream_options (it refuses them); a call's arguments sent back are JSON
// (servers that parse them refuse "" or a cut-off object).
func TestRequestPerServer(t *testing.T) {
	for _, tc := range []struct{ base, key, options string }{
		{"", "max_completion_tokens", `{"include_usage":true}`},
		{"http://127.0.0.1:1/v1", "max_tokens", `{"include_usage":true}`},
		{"https://api.mistral.ai/v1", "max_tokens", "null"},
	} {
		tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: ptest.SSE(finish, "[DONE]")}}}
		m := newModel(t, tr, Options{BaseURL: tc.base, MaxTokens: 300})
		m.LoadHistory(context.Background(), []omni.Message{omni.UserText("go"), omni.ToolCallMsg("c1", "f", ""), omni.ToolOutput("c1", "x", omni.StatusCompleted)})
		run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}})
		b := tr.Body(t, 0)
		if b[tc.key] != float64(300) || js(b["stream_options"]) != tc.options {
			t.Errorf("%q: %s %v, stream_options %s", tc.base, tc.key, b[tc.key], js(b["stream_options"]))
		}
		if got := js(b["messages"].([]any)[1]); !strings.Contains(got, `"arguments":"{}"`) {
			t.Errorf("%q: the call's arguments sent back: %s", tc.base, got)
		}
	}
}

// A stream_options in ExtraBody replaces the adapter's (one member, not
// two), to Mistral's API too; null sends none, for a server that refuses
// the member, and a reply without usage then completes with the counts it
// has (none); a Factory context keeps the choice.
func TestStreamOptionsFromExtraBody(t *testing.T) {
	for _, tc := range []struct{ base, extra, want string }{
		{"", `{"stream_options":null,"temperature":0}`, "null"},
		{"", `{"temperature":0, "stream_options" : null }`, "null"},
		{"", `{ "stream_options":null , "temperature":0}`, "null"},
		{"", `{ "temperature" : 0 , "stream_options" : {"include_usage":false} }`, `{"include_usage":false}`},
		{"https://api.mistral.ai/v1", `{"temperature":0,"stream_options":{"include_usage":true}}`, `{"include_usage":true}`},
	} {
		tr := &ptest.Transport{Replies: []ptest.Reply{
			{Chunks: ptest.SSE(chunk(`{"content":"a"}`), finish, "[DONE]")},
			{Chunks: ptest.SSE(chunk(`{"content":"b"}`), finish, "[DONE]")},
		}}
		m := newModel(t, tr, Options{BaseURL: tc.base, ExtraBody: omni.RawJSON(tc.extra)})
		c, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("1")}})
		last := c.Last()
		if out.Status != omni.StatusCompleted || c.Text(omni.Text) != "a" || !last.IsEvent(omni.TokenUsage) {
			t.Errorf("%s: outcome %+v, messages %q", tc.extra, out, c.Complete())
		}
		if got := js(last.Payload.Request()); got != `{"cache_read":0,"cache_write":0,"output":0,"total":0}` {
			t.Errorf("%s: request counts %s", tc.extra, got)
		}
		run(t, m.Factory()(omni.TokenCounts{}).(*Model), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("2")}})
		for i := range tr.Requests {
			raw := string(tr.Requests[i].Body)
			b := tr.Body(t, i)
			n := strings.Count(raw, `"stream_options"`)
			if n != 1 && tc.want != "null" || n != 0 && tc.want == "null" || js(b["stream_options"]) != tc.want || b["temperature"] != 0.0 {
				t.Errorf("%s: request %d: %s", tc.extra, i, raw)
			}
		}
	}
}

// The images of tool outputs go in the user message after the tool
// messages before the user's text of the same turn (steering, the next
// prompt), as the Responses adapter sends them: after it, the model read
// a screenshot as the user's, sent with that text.
func TestToolImagesBeforeUserText(t *testing.T) {
	tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: ptest.SSE(chunk(`{"content":"Done."}`), finish, "[DONE]")}}}
	m := newModel(t, tr, Options{APIKey: "k"})
	shot := omni.ToolOutput("call_a", "shot", omni.StatusCompleted)
	shot.Payload.Edit().Images = []string{"data:image/png;base64,AAAA"}
	run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("Look."), omni.ToolCallMsg("call_a", "screenshot", "{}"), shot, omni.UserText("Now click it.")}})
	msgs := tr.Body(t, 0)["messages"].([]any)
	if got, want := js(msgs[2:]), `[{"content":"shot","role":"tool","tool_call_id":"call_a"},{"content":[{"image_url":{"url":"data:image/png;base64,AAAA"},"type":"image_url"},{"text":"Now click it.","type":"text"}],"role":"user"}]`; got != want {
		t.Errorf("messages\n got %s\nwant %s", got, want)
	}
}

// A non-image inline_data (a PDF) goes out as a file part, an image's as
// an image_url.
func TestDocuments(t *testing.T) {
	tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: ptest.SSE(chunk(`{"content":"ok"}`), finish, "[DONE]")}}}
	m := newModel(t, tr, Options{BaseURL: "http://127.0.0.1:1/v1"})
	run(t, m, engine.GenerateParams{NewMessages: ptest.Attachments()})
	if got, want := js(tr.Body(t, 0)["messages"]), `[{"content":[{"text":"Read it.","type":"text"},{"file":{"file_data":"data:application/pdf;base64,JVBERi0=","filename":"document.pdf"},"type":"file"},{"image_url":{"url":"data:image/png;base64,iVBORw=="},"type":"image_url"}],"role":"user"}]`; got != want {
		t.Errorf("messages\n got %s\nwant %s", got, want)
	}
}

// Usage is the request's own counts by the time its token_usage is
// emitted, so a run's consumer that reads it on taking that message (for
// the input count token_usage does not carry) gets them, not the last
// request's, and without a race with the adapter's goroutine.
func TestUsageAtTokenUsage(t *testing.T) {
	tr := &ptest.Transport{Replies: []ptest.Reply{
		{Chunks: ptest.SSE(chunk(`{"content":"a"}`), finish, usage(100, 10, 40), "[DONE]")},
		{Chunks: ptest.SSE(chunk(`{"content":"b"}`), finish, usage(120, 20, 100), "[DONE]")},
	}}
	m := newModel(t, tr, Options{})
	for _, want := range []int64{100, 120} {
		var got int64 = -1
		c := &ptest.Collector{T: t}
		m.StreamGenerate(context.Background(), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("q")}}, func(msg omni.Message) {
			c.Emit(msg)
			if msg.IsEvent(omni.TokenUsage) {
				got = m.Usage().Input
			}
		})
		c.End()
		if got != want {
			t.Errorf("Usage().Input at token_usage = %d, want %d", got, want)
		}
	}

	// The same through a session: the consumer is another goroutine (-race).
	tr = &ptest.Transport{Replies: []ptest.Reply{{Chunks: ptest.SSE(chunk(`{"content":"a"}`), finish, usage(7, 1, 0), "[DONE]")}}}
	m = newModel(t, tr, Options{})
	s, err := engine.New(engine.Config{Meta: enginetest.Meta("usage"), LLM: m})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := s.Run(context.Background(), []omni.Message{omni.UserText("q")}, engine.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for msg := range stream {
		if msg.IsEvent(omni.TokenUsage) {
			if u := m.Usage(); u.Input != 7 {
				t.Errorf("Usage() at the consumer's token_usage = %+v, want Input 7", u)
			}
		}
	}
}

// A base URL with a query (Azure OpenAI's deployment URLs and their
// api-version): the adapter's path goes before it, the trailing slashes
// of the base URL's path dropped, and the request keeps it; an '@' in it
// is no credentials. The endpoint that the reasoning names is the URL
// without its query, which may hold a key: a newer api-version of the
// same deployment gets its reasoning back.
func TestBaseURLQuery(t *testing.T) {
	const deployment = "https://r.openai.azure.com/openai/deployments/d"
	call := chunk(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}`)
	tr := &ptest.Transport{Replies: []ptest.Reply{
		{Chunks: ptest.SSE(chunk(`{"reasoning_content":"Need a tool."}`), call, finish, "[DONE]")},
		{Chunks: ptest.SSE(chunk(`{"content":"ok"}`), finish, "[DONE]")},
		{Chunks: ptest.SSE(chunk(`{"content":"ok"}`), finish, "[DONE]")},
	}}
	m := newModel(t, tr, Options{BaseURL: deployment + "//?api-version=2024-10-21&key=se@cret/"})
	c, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("weather?")}})
	if out.Status != omni.StatusCompleted {
		t.Fatalf("outcome %+v", out)
	}
	if got, want := tr.Requests[0].URL, deployment+"/chat/completions?api-version=2024-10-21&key=se@cret/"; got != want {
		t.Errorf("request URL %s, want %s", got, want)
	}
	for _, msg := range c.Complete() {
		if strings.Contains(msg, `"thinking"`) && !strings.Contains(msg, `"endpoint":"`+deployment+`/chat/completions"}`) {
			t.Errorf("the thinking does not name the URL without its query as its endpoint: %s", msg)
		}
		if strings.Contains(msg, "cret") || strings.Contains(msg, "api-version") {
			t.Errorf("a message holds the query: %s", msg)
		}
	}
	newer := newModel(t, tr, Options{BaseURL: deployment + "?api-version=2025-04-01-preview"})
	newer.LoadHistory(context.Background(), m.c.History)
	run(t, newer, engine.GenerateParams{NewMessages: []omni.Message{omni.ToolOutput("c1", "sun", omni.StatusCompleted)}})
	if got, want := tr.Requests[1].URL, deployment+"/chat/completions?api-version=2025-04-01-preview"; got != want {
		t.Errorf("request URL %s, want %s", got, want)
	}
	if b := string(tr.Requests[1].Body); !strings.Contains(b, `"reasoning_content":"Need a tool."`) {
		t.Errorf("the same deployment under a newer api-version was not sent its reasoning: %s", b)
	}
	// Another deployment is another endpoint.
	other := newModel(t, tr, Options{BaseURL: "https://r.openai.azure.com/openai/deployments/e?api-version=2024-10-21"})
	other.LoadHistory(context.Background(), m.c.History)
	run(t, other, engine.GenerateParams{NewMessages: []omni.Message{omni.ToolOutput("c1", "sun", omni.StatusCompleted)}})
	if b := string(tr.Requests[2].Body); strings.Contains(b, "reasoning_content") {
		t.Errorf("another deployment was sent the reasoning: %s", b)
	}
}

// DeepSeek's prompt_cache_hit_tokens counts the cache hits when no
// cached_tokens comes; a cached_tokens, before or after it, is kept.
func TestPromptCacheHitTokens(t *testing.T) {
	for usage, want := range map[string]int64{
		`{"prompt_tokens":47,"completion_tokens":12,"total_tokens":59,"prompt_cache_hit_tokens":32,"prompt_cache_miss_tokens":15}`:                                              32,
		`{"prompt_tokens":47,"completion_tokens":12,"total_tokens":59,"prompt_tokens_details":{"cached_tokens":30},"prompt_cache_hit_tokens":32}`:                               30,
		`{"prompt_tokens":47,"completion_tokens":12,"total_tokens":59,"prompt_cache_hit_tokens":32,"prompt_tokens_details":{"cached_tokens":0}}`:                                0,
		`{"prompt_tokens":47,"completion_tokens":12,"total_tokens":59,"prompt_tokens_details":{"cached_tokens":30},"prompt_cache_hit_tokens":32,"prompt_cache_miss_tokens":15}`: 30,
	} {
		tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: ptest.SSE(chunk(`{"content":"ok"}`), finish, `{"id":"c1","choices":[],"usage":`+usage+`}`, "[DONE]")}}}
		m := newModel(t, tr, Options{BaseURL: "https://api.deepseek.com", Model: "deepseek-chat"})
		run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}})
		if u := m.Usage(); u.CacheRead != want || u.Input != 47 {
			t.Errorf("%s: usage %+v, want cache reads %d", usage, u, want)
		}
	}
}

// A provider's own message in an error is cut at 2 KiB with a mark: an
// HTTP error's body (read up to 64 KiB) and an error event in the stream
// (up to 8 MiB) quoted whole went into the Trace, the run's stream and
// every client.
func TestLongErrorMessage(t *testing.T) {
	for name, reply := range map[string]ptest.Reply{
		"HTTP 400":                 {Status: 400, Chunks: []string{`{"error":{"message":"` + ptest.LongMessage(60000) + `","type":"invalid_request_error"}}`}},
		"HTTP 422 detail":          {Status: 422, Chunks: []string{`{"detail":[{"loc":["body"],"msg":"` + ptest.LongMessage(60000) + `"}]}`}},
		"error event":              {Chunks: ptest.SSE(`{"error":{"message":"` + ptest.LongMessage(1<<20) + `","type":"server_error"}}`)},
		"error event with its raw": {Chunks: ptest.SSE(`{"error":{"code":502,"message":"` + ptest.LongMessage(1<<20) + `","metadata":{"raw":"upstream"}}}`)},
	} {
		m := newModel(t, &ptest.Transport{Replies: []ptest.Reply{reply}}, Options{})
		_, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("hi")}})
		ptest.CheckLongCut(t, name, out.ErrorMessage)
	}
}

// A file the model made (assistant inline_data: an image a model generated,
// a PDF) goes as a note in the assistant's text: its content takes text
// only, and the file was left out without a word, the model not told it
// had made one.
func TestAssistantFiles(t *testing.T) {
	tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: ptest.SSE(chunk(`{"content":"ok"}`), finish, "[DONE]")}}}
	m := newModel(t, tr, Options{})
	run(t, m, engine.GenerateParams{NewMessages: ptest.MadeFiles()})
	if got, want := js(tr.Body(t, 0)["messages"]), `[{"content":[{"text":"Draw a cat.","type":"text"}],"role":"user"},{"content":"Here:\n[file not sent: image/png, made by the model; the API takes no file in an assistant message]\n[file not sent: application/pdf, made by the model; the API takes no file in an assistant message]\nDone.","role":"assistant"},{"content":[{"text":"Bluer.","type":"text"}],"role":"user"}]`; got != want {
		t.Errorf("messages\n got %s\nwant %s", got, want)
	}
}
