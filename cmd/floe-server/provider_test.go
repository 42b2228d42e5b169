package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/floehq/floe/transport"
	"github.com/floehq/floe/transport/server"
	tt "github.com/floehq/floe/transport/transporttest"
)

// loopback is an OpenAI-compatible server on 127.0.0.1 that answers every
// Chat Completions request with a streamed text reply ("Hello from the
// loopback (N)." for the Nth request), a Responses API request with one
// ("Hello."), and records the requests.
type loopback struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []seen
}

type seen struct {
	Path, Query, Auth, Body string
}

func chunk(s string) string {
	return "data: {\"id\":\"chatcmpl-loop\",\"object\":\"chat.completion.chunk\",\"choices\":[" + s + "]}\n\n"
}

func newLoopback(t *testing.T) *loopback {
	lb := &loopback{}
	lb.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		lb.mu.Lock()
		lb.reqs = append(lb.reqs, seen{r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"), string(body)})
		n := len(lb.reqs)
		lb.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if strings.HasSuffix(r.URL.Path, "/responses") {
			io.WriteString(w, "event: response.completed\ndata: "+`{"type":"response.completed","response":{"id":"resp_1","status":"completed",`+
				`"output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hello."}]}],"usage":{"input_tokens":30,"output_tokens":2,"total_tokens":32}}}`+"\n\n")
			return
		}
		if strings.HasSuffix(r.URL.Path, "/messages") {
			io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"usage\":{\"input_tokens\":30,\"output_tokens\":1}}}\n\n"+
				"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"+
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello.\"}}\n\n"+
				"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"+
				"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n"+
				"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
			return
		}
		var b bytes.Buffer
		b.WriteString(chunk(`{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}`))
		b.WriteString(chunk(`{"index":0,"delta":{"content":"Hello from "},"finish_reason":null}`))
		b.WriteString(chunk(fmt.Sprintf(`{"index":0,"delta":{"content":"the loopback (%d)."},"finish_reason":null}`, n)))
		b.WriteString(chunk(`{"index":0,"delta":{},"finish_reason":"stop"}`))
		b.WriteString("data: {\"id\":\"chatcmpl-loop\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":30,\"completion_tokens\":6,\"total_tokens\":36}}\n\n")
		b.WriteString("data: [DONE]\n\n")
		w.Write(b.Bytes())
	}))
	t.Cleanup(lb.Close)
	return lb
}

func (lb *loopback) requests() []seen {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	return append([]seen(nil), lb.reqs...)
}

// task runs one task on session id and returns the stream's events up to
// the end of the run.
func task(t *testing.T, c *tt.Client, id, input string) []string {
	t.Helper()
	return post(t, c, id, "tasks", `{"input":"`+input+`"}`, "running")
}

// post posts body to the session's route and returns the stream's events
// from the state busy until idle again.
func post(t *testing.T, c *tt.Client, id, route, body, busy string) []string {
	t.Helper()
	st := c.Open("/api/sessions/"+id+"/stream", "", false)
	defer st.Close()
	if ev := st.MustNext(); !tt.TaskState("idle")(ev) {
		t.Fatalf("first event %+v", ev)
	}
	c.Must(202, "POST", "/api/sessions/"+id+"/"+route, body)
	var data []string
	for started := false; !started; {
		started = tt.TaskState(busy)(st.MustNext())
	}
	for _, ev := range st.Until(tt.TaskState("idle")) {
		data = append(data, ev.Data)
	}
	return data
}

