package openai

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
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
	m, err := New(Options{Transport: nethttp.New(nil), Model: "gemini-3-flash-preview", APIKey: "AIza-test", BaseURL: s.URL + "/v1beta/openai"})
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

// Parallel calls: in one chunk or one chunk each, without index, the
// signature on the first only. Each is a call of its own.
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
			s := newGeminiServer(t, geminiReply{200, stream})
			m := s.model(t)
			c, out := run(t, m, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("Paris and Rome?")}, Tools: geminiWeather})
			if out.Status != omni.StatusCompleted || len(c.Calls()) != 2 {
				t.Fatalf("outcome %+v, messages %v", out, c.Complete())
			}
			var got []string
			for _, c := range c.Calls() {
				got = append(got, c.Payload.ToolCallID+" "+c.Payload.Arguments)
			}
			if g, want := strings.Join(got, ", "), `function-call-1 {"city":"Paris"}, function-call-2 {"city":"Rome"}`; g != want {
				t.Errorf("calls %s, want %s", g, want)
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
