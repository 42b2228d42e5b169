package openai

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider/internal/ptest"
	"github.com/floehq/floe/provider/nethttp"
)

// Google's Gemini API serves Chat Completions at
// https://generativelanguage.googleapis.com/v1beta/openai/. The byte
// streams below are hand-made from Google's documentation of that
// endpoint and of thought signatures, and from the streams users quote in
// their reports: each tool call whole in one delta, without "index";
// Gemini 3's thought signature in the call's
// extra_content.google.thought_signature (on the first call of parallel
// calls only), which must come back on that call in the next request, else
// 400; finish_reason "stop" after tool calls; usage in the chunks; errors
// as a list, [{"error":{…}}]. They are served by a loopback server.

type geminiServer struct {
	*httptest.Server
	mu      sync.Mutex
	replies []geminiReply
	paths   []string
	bodies  []map[string]any
}

type geminiReply struct {
	status int
	body   string
}

func newGeminiServer(t *testing.T, replies ...geminiReply) *geminiServer {
	s := &geminiServer{replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(b, &body); err != nil {
			t.Errorf("request body %s: %v", b, err)
		}
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.Path)
		s.bodies = append(s.bodies, body)
		n := len(s.bodies)
		s.mu.Unlock()
		if n > len(s.replies) {
			t.Errorf("request %d unexpected", n)
			w.WriteHeader(500)
			return
		}
		rep := s.replies[n-1]
		if rep.status != 200 {
			w.Header().Set("content-type", "application/json; charset=UTF-8")
			w.WriteHeader(rep.status)
		} else {
			w.Header().Set("content-type", "text/event-stream")
		}
		io.WriteString(w, rep.body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *geminiServer) model(t *testing.T) *Model {
	t.Helper()
	m, err := New(Options{Transport: nethttp.New(nil), Model: "gemini-3-flash-preview", APIKey: "AIza-test", BaseURL: s.URL + "/v1beta/openai/", Gemini: true})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// geminiSSE frames Gemini's chunks as its stream does: data lines, blank
// line separated, [DONE] last.
func geminiSSE(payloads ...string) string {
	var b strings.Builder
	for _, p := range payloads {
		b.WriteString("data: " + p + "\n\n")
	}
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

func geminiChunk(delta, finish, usage string) string {
	s := `{"choices":[{"delta":` + delta
	if finish != "" {
		s += `,"finish_reason":"` + finish + `"`
	}
	s += `,"index":0}],"created":1763700000,"id":"Qk3aaJ-lCdeV7M8Pt7mU2Qk","model":"gemini-3-flash-preview","object":"chat.completion.chunk"`
	if usage != "" {
		s += `,"usage":` + usage
	}
	return s + "}"
}

var geminiWeather = []omni.ToolDefinition{{Name: "get_weather", Description: "The weather in a city.",
	Parameters: omni.RawJSON(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}}

// The two requests of a tool loop: the call streams whole, without index,
// its signature in extra_content, and ends with finish_reason "stop"; the
// next request sends the call back with its extra_content as it came.
func TestGeminiToolLoopSignature(t *testing.T) {
	s := newGeminiServer(t,
		geminiReply{200, geminiSSE(
			geminiChunk(`{"role":"assistant","tool_calls":[{"extra_content":{"google":{"thought_signature":"CpMCAdHtim9sig/A+="}},"function":{"arguments":"{\"city\":\"Paris\"}","name":"get_weather"},"id":"function-call-9391452301816236913","type":"function"}]}`, "", ""),
			geminiChunk(`{"role":"assistant"}`, "stop", `{"completion_tokens":17,"prompt_tokens":61,"total_tokens":142}`))},
		geminiReply{200, geminiSSE(
			geminiChunk(`{"content":"It is 18°C in Paris.","role":"assistant"}`, "", ""),
			geminiChunk(`{"role":"assistant"}`, "stop", `{"completion_tokens":9,"prompt_tokens":95,"total_tokens":104}`))},
	)
	m := s.model(t)
	c, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("Weather in Paris?")}, Tools: geminiWeather})
	if out.Status != omni.StatusCompleted {
		t.Fatalf("outcome %+v", out)
	}
	calls := c.Calls()
	if len(calls) != 1 || calls[0].Payload.Name != "get_weather" || calls[0].Payload.Arguments != `{"city":"Paris"}` || calls[0].Payload.ToolCallID != "function-call-9391452301816236913" {
		t.Fatalf("calls %v", c.Complete())
	}
	if u := m.Usage(); u.Input != 61 || u.Output != 17 {
		t.Errorf("usage %+v", u)
	}
	_, out = run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.ToolOutput("function-call-9391452301816236913", "18°C", omni.StatusCompleted)}, Tools: geminiWeather})
	if out.Status != omni.StatusCompleted {
		t.Fatalf("second outcome %+v", out)
	}
	if s.paths[0] != "/v1beta/openai/chat/completions" {
		t.Errorf("path %s", s.paths[0])
	}
	msgs := s.bodies[1]["messages"].([]any)
	if got, want := js(msgs[1:]), `[{"content":"","role":"assistant","tool_calls":[{"extra_content":{"google":{"thought_signature":"CpMCAdHtim9sig/A+="}},"function":{"arguments":"{\"city\":\"Paris\"}","name":"get_weather"},"id":"function-call-9391452301816236913","type":"function"}]},{"content":"18°C","role":"tool","tool_call_id":"function-call-9391452301816236913"}]`; got != want {
		t.Errorf("second request\n got %s\nwant %s", got, want)
	}
}