func TestOpenAICompatibleModel(t *testing.T) {
	lb := newLoopback(t)
	dir := t.TempDir()
	args := []string{"--dir", dir, "--mode", "allow-all", "--model", "openai-compatible",
		"--model-id", "floe-test-model", "--base-url", lb.URL + "/v1", "--api-key-env", "FLOE_TEST_KEY"}
	env := []string{"FLOE_TEST_KEY=sk-loopback-123"}
	p := startEnv(t, env, args...)
	c := &tt.Client{T: t, URL: p.url}

	id := c.Create("")
	events := strings.Join(task(t, c, id, "Say hello."), "\n")
	if !strings.Contains(events, `"partial_`) || !strings.Contains(events, "Hello from the loopback (1).") {
		t.Fatalf("the stream lacks the streamed assistant text:\n%s", events)
	}
	reqs := lb.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Path != "/v1/chat/completions" || r.Auth != "Bearer sk-loopback-123" {
		t.Fatalf("request to %s with Authorization %q", r.Path, r.Auth)
	}
	for _, want := range []string{`"model":"floe-test-model"`, `"stream":true`, "Say hello.", `"count_lines"`} {
		if !strings.Contains(r.Body, want) {
			t.Errorf("request body lacks %s:\n%s", want, r.Body)
		}
	}
	if !strings.Contains(r.Body, "You are an agent working in a small workspace") || strings.Contains(r.Body, "scripted model") {
		t.Errorf("the request's system prompt is not the workspace prompt:\n%s", r.Body)
	}
	_, hist, _ := messages(t, c, id)
	if !strings.Contains(hist[0], `"provider":"openai-compatible"`) || !strings.Contains(hist[0], `"model_id":"floe-test-model"`) ||
		!strings.Contains(hist[0], `"model_context_window":0`) || !strings.Contains(hist[0], `"system_prompt":"You are an agent working`) {
		t.Errorf("session_meta %s", hist[0])
	}
	if j := strings.Join(hist, "\n"); !strings.Contains(j, "Hello from the loopback (1).") {
		t.Errorf("history lacks the answer:\n%s", j)
	}

	// A second session has a context of its own.
	id2 := c.Create("")
	task(t, c, id2, "Second session.")
	if b := lb.requests()[1].Body; strings.Contains(b, "Say hello.") || !strings.Contains(b, "Second session.") {
		t.Fatalf("the second session's request carries another context:\n%s", b)
	}

	// After a restart the first session's history is loaded into the model.
	p.kill()
	p2 := startEnv(t, env, args...)
	c2 := &tt.Client{T: t, URL: p2.url}
	events = strings.Join(task(t, c2, id, "Go on."), "\n")
	if !strings.Contains(events, "Hello from the loopback (3).") {
		t.Fatalf("the resumed run lacks its answer:\n%s", events)
	}
	b := lb.requests()[2].Body
	for _, want := range []string{"Say hello.", "Hello from the loopback (1).", "Go on."} {
		if !strings.Contains(b, want) {
			t.Errorf("the resumed request lacks %s:\n%s", want, b)
		}
	}
	if strings.Contains(b, "Second session.") {
		t.Errorf("the resumed request carries the other session:\n%s", b)
	}
}

// TestGeminiFlag: with --gemini, openai-compatible speaks Gemini's dialect
// to a host that is not Google's (a proxy): the thought signature of a
// tool call goes back on that call in the next request. Without it, no
// extra_content is sent.
func TestGeminiFlag(t *testing.T) {
	for _, gemini := range []bool{true, false} {
		var mu sync.Mutex
		var bodies []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			mu.Lock()
			bodies = append(bodies, string(body))
			n := len(bodies)
			mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			if n == 1 {
				io.WriteString(w, chunk(`{"index":0,"delta":{"role":"assistant","tool_calls":[{"extra_content":{"google":{"thought_signature":"c2lnLTE="}},"function":{"arguments":"{}","name":"list_files"},"id":"function-call-1","type":"function"}]},"finish_reason":"tool_calls"}`))
			} else {
				io.WriteString(w, chunk(`{"index":0,"delta":{"role":"assistant","content":"Listed."},"finish_reason":"stop"}`))
			}
			io.WriteString(w, "data: [DONE]\n\n")
		}))
		args := []string{"--dir", ":memory:", "--mode", "allow-all", "--model", "openai-compatible",
			"--model-id", "gemini-3-flash-preview", "--base-url", srv.URL + "/v1beta/openai"}
		if gemini {
			args = append(args, "--gemini")
		}
		p := startEnv(t, nil, args...)
		c := &tt.Client{T: t, URL: p.url}
		events := strings.Join(task(t, c, c.Create(""), "List the files."), "\n")
		p.kill()
		srv.Close()
		if !strings.Contains(events, "Listed.") || len(bodies) != 2 {
			t.Fatalf("gemini %v: %d requests, events:\n%s", gemini, len(bodies), events)
		}
		sent := strings.Contains(bodies[1], `"extra_content":{"google":{"thought_signature":"c2lnLTE="}}`)
		if sent != gemini || (!gemini && strings.Contains(bodies[1], "extra_content")) {
			t.Errorf("gemini %v: the second request's tool call:\n%s", gemini, bodies[1])
		}
	}
}

