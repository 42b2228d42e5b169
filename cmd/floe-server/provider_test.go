package main

import (
	"bytes"
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

	tt "github.com/floehq/floe/transport/transporttest"
)

// loopback is an OpenAI-compatible server on 127.0.0.1 that answers every
// Chat Completions request with a streamed text reply ("Hello from the
// loopback (N)." for the Nth request) and records the requests.
type loopback struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []seen
}

type seen struct {
	Path, Auth, Body string
}

func chunk(s string) string {
	return "data: {\"id\":\"chatcmpl-loop\",\"object\":\"chat.completion.chunk\",\"choices\":[" + s + "]}\n\n"
}

func newLoopback(t *testing.T) *loopback {
	lb := &loopback{}
	lb.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		lb.mu.Lock()
		lb.reqs = append(lb.reqs, seen{r.URL.Path, r.Header.Get("Authorization"), string(body)})
		n := len(lb.reqs)
		lb.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
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
	st := c.Open("/api/sessions/"+id+"/stream", "", false)
	defer st.Close()
	if ev := st.MustNext(); !tt.TaskState("idle")(ev) {
		t.Fatalf("first event %+v", ev)
	}
	c.Must(202, "POST", "/api/sessions/"+id+"/tasks", `{"input":"`+input+`"}`)
	var data []string
	running := false
	for !running {
		ev := st.MustNext()
		running = tt.TaskState("running")(ev)
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
	_, hist, _ := messages(t, c, id)
	if !strings.Contains(hist[0], `"provider":"openai-compatible"`) || !strings.Contains(hist[0], `"model_id":"floe-test-model"`) {
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