// The signature is in the tool call's fidelity, so it lives in the Trace:
// a context resumed from the messages as written (LoadHistory) sends it
// back as the live one does.
func TestGeminiSignatureAfterResume(t *testing.T) {
	s := newGeminiServer(t,
		geminiReply{200, geminiSSE(
			geminiChunk(`{"role":"assistant","tool_calls":[{"extra_content":{"google":{"thought_signature":"Q2lRQmp6MXJY"}},"function":{"arguments":"{\"city\":\"Oslo\"}","name":"get_weather"},"id":"function-call-7","type":"function"}]}`, "stop", "")),
		},
		geminiReply{200, geminiSSE(geminiChunk(`{"content":"Cold.","role":"assistant"}`, "stop", ""))},
	)
	c, _ := run(t, s.model(t), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("Oslo?")}, Tools: geminiWeather})
	call := c.Calls()
	if len(call) != 1 {
		t.Fatalf("messages %v", c.Complete())
	}
	written := call[0].AppendJSON(nil)
	if !strings.Contains(string(written), `"fidelity":{"google":{"thought_signature":"Q2lRQmp6MXJY"}}`) {
		t.Errorf("tool call as written: %s", written)
	}
	read, err := omni.Decode(written)
	if err != nil {
		t.Fatal(err)
	}
	m := s.model(t)
	m.LoadHistory(context.Background(), []omni.Message{omni.UserText("Oslo?"), read})
	run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.ToolOutput("function-call-7", "-3°C", omni.StatusCompleted)}, Tools: geminiWeather})
	if got := js(s.bodies[1]["messages"].([]any)[1].(map[string]any)["tool_calls"]); !strings.Contains(got, `"extra_content":{"google":{"thought_signature":"Q2lRQmp6MXJY"}}`) {
		t.Errorf("resumed context sent %s", got)
	}
}

// Parallel calls: in one chunk or one chunk each, without index, the
// signature on the first only. Each is a call of its own, and only the
// first goes back with a signature.
func TestGeminiParallelCalls(t *testing.T) {
	first := `{"extra_content":{"google":{"thought_signature":"EjQKMgEMOdbH"}},"function":{"arguments":"{\"city\":\"Paris\"}","name":"get_weather"},"id":"function-call-1","type":"function"}`
	second := `{"function":{"arguments":"{\"city\":\"Rome\"}","name":"get_weather"},"id":"function-call-2","type":"function"}`
	for name, stream := range map[string]string{
		"one chunk": geminiSSE(geminiChunk(`{"role":"assistant","tool_calls":[`+first+`,`+second+`]}`, "", ""),
			geminiChunk(`{"role":"assistant"}`, "stop", `{"completion_tokens":30,"prompt_tokens":61,"total_tokens":91}`)),
		"a chunk each": geminiSSE(geminiChunk(`{"role":"assistant","tool_calls":[`+first+`]}`, "", ""),
			geminiChunk(`{"role":"assistant","tool_calls":[`+second+`]}`, "", ""),
			geminiChunk(`{"role":"assistant"}`, "stop", `{"completion_tokens":30,"prompt_tokens":61,"total_tokens":91}`)),
	} {
		t.Run(name, func(t *testing.T) {
			s := newGeminiServer(t, geminiReply{200, stream}, geminiReply{200, geminiSSE(geminiChunk(`{"content":"Mild in both.","role":"assistant"}`, "stop", ""))})
			m := s.model(t)
			c, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("Paris and Rome?")}, Tools: geminiWeather})
			if out.Status != omni.StatusCompleted || len(c.Calls()) != 2 {
				t.Fatalf("outcome %+v, messages %v", out, c.Complete())
			}
			run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.ToolOutput("function-call-1", "19°C", omni.StatusCompleted), omni.ToolOutput("function-call-2", "21°C", omni.StatusCompleted)}})
			msgs := s.bodies[1]["messages"].([]any)
			if got, want := js(msgs[1].(map[string]any)["tool_calls"]), `[`+first+`,`+second+`]`; got != js(json.RawMessage(want)) {
				t.Errorf("calls sent back\n got %s\nwant %s", got, js(json.RawMessage(want)))
			}
		})
	}
}