// --starts-in-thinking (or FLOE_STARTS_IN_THINKING) reaches the Chat and
// Responses adapters: a reply of "reasoning…</think>answer" (a chat
// template that opened the thinking) is thinking, then text; without it,
// all text.
func TestStartsInThinkingFlag(t *testing.T) {
	reply := `Okay, the user.</think>\n\nHi.`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		if strings.HasSuffix(r.URL.Path, "/responses") {
			io.WriteString(w, `data: {"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"`+reply+`"}`+"\n\n"+
				`data: {"type":"response.completed","response":{"status":"completed","output":[]}}`+"\n\n")
			return
		}
		io.WriteString(w, chunk(`{"index":0,"delta":{"role":"assistant","content":"`+reply+`"},"finish_reason":"stop"}`)+"data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	for _, c := range []struct {
		model string
		env   []string
		flags []string
		want  string
	}{
		{"openai-compatible", nil, nil, "text:Okay, the user.</think>\n\nHi."},
		{"openai-compatible", nil, []string{"--starts-in-thinking"}, "thinking:Okay, the user.|text:Hi."},
		{"openai-compatible", []string{"FLOE_STARTS_IN_THINKING=true"}, nil, "thinking:Okay, the user.|text:Hi."},
		{"openai-responses", []string{"FLOE_STARTS_IN_THINKING=1"}, nil, "thinking:Okay, the user.|text:Hi."},
		{"openai-responses", nil, []string{"--starts-in-thinking"}, "thinking:Okay, the user.|text:Hi."},
	} {
		p := startEnv(t, c.env, append([]string{"--dir", ":memory:", "--model", c.model, "--model-id", "qwq", "--base-url", srv.URL + "/v1"}, c.flags...)...)
		cl := &tt.Client{T: t, URL: p.url}
		id := cl.Create("")
		task(t, cl, id, "Hello.")
		_, hist, _ := messages(t, cl, id)
		p.kill()
		var got []string
		for _, h := range hist {
			var m struct {
				Type    string
				Payload struct{ Type, Role, Text, Thinking string }
			}
			json.Unmarshal([]byte(h), &m)
			if m.Type == "model_msg" && m.Payload.Role == "assistant" {
				got = append(got, m.Payload.Type+":"+m.Payload.Text+m.Payload.Thinking)
			}
		}
		if g := strings.Join(got, "|"); g != c.want {
			t.Errorf("%s %v %v: the reply is %q, want %q", c.model, c.env, c.flags, g, c.want)
		}
	}
}

// A base URL with a query (Azure OpenAI's deployment URLs): the
// adapter's path goes before it, and the request keeps it.
func TestBaseURLQuery(t *testing.T) {
	lb := newLoopback(t)
	p := startEnv(t, nil, "--dir", ":memory:", "--model", "openai-compatible", "--model-id", "m", "--base-url", lb.URL+"/openai/deployments/d/?api-version=2024-10-21")
	c := &tt.Client{T: t, URL: p.url}
	if events := strings.Join(task(t, c, c.Create(""), "Say hello."), "\n"); !strings.Contains(events, "Hello from the loopback (1).") {
		t.Fatalf("the stream lacks the reply:\n%s", events)
	}
	if r := lb.requests()[0]; r.Path != "/openai/deployments/d/chat/completions" || r.Query != "api-version=2024-10-21" {
		t.Errorf("request to %s?%s, want /openai/deployments/d/chat/completions?api-version=2024-10-21", r.Path, r.Query)
	}
}

