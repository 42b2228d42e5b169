package nethttp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider"
	"github.com/floehq/floe/provider/anthropic"
	"github.com/floehq/floe/provider/openai"
	"github.com/floehq/floe/provider/responses"
)

func TestRoundTrip(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != "POST" || r.Header.Get("X-Key") != "k" || string(body) != `{"a":1}` {
			t.Errorf("server got %s %v %s", r.Method, r.Header, body)
		}
		w.Header().Add("X-Multi", "a")
		w.Header().Add("X-Multi", "b")
		w.Header().Set("Retry-After", "3")
		w.WriteHeader(429)
		w.Write([]byte("first"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)

	ctx, cancel := context.WithCancel(context.Background())
	resp, err := New(nil).RoundTrip(ctx, &provider.Request{Method: "POST", URL: srv.URL, Header: map[string]string{"x-key": "k"}, Body: []byte(`{"a":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 429 || resp.Header["x-multi"] != "a, b" || resp.Header["retry-after"] != "3" {
		t.Errorf("response %d %v", resp.Status, resp.Header)
	}
	buf := make([]byte, 5)
	if n, err := io.ReadFull(resp.Body, buf); err != nil || string(buf[:n]) != "first" {
		t.Fatalf("read %q %v", buf[:n], err)
	}
	// The body blocks until the server goes on; cancelling ctx ends the read.
	go cancel()
	if _, err := resp.Body.Read(buf); err == nil || err == io.EOF {
		t.Errorf("read after cancel: %v, want an error", err)
	}
	resp.Body.Close()
	resp.Body.Close()

	if _, err := New(nil).RoundTrip(context.Background(), &provider.Request{URL: "http://127.0.0.1:1/"}); err == nil {
		t.Error("a refused connection gave no error")
	}
}

// A redirect is not followed: the key headers and the body never reach the
// server it points at, and the 3xx comes back (the adapters end it failed,
// permanent). A client whose CheckRedirect says how to follow is obeyed.
func TestRedirectNotFollowed(t *testing.T) {
	reached := make(chan http.Header, 4)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached <- r.Header.Clone()
		w.WriteHeader(200)
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/v1/messages", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	req := &provider.Request{Method: "POST", URL: srv.URL, Header: map[string]string{"x-api-key": "secret"}, Body: []byte(`{"a":1}`)}
	for _, c := range []*http.Client{nil, {}, {Timeout: time.Minute}} {
		resp, err := New(c).RoundTrip(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Status != http.StatusTemporaryRedirect {
			t.Errorf("status %d, want the 307 itself", resp.Status)
		}
	}
	select {
	case h := <-reached:
		t.Fatalf("the redirect was followed, with headers %v", h)
	default:
	}
	// Through an adapter: failed, permanent, naming where it pointed.
	m, err := openai.New(openai.Options{Transport: New(nil), BaseURL: srv.URL + "/v1", Model: "m", APIKey: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	out := m.StreamGenerate(context.Background(), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("hi")}}, func(omni.Message) {})
	if want := "openai: HTTP 307: the server redirected to " + other.URL + "/v1/messages, not followed: the request goes only to the URL it was sent to"; out.Status != omni.StatusFailed || !out.Permanent || out.ErrorMessage != want {
		t.Errorf("outcome %+v\nwant failed, permanent, %q", out, want)
	}
	follow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return nil }}
	resp, err := New(follow).RoundTrip(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Status != 200 || len(reached) != 1 {
		t.Errorf("a client that follows: status %d, %d requests reached the other server", resp.Status, len(reached))
	}
}

// A model whose server sends its headers and a first delta, then nothing,
// ends the request as timeout after Options.IdleTimeout, its open text
// closed; a server that never answers ends the same way.
func TestIdleTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // then the server sees the client go
		if r.URL.Query().Get("silent") == "" {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			w.Write([]byte(`data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}` + "\n\n"))
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done()
	}))
	defer srv.Close()
	for _, silent := range []bool{false, true} {
		base := srv.URL + "/v1"
		var tr provider.Transport = New(nil)
		if silent {
			inner := tr
			tr = provider.TransportFunc(func(ctx context.Context, req *provider.Request) (*provider.Response, error) {
				r := *req
				r.URL += "?silent=1"
				return inner.RoundTrip(ctx, &r)
			})
		}
		m, err := openai.New(openai.Options{Transport: tr, BaseURL: base, Model: "m", IdleTimeout: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		out := m.StreamGenerate(context.Background(), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("hi")}}, func(msg omni.Message) {
			got = append(got, msg.Type+"/"+msg.Payload.Type+"/"+msg.Payload.StopReason)
		})
		if out.Status != omni.StatusTimeout || out.ErrorMessage != "openai: no data from the server for 50ms (the idle timeout)" {
			t.Errorf("silent=%v: outcome %+v", silent, out)
		}
		if !silent && strings.Join(got, " ") != "model_msg/partial_text/ model_msg/partial_text/ model_msg/partial_text/timeout model_msg/text/timeout" {
			t.Errorf("messages %v, want the open text closed with timeout", got)
		}
	}
}

// A base URL's trailing slash (Google's documented one for Gemini,
// https://generativelanguage.googleapis.com/v1beta/openai/) is dropped by
// all three adapters, as floe.mjs's models and floe-server drop it: each
// requested "…/openai//chat/completions" from Go.
func TestBaseURLTrailingSlash(t *testing.T) {
	paths := make(chan string, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		paths <- r.URL.Path
		w.WriteHeader(404)
	}))
	defer srv.Close()
	for _, tc := range adapters("/v1beta/openai") {
		for _, base := range []string{srv.URL + "/v1beta/openai/", srv.URL + "/v1beta/openai//"} {
			m, err := tc.llm(base)
			if err != nil {
				t.Fatalf("%s %s: %v", tc.name, base, err)
			}
			m.StreamGenerate(context.Background(), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("hi")}}, func(omni.Message) {})
			if got := <-paths; got != tc.want {
				t.Errorf("%s with base URL %s requested %s, want %s", tc.name, base, got, tc.want)
			}
		}
	}
	// The slashes of a URL of no host stay: it is refused, not sent to "http:".
	for _, base := range []string{"http://", "https:///"} {
		if _, err := openai.New(openai.Options{Transport: New(nil), BaseURL: base, Model: "m"}); err == nil || !strings.Contains(err.Error(), "names no host") {
			t.Errorf("base URL %s: %v", base, err)
		}
	}
}

// adapterCase is one of the three adapters, made with a base URL, and the
// path it requests under the base URL's path dir.
type adapterCase struct {
	name string
	llm  func(base string) (engine.LLM, error)
	want string
}

func adapters(dir string) []adapterCase {
	return []adapterCase{
		{"openai", func(base string) (engine.LLM, error) {
			return openai.New(openai.Options{Transport: New(nil), BaseURL: base, Model: "m"})
		}, dir + "/chat/completions"},
		{"responses", func(base string) (engine.LLM, error) {
			return responses.New(responses.Options{Transport: New(nil), BaseURL: base, Model: "m"})
		}, dir + "/responses"},
		{"anthropic", func(base string) (engine.LLM, error) {
			return anthropic.New(anthropic.Options{Transport: New(nil), BaseURL: base, Model: "m"})
		}, dir + "/messages"},
	}
}

// A base URL with a query (Azure OpenAI's deployment URLs): each adapter
// requests its path under the base URL's path, the query kept, and an
// error quotes the URL without the query, which may hold a key: the 404's
// "(at URL)" and a connection refused, which net/http's error names with
// the whole URL.
func TestBaseURLQuery(t *testing.T) {
	type got struct{ path, query string }
	reqs := make(chan got, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		reqs <- got{r.URL.Path, r.URL.RawQuery}
		w.WriteHeader(404)
	}))
	defer srv.Close()
	const query = "api-version=2024-10-21&key=secret"
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	for _, tc := range adapters("/openai/deployments/d") {
		m, err := tc.llm(srv.URL + "/openai/deployments/d/?" + query)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		out := m.StreamGenerate(context.Background(), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("hi")}}, func(omni.Message) {})
		if r := <-reqs; r.path != tc.want || r.query != query {
			t.Errorf("%s requested %s?%s, want %s?%s", tc.name, r.path, r.query, tc.want, query)
		}
		if want := "(at " + srv.URL + tc.want + ")"; !strings.HasSuffix(out.ErrorMessage, want) {
			t.Errorf("%s: the 404's message %q, want it to end in %q", tc.name, out.ErrorMessage, want)
		}
		m, err = tc.llm(dead.URL + "/openai/deployments/d?" + query)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		out = m.StreamGenerate(context.Background(), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("hi")}}, func(omni.Message) {})
		if !strings.Contains(out.ErrorMessage, dead.URL+tc.want) || strings.Contains(out.ErrorMessage, "secret") || strings.Contains(out.ErrorMessage, "api-version") {
			t.Logf("%s", out.ErrorMessage)
			t.Errorf("%s: a refused connection's outcome %+v, want the URL without its query", tc.name, out)
		}
	}
}
