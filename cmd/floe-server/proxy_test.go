package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/floehq/floe/transport/server"
	tt "github.com/floehq/floe/transport/transporttest"
)

// serveLoopback runs the server of cfg on a loopback address, as
// floe-server does by default, and returns its URL.
func serveLoopback(t *testing.T, cfg server.Config) string {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	out := make(lines, 4)
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, "127.0.0.1:0", out) }()
	t.Cleanup(func() { stop(); <-done })
	_, rest, _ := strings.Cut(<-out, "listening on ")
	return strings.TrimSuffix(strings.Fields(rest)[0], "/")
}

// prefixProxy is a reverse proxy that serves target under /agent/ and, as
// Caddy's reverse_proxy and httputil.NewSingleHostReverseProxy do, passes
// the Host the browser sent on.
func prefixProxy(t *testing.T, target string) string {
	t.Helper()
	u, _ := url.Parse(target)
	ps := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.Out.URL.Path = strings.TrimPrefix(pr.In.URL.Path, "/agent")
		pr.Out.URL.RawPath = strings.TrimPrefix(pr.In.URL.RawPath, "/agent")
		pr.SetURL(u)
		pr.Out.Host = pr.In.Host
	}})
	t.Cleanup(ps.Close)
	return ps.URL + "/agent"
}

// page sends requests as a page of https://<host> does through the proxy:
// Host is the public name, and Origin that of the page.
type page struct {
	host string
	rt   http.RoundTripper
}

func (p page) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Host = p.host
	r.Header.Set("Origin", "https://"+p.host)
	return p.rt.RoundTrip(r)
}

func pageClient(t *testing.T, base, host string) *tt.Client {
	return &tt.Client{T: t, URL: base, HTTP: &http.Client{Transport: page{host, &http.Transport{}}}}
}

// TestBehindAReverseProxy: a proxy that passes on the public Host (Caddy's
// default) in front of a server on loopback, which names that origin with
// --origin. Before, every request was refused 421 (the loopback guard knew
// loopback names only), with advice to listen on another interface instead.
// The stream comes through event by event, and resumes from Last-Event-ID.
func TestBehindAReverseProxy(t *testing.T) {
	base := prefixProxy(t, serveLoopback(t, server.Config{Mode: "allow-all", Origins: []string{"https://agent.example"}}))
	c := pageClient(t, base, "agent.example")
	id := c.Create("allow-all")
	st := c.Open("/api/sessions/"+id+"/stream", "", false)
	defer st.Close()
	if ev := st.MustNext(); !tt.TaskState("idle")(ev) { // before any run: not held back
		t.Fatalf("first event %+v", ev)
	}
	runAndResume(t, c, id, st)
	// Another name is still refused, the guard's purpose (DNS rebinding).
	if status, body := pageClient(t, base, "rebind.example").Do("GET", "/api/sessions", ""); status != http.StatusMisdirectedRequest || !strings.Contains(string(body), "--origin") {
		t.Errorf("Host rebind.example: %d %s, want 421 naming --origin", status, body)
	}
	// "*" allows every origin's CORS requests but names no host.
	wild := prefixProxy(t, serveLoopback(t, server.Config{Origins: []string{"*"}}))
	if status, body := pageClient(t, wild, "agent.example").Do("GET", "/api/sessions", ""); status != http.StatusMisdirectedRequest {
		t.Errorf("--origin *, Host agent.example: %d %s, want 421", status, body)
	}
}

// runAndResume runs a task of session id, read to its end on st (then
// closed), and opens the stream again after its second event: the next
// one comes, Last-Event-ID passed through.
func runAndResume(t *testing.T, c *tt.Client, id string, st *tt.Stream) {
	t.Helper()
	c.Must(202, "POST", "/api/sessions/"+id+"/tasks", `{"input":"Count the lines of main.go"}`)
	evs := st.Until(tt.TaskState("idle"))
	st.Close()
	again := c.Open("/api/sessions/"+id+"/stream", evs[1].ID, true)
	defer again.Close()
	if ev := again.MustNext(); ev.ID != evs[2].ID {
		t.Fatalf("resumed after %s at %s, want %s", evs[1].ID, ev.ID, evs[2].ID)
	}
}