// --max-images (and --max-image-bytes) reach the adapter: past it the
// oldest image of a task goes as a text saying so; --no-images sends
// none, for a model without vision.
func TestImageFlags(t *testing.T) {
	img := func(n int) string {
		return `{"type":"model_msg","payload":{"type":"image_url","role":"user","image_url":"data:image/png;base64,iVBORw0KGgo` + strings.Repeat("A", n) + `"}}`
	}
	input := `{"input":[{"type":"model_msg","payload":{"type":"text","role":"user","text":"Look."}},` + img(1) + "," + img(2) + "]}"
	for _, c := range []struct {
		model      string
		flags      []string
		sent, text int
		want       string
	}{
		{"openai-compatible", nil, 2, 0, ""},
		{"openai-compatible", []string{"--max-images", "1"}, 1, 1, "[image omitted: "},
		{"openai-compatible", []string{"--max-image-bytes", "40"}, 1, 1, "[image omitted: "},
		{"openai-compatible", []string{"--max-images", "1", "--max-images", "0"}, 2, 0, ""},
		{"openai-compatible", []string{"--no-images"}, 0, 2, "[image not sent: the model takes no images]"},
		{"openai-responses", nil, 2, 0, ""},
		{"openai-responses", []string{"--no-images"}, 0, 2, "[image not sent: the model takes no images]"},
		{"anthropic", nil, 2, 0, ""},
		{"anthropic", []string{"--no-images"}, 0, 2, "[image not sent: the model takes no images]"},
	} {
		lb := newLoopback(t)
		p := startEnv(t, []string{"OPENAI_API_KEY=k", "ANTHROPIC_API_KEY=k"}, append([]string{"--dir", ":memory:", "--model", c.model, "--model-id", "m", "--base-url", lb.URL + "/v1"}, c.flags...)...)
		cl := &tt.Client{T: t, URL: p.url}
		post(t, cl, cl.Create(""), "tasks", input, "running")
		p.kill()
		reqs := lb.requests()
		if len(reqs) != 1 {
			t.Fatalf("%s %v: %d requests", c.model, c.flags, len(reqs))
		}
		b := reqs[0].Body
		image := `"image_url":{"url":"data:image/png`
		switch c.model {
		case "openai-responses":
			image = `"image_url":"data:image/png`
		case "anthropic":
			image = `"media_type":"image/png"`
		}
		if sent := strings.Count(b, image); sent != c.sent || c.want != "" && strings.Count(b, c.want) != c.text {
			t.Errorf("%s %v: %d images sent, want %d, and %d times %s, in\n%s", c.model, c.flags, sent, c.sent, c.text, c.want, b)
		}
	}
}

// --keep-warm and --keep-warm-mb reach the server's Config: the bound in
// bytes, none by default.
func TestKeepWarmFlags(t *testing.T) {
	cfg, _, err := parse([]string{"--dir", ":memory:"}, func(string) string { return "" })
	if err != nil || cfg.KeepWarm != 8 || cfg.KeepWarmBytes != 0 {
		t.Fatalf("defaults: KeepWarm %d, KeepWarmBytes %d, %v; want 8, 0", cfg.KeepWarm, cfg.KeepWarmBytes, err)
	}
	cfg, _, err = parse([]string{"--dir", ":memory:", "--keep-warm", "0", "--keep-warm-mb", "64"}, func(string) string { return "" })
	if err != nil || cfg.KeepWarm != -1 || cfg.KeepWarmBytes != 64<<20 {
		t.Fatalf("--keep-warm 0 --keep-warm-mb 64: KeepWarm %d, KeepWarmBytes %d, %v; want -1, %d", cfg.KeepWarm, cfg.KeepWarmBytes, err, 64<<20)
	}
}