// A Gemini 3 text answer carries its signature on the delta itself; it
// need not come back and changes nothing of the text. Usage comes in
// every chunk, the last one's counts being the request's.
func TestGeminiTextSignatureAndUsage(t *testing.T) {
	s := newGeminiServer(t, geminiReply{200, geminiSSE(
		geminiChunk(`{"content":"Hello","role":"assistant"}`, "", `{"completion_tokens":1,"prompt_tokens":8,"total_tokens":9}`),
		geminiChunk(`{"content":" there.","extra_content":{"google":{"thought_signature":"CrICAdHtim827fQ"}},"role":"assistant"}`, "stop", `{"completion_tokens":3,"prompt_tokens":8,"total_tokens":40}`))})
	m := s.model(t)
	c, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("Hi")}})
	if out.Status != omni.StatusCompleted || c.Text(omni.Text) != "Hello there." {
		t.Fatalf("outcome %+v, messages %v", out, c.Complete())
	}
	last := c.Last()
	if got, want := js(last.Payload.Request()), `{"cache_read":0,"cache_write":0,"output":3,"total":40}`; got != want {
		t.Errorf("request usage %s, want %s", got, want)
	}
}

// Gemini's errors are a JSON list of one error object; the message it
// holds is the failure's.
func TestGeminiErrors(t *testing.T) {
	for _, tc := range []struct {
		status    int
		body      string
		want      string
		permanent bool
		contains  []string
	}{
		{400, "[{\n  \"error\": {\n    \"code\": 400,\n    \"message\": \"Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly.\",\n    \"status\": \"INVALID_ARGUMENT\"\n  }\n}\n]\n",
			omni.StatusFailed, true, []string{"HTTP 400", "INVALID_ARGUMENT", "Function call is missing a thought_signature"}},
		{400, `[{"error":{"code":400,"message":"Invalid reasoning_effort: minimal. Valid values are: high, low, medium, none","status":"INVALID_ARGUMENT"}}]`,
			omni.StatusFailed, true, []string{"Invalid reasoning_effort: minimal"}},
		{429, "[{\n  \"error\": {\n    \"code\": 429,\n    \"message\": \"You exceeded your current quota, please check your plan and billing details.\",\n    \"status\": \"RESOURCE_EXHAUSTED\"\n  }\n}\n]\n",
			omni.StatusTimeout, false, []string{"HTTP 429", "You exceeded your current quota"}},
		{401, `[{"error":{"code":401,"message":"API key not valid. Please pass a valid API key.","status":"UNAUTHENTICATED"}}]`,
			omni.StatusAuth, false, []string{"API key not valid"}},
	} {
		t.Run(tc.want+" "+tc.contains[len(tc.contains)-1], func(t *testing.T) {
			s := newGeminiServer(t, geminiReply{tc.status, tc.body})
			_, out := run(t, s.model(t), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("hi")}})
			if string(out.Status) != tc.want || out.Permanent != tc.permanent {
				t.Errorf("outcome %+v, want %s (permanent %v)", out, tc.want, tc.permanent)
			}
			for _, want := range tc.contains {
				if !strings.Contains(out.ErrorMessage, want) {
					t.Errorf("error message %q lacks %q", out.ErrorMessage, want)
				}
			}
		})
	}
}