// --max-streams reaches the channels' options: 1,000 streams of a session
// by default, none past it with 0.
func TestMaxStreamsFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want int
	}{{nil, 1000}, {[]string{"--max-streams", "8"}, 8}, {[]string{"--max-streams", "0"}, -1}} {
		cfg, _, err := parse(append([]string{"--dir", ":memory:"}, c.args...), func(string) string { return "" })
		if err != nil || cfg.Channel.MaxSubscribers != c.want {
			t.Errorf("%q: MaxSubscribers %d, %v; want %d", c.args, cfg.Channel.MaxSubscribers, err, c.want)
		}
	}
}

func TestFlagErrors(t *testing.T) {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OPENAI_API_KEY=") && !strings.HasPrefix(kv, "ANTHROPIC_API_KEY=") {
			env = append(env, kv)
		}
	}
	cases := []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"--model", "gpt"}, `--model "gpt": want scripted, openai`},
		{nil, []string{"--model", "openai"}, "--model-id: required with --model openai"},
		{nil, []string{"--model", "openai-compatible", "--model-id", "m"}, "--base-url: required with --model openai-compatible"},
		{nil, []string{"--model", "openai-compatible", "--model-id", "m", "--base-url", "127.0.0.1:9"}, `--base-url "127.0.0.1:9": want an http:// or https:// URL`},
		// A base URL the adapter's paths cannot be appended to: the
		// server started, then sent its requests elsewhere.
		{nil, []string{"--model", "openai-compatible", "--model-id", "m", "--base-url", "http://127.0.0.1:9/v1#frag"}, `--base-url "http://127.0.0.1:9/v1#frag": want the API's base URL without a fragment (#…): a fragment is not sent to the server`},
		{nil, []string{"--model", "openai-compatible", "--model-id", "m", "--base-url", "http://127.0.0.1:9/v1?key=secret#frag"}, `--base-url "http://127.0.0.1:9/v1?…": want the API's base URL without a fragment`},
		{nil, []string{"--model", "openai-compatible", "--model-id", "m", "--base-url", "http://?api-version=1"}, `--base-url "http://?…": the URL names no host`},
		{nil, []string{"--model", "openai-compatible", "--model-id", "m", "--base-url", "http://u:pw@127.0.0.1:9/v1"}, `--base-url "http://u:pw@127.0.0.1:9/v1": want the API's base URL without credentials (user:password@): send the key with --api-key-env`},
		{nil, []string{"--model", "openai-compatible", "--model-id", "m", "--base-url", "http:///v1"}, `--base-url "http:///v1": the URL names no host`},
		{nil, []string{"--model", "openai-compatible", "--model-id", "m", "--base-url", "http://127.0.0.1:9/v1 "}, `--base-url "http://127.0.0.1:9/v1 ": a URL holds no spaces or control characters`},
		{nil, []string{"--model", "openai", "--model-id", "m"}, "--model openai: the environment variable OPENAI_API_KEY is empty or unset"},
		{nil, []string{"--model", "openai-responses", "--model-id", "m"}, "the environment variable OPENAI_API_KEY is empty"},
		{nil, []string{"--model", "anthropic", "--model-id", "m"}, "--model anthropic: the environment variable ANTHROPIC_API_KEY is empty"},
		{[]string{"ANTHROPIC_API_KEY=k"}, []string{"--model", "anthropic", "--model-id", "m", "--api-key-env", "MY_KEY"}, "--api-key-env: the environment variable MY_KEY is empty"},
		{[]string{"OPENAI_API_KEY=k"}, []string{"--model", "openai", "--model-id", "m", "--delay", "1ms"}, "--delay: only with --model scripted"},
		{nil, []string{"--model-id", "m"}, "--model-id: only with a provider model"},
		{nil, []string{"--base-url", "http://x"}, "--base-url: only with a provider model"},
		{nil, []string{"--mode", "sometimes"}, `--mode "sometimes": want ask`},
		{nil, []string{"--api-key", "sk-1"}, "flag provided but not defined: -api-key"},
		{nil, []string{"--port", "70000"}, "--port 70000: out of range"},
		{nil, []string{"--idle-timeout", "1m"}, "--idle-timeout: only with a provider model"},
		{[]string{"OPENAI_API_KEY=k"}, []string{"--model", "openai", "--model-id", "m", "--idle-timeout", "soon"}, `--idle-timeout "soon": want a duration up to a day, such as 90s or 5m, or milliseconds (0: none)`},
		{nil, []string{"--origin", "not a url"}, `--origin "not a url": want origins such as https://app.example`},
		{nil, []string{"--origin", "https://a.example, https://b.example/app"}, `--origin "https://b.example/app": want origins such as`},
		{nil, []string{"--origin", "a.example"}, `--origin "a.example": want origins`},
		{nil, []string{"--delay", "-5s"}, "--delay -5s: want 0 or more"},
		{nil, []string{"--replay-events", "-1"}, "--replay-events -1: want 0 or more"},
		{nil, []string{"--keep-warm", "-2"}, "--keep-warm -2: want 0 or more"},
		{nil, []string{"--max-streams", "-1"}, "--max-streams -1: want 0 (no bound) or more"},
		{nil, []string{"--keep-warm-mb", "-1"}, "--keep-warm-mb -1: want 0 (no bound) or more"},
		{nil, []string{"--keep-warm-mb", "2000000000"}, "--keep-warm-mb 2000000000: want at most 1073741824 (1 PB)"},
		{nil, []string{"--keep-warm-mb", "lots"}, `invalid value "lots" for flag -keep-warm-mb`},
		{nil, []string{"--system", "Hi"}, "--system: only with a provider model"},
		{[]string{"OPENAI_API_KEY=k"}, []string{"--model", "openai", "--model-id", "m", "--context-window", "lots"}, `--context-window "lots": want a number of tokens`},
		{nil, []string{"--gemini"}, "--gemini: only with a provider model"},
		{[]string{"ANTHROPIC_API_KEY=k"}, []string{"--model", "anthropic", "--model-id", "m", "--gemini"}, "--gemini: only with --model openai or openai-compatible (Gemini's OpenAI-compatible endpoint), not --model anthropic"},
		{nil, []string{"--model", "openai-compatible", "--model-id", "m", "--base-url", "http://127.0.0.1:9/v1", "--gemini=maybe"}, `invalid boolean value "maybe" for -gemini`},
		{nil, []string{"--max-images", "3"}, "--max-images: only with a provider model"},
		{[]string{"OPENAI_API_KEY=k"}, []string{"--model", "openai", "--model-id", "m", "--max-image-bytes", "-1"}, `--max-image-bytes "-1": want a whole number of bytes, at most 2147483647 (0: no limit)`},
		{[]string{"OPENAI_API_KEY=k"}, []string{"--model", "openai", "--model-id", "m", "--max-images", "ten"}, `--max-images "ten": want a whole number of images, at most 2147483647 (0: no limit)`},
		{nil, []string{"--no-images"}, "--no-images: only with a provider model"},
		{[]string{"ANTHROPIC_API_KEY=k"}, []string{"--model", "anthropic", "--model-id", "m", "--starts-in-thinking"}, "--starts-in-thinking: only with --model openai, openai-compatible or openai-responses (a chat template that opens the thinking), not --model anthropic"},
		{nil, []string{"--starts-in-thinking"}, "--starts-in-thinking: only with a provider model (--model scripted is offline)"},
	}
	for _, tc := range cases {
		cmd := exec.Command(binary, append([]string{"--dir", ":memory:"}, tc.args...)...)
		cmd.Env = append(env, tc.env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 {
			t.Errorf("%v: %v, want exit status 2", tc.args, err)
		}
		if !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: stderr %q, want %q", tc.args, stderr.String(), tc.want)
		}
	}
}