// A Gemini 3 request whose turn holds tool calls Gemini did not make (a
// history carried over from another model, a Trace from before the
// signatures were kept) was refused with a 400, "Function call is missing
// a thought_signature". Google documents a stand-in signature for such
// calls, checked on the first call of each step: each step's first call
// without a signature gets it, later calls of parallel ones nothing, and a
// call with its own signature keeps it. The bytes are hand-made from
// Google's documentation of thought signatures.
func TestGeminiStandInSignature(t *testing.T) {
	s := newGeminiServer(t, geminiReply{200, geminiSSE(geminiChunk(`{"content":"Done.","role":"assistant"}`, "stop", ""))})
	m := s.model(t)
	signed := omni.ToolCallMsg("function-call-3", "get_weather", `{"city":"Oslo"}`)
	signed.Payload.Rest = &omni.Rest{Fidelity: omni.RawJSON(`{"google":{"thought_signature":"CpMCAdHtim9s"}}`)}
	m.LoadHistory(context.Background(), []omni.Message{
		omni.UserText("Paris, Rome, then Oslo?"),
		omni.ToolCallMsg("call_a", "get_weather", `{"city":"Paris"}`), // another model's parallel calls
		omni.ToolCallMsg("call_b", "get_weather", `{"city":"Rome"}`),
		omni.ToolOutput("call_a", "19°C", omni.StatusCompleted),
		omni.ToolOutput("call_b", "21°C", omni.StatusCompleted),
		signed,
	})
	_, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.ToolOutput("function-call-3", "-3°C", omni.StatusCompleted)}, Tools: geminiWeather})
	if out.Status != omni.StatusCompleted {
		t.Fatalf("outcome %+v", out)
	}
	msgs := s.bodies[0]["messages"].([]any)
	stand := `{"google":{"thought_signature":"skip_thought_signature_validator"}}`
	calls := msgs[1].(map[string]any)["tool_calls"].([]any)
	if got := js(calls[0].(map[string]any)["extra_content"]); got != stand {
		t.Errorf("first call of the step: extra_content %s, want %s", got, stand)
	}
	if _, ok := calls[1].(map[string]any)["extra_content"]; ok {
		t.Errorf("second call of the step: %s, want no extra_content", js(calls[1]))
	}
	if got := js(msgs[4].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["extra_content"]); got != `{"google":{"thought_signature":"CpMCAdHtim9s"}}` {
		t.Errorf("a signed call sent back with %s", got)
	}
}

// extra_content goes only to Gemini (a strict server may refuse a member
// it does not know); the signature stays in the tool call's fidelity, so
// the Trace keeps it for a later Gemini context. Gemini is told by the
// base URL's host, or by Options.Gemini (a proxy).
func TestExtraContentOnlyToGemini(t *testing.T) {
	stream := geminiSSE(
		geminiChunk(`{"role":"assistant","tool_calls":[{"extra_content":{"google":{"thought_signature":"Q2lRQmp6"}},"function":{"arguments":"{\"city\":\"Oslo\"}","name":"get_weather"},"id":"function-call-7","type":"function"}]}`, "stop", ""))
	s := newGeminiServer(t, geminiReply{200, stream}, geminiReply{200, geminiSSE(geminiChunk(`{"content":"Cold.","role":"assistant"}`, "stop", ""))})
	m, err := New(Options{Transport: nethttp.New(nil), Model: "some-model", BaseURL: s.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("Oslo?")}, Tools: geminiWeather})
	if calls := c.Calls(); len(calls) != 1 || string(calls[0].Payload.Fidelity()) != `{"google":{"thought_signature":"Q2lRQmp6"}}` {
		t.Fatalf("calls %v", c.Complete())
	}
	run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.ToolOutput("function-call-7", "-3°C", omni.StatusCompleted)}, Tools: geminiWeather})
	if got := js(s.bodies[1]["messages"]); strings.Contains(got, "extra_content") {
		t.Errorf("a server not Gemini's got %s", got)
	}

	for base, want := range map[string]bool{
		"https://generativelanguage.googleapis.com/v1beta/openai/":     true,
		"https://GenerativeLanguage.googleapis.com:443/v1beta/openai":  true,
		"https://generativelanguage.googleapis.com?alt=sse":            true, // a query after the host
		"https://generativelanguage.googleapis.com.example.net/v1":     false,
		"https://example.net/generativelanguage.googleapis.com/openai": false,
		"https://api.openai.com/v1":                                    false,
		"/v1":                                                          false,
	} {
		tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: ptest.SSE(chunk(`{"content":"ok"}`), finish, "[DONE]")}}}
		m := newModel(t, tr, Options{BaseURL: base})
		if m.opts.Gemini != want {
			t.Errorf("%s: Gemini %v, want %v", base, m.opts.Gemini, want)
		}
		m.LoadHistory(context.Background(), []omni.Message{omni.UserText("go"), omni.ToolCallMsg("c1", "f", "{}"), omni.ToolOutput("c1", "x", omni.StatusCompleted)})
		run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("x")}, ThinkingLevel: "max"})
		b := tr.Body(t, 0)
		if sent := strings.Contains(js(b["messages"]), skipSignature); sent != want {
			t.Errorf("%s: stand-in signature sent %v, want %v", base, sent, want)
		}
		if effort := map[bool]string{true: "high", false: "xhigh"}[want]; b["reasoning_effort"] != effort {
			t.Errorf("%s: reasoning_effort %v, want %s", base, b["reasoning_effort"], effort)
		}
	}
}

// Gemini's endpoint takes reasoning_effort none, low, medium and high and
// answers 400 to minimal and xhigh ("Invalid reasoning_effort: minimal.
// Valid values are: high, low, medium, none", as users quote it): to
// Gemini, minimal (a budget of it) is low, the same 1,024 tokens Google
// gives minimal on a Gemini 2.5 and Gemini 3 Pro's low, and max (xhigh)
// is high.
func TestGeminiThinkingLevels(t *testing.T) {
	for level, want := range map[string]string{
		"minimal": "low", "1024": "low", "low": "low", "medium": "medium", "high": "high",
		"max": "high", "xhigh": "high", "40000": "high", "none": "",
	} {
		s := newGeminiServer(t, geminiReply{200, geminiSSE(geminiChunk(`{"content":"ok","role":"assistant"}`, "stop", ""))})
		_, out := run(t, s.model(t), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("hi")}, ThinkingLevel: level})
		if out.Status != omni.StatusCompleted {
			t.Errorf("level %q: outcome %+v", level, out)
		}
		if got, _ := s.bodies[0]["reasoning_effort"].(string); got != want {
			t.Errorf("level %q: reasoning_effort %q, want %q", level, got, want)
		}
	}
}

// An error in the middle of a 200 stream, after text: as an object, or as
// Gemini gives its errors, a list ([{"error":{…}}]) on one data line or
// pretty-printed over several. The list was a malformed stream ("an
// event's data is not a JSON object"), not retried; now it is the error it
// holds, an overload (503 UNAVAILABLE) or a quota (429) retried as timeout.
// The bytes are hand-made from Google's error format and users' reports.
func TestGeminiErrorMidStream(t *testing.T) {
	text := "data: " + geminiChunk(`{"content":"Let me","role":"assistant"}`, "", "") + "\n\n"
	for name, tc := range map[string]struct{ event, status, want string }{
		"list": {`data: [{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}]`,
			omni.StatusTimeout, "openai: error event: UNAVAILABLE (503): The model is overloaded. Please try again later."},
		"pretty-printed list": {"data: [{\ndata:   \"error\": {\ndata:     \"code\": 429,\ndata:     \"message\": \"Resource exhausted. Please try again later.\",\ndata:     \"status\": \"RESOURCE_EXHAUSTED\"\ndata:   }\ndata: }\ndata: ]",
			omni.StatusTimeout, "openai: error event: RESOURCE_EXHAUSTED (429): Resource exhausted. Please try again later."},
		"object": {`data: {"error":{"code":500,"message":"An internal error has occurred.","status":"INTERNAL"}}`,
			omni.StatusTimeout, "openai: error event: INTERNAL (500): An internal error has occurred."},
		"list of another error": {`data: [{"error":{"code":400,"message":"Request contains an invalid argument.","status":"INVALID_ARGUMENT"}}]`,
			omni.StatusFailed, "openai: error event: INVALID_ARGUMENT (400): Request contains an invalid argument."},
	} {
		t.Run(name, func(t *testing.T) {
			s := newGeminiServer(t, geminiReply{200, text + tc.event + "\n\n"})
			_, out := run(t, s.model(t), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("hi")}})
			if string(out.Status) != tc.status || out.ErrorMessage != tc.want {
				t.Errorf("outcome %+v\nwant %s, %q", out, tc.status, tc.want)
			}
		})
	}
}