func TestProviderCompaction(t *testing.T) {
	lb := newLoopback(t)
	p := startEnv(t, []string{"FLOE_TEST_KEY=k"}, "--dir", ":memory:", "--mode", "allow-all", "--model", "openai-compatible",
		"--model-id", "m", "--base-url", lb.URL, "--api-key-env", "FLOE_TEST_KEY")
	c := &tt.Client{T: t, URL: p.url}
	id := c.Create("")
	task(t, c, id, "Say hello.")
	events := strings.Join(post(t, c, id, "compact", "", "compacting"), "\n")
	if !strings.Contains(events, `"compaction_end"`) || !strings.Contains(events, `"status":"completed"`) {
		t.Fatalf("the compaction did not complete:\n%s", events)
	}
	if b := lb.requests()[1].Body; !strings.Contains(b, server.CompactPrompt) || !strings.Contains(b, "Say hello.") {
		t.Fatalf("the summarize request lacks the prompt or the conversation:\n%s", b)
	}
	task(t, c, id, "After.")
	b := lb.requests()[2].Body
	if !strings.Contains(b, "Hello from the loopback (2).") || !strings.Contains(b, "After.") || strings.Contains(b, "Say hello.") {
		t.Fatalf("after compaction the request does not start from the summary:\n%s", b)
	}
}

// TestEveryProviderModel runs each provider model against a loopback server
// replaying a recorded stream of its wire (testdata/providers): the request
// goes to the adapter's path with the key from the model's default
// environment variable, and the streamed reply reaches the session stream
// up to its tool call.
func TestEveryProviderModel(t *testing.T) {
	cases := []struct {
		model, fixture, env, path, header, key, want string
	}{
		{"openai", "chat_text_reasoning_tool", "OPENAI_API_KEY=sk-o", "/v1/chat/completions", "Authorization", "Bearer sk-o", "Let me check Z\u00fcrich."},
		{"openai-responses", "responses_reasoning_parallel_calls", "OPENAI_API_KEY=sk-o", "/v1/responses", "Authorization", "Bearer sk-o", "Two lookups."},
		{"anthropic", "messages_thinking_text_tool", "ANTHROPIC_API_KEY=sk-a", "/v1/messages", "X-Api-Key", "sk-a", "Checking K\u00f6ln."},
		// Without --api-key-env an OpenAI-compatible server gets no key,
		// not the OpenAI one.
		{"openai-compatible", "chat_text_reasoning_tool", "OPENAI_API_KEY=sk-o", "/v1/chat/completions", "Authorization", "", "Let me check Z\u00fcrich."},
	}
	for _, tc := range cases {
		t.Run(tc.model, func(t *testing.T) {
			raw, err := os.ReadFile("../../testdata/providers/" + tc.fixture + ".json")
			if err != nil {
				t.Fatal(err)
			}
			var fx struct {
				Response struct{ Body string }
			}
			if err := json.Unmarshal(raw, &fx); err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var got []seen
			lb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				got = append(got, seen{Path: r.URL.Path, Auth: r.Header.Get(tc.header)})
				mu.Unlock()
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, fx.Response.Body)
			}))
			defer lb.Close()
			p := startEnv(t, []string{tc.env},
				"--dir", ":memory:", "--model", tc.model, "--model-id", "m", "--base-url", lb.URL+"/v1")
			c := &tt.Client{T: t, URL: p.url}
			id := c.Create("ask")
			st := c.Open("/api/sessions/"+id+"/stream", "", false)
			defer st.Close()
			st.MustNext()
			c.Must(202, "POST", "/api/sessions/"+id+"/tasks", `{"input":"What is the weather?"}`)
			var text []string
			// The approval request may come before the relayed messages: wait
			// for the tool call itself, which follows the text.
			for _, ev := range st.Until(func(ev transport.Received) bool { return tt.PayloadType(ev) == "tool_call" }) {
				text = append(text, ev.Data)
			}
			if j := strings.Join(text, "\n"); !strings.Contains(j, tc.want) {
				t.Fatalf("the stream lacks %q:\n%s", tc.want, j)
			}
			c.Must(202, "POST", "/api/sessions/"+id+"/abort", "")
			st.Until(tt.TaskState("idle"))
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 1 || got[0].Path != tc.path || got[0].Auth != tc.key {
				t.Fatalf("requests %+v, want one to %s with %s %q", got, tc.path, tc.header, tc.key)
			}
		})
	}
}
