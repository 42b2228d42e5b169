package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/floehq/floe/transport/server"
	tt "github.com/floehq/floe/transport/transporttest"
)

// TestLoopbackServerAnswersLoopbackNamesOnly: a page on a name of the
// attacker's that resolves to 127.0.0.1 (DNS rebinding) is of the same
// origin as the server for its browser: its requests carry Host and Origin
// of that name, and before they were served, so the page could list the
// sessions, read their messages and answer their approvals.
func TestLoopbackServerAnswersLoopbackNamesOnly(t *testing.T) {
	url, port := serveAt(t, server.Config{}, "127.0.0.1:0")
	(&tt.Client{T: t, URL: url}).Create("ask")
	get := func(host string) (int, string) { return hostGet(t, url, host, "") }
	for _, host := range []string{"rebind.example:" + port, "rebind.example", "127.0.0.1.rebind.example:" + port, "localhost.example:" + port} {
		status, body := get(host)
		if status != http.StatusMisdirectedRequest || strings.Contains(body, "session-") || !strings.Contains(body, `Host \"`+host+`\"`) {
			t.Errorf("Host %s: %d %s, want 421 naming the host and no session", host, status, body)
		}
	}
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LocalHost:" + port, "app.localhost:" + port, "[::1]:" + port, "127.0.0.2:" + port} {
		if status, body := get(host); status != http.StatusOK || !strings.Contains(body, "session-") {
			t.Errorf("Host %s: %d %s, want the sessions", host, status, body)
		}
	}
}

// TestServerWithoutTokenAnswersNoOtherNames: on an address of the network
// (--host 0.0.0.0, to be reached from a phone) and without a --token, a
// page on any name the attacker makes resolve to the server's address
// could list the sessions, read their messages, answer their approvals and
// run tasks on the server's model key: the Host check held on loopback
// addresses only. Without a token such a server now answers IP addresses,
// loopback names and --origin hosts; with one, every name (the token is
// the check).
func TestServerWithoutTokenAnswersNoOtherNames(t *testing.T) {
	serveOn := func(cfg server.Config) (url, port string) { return serveAt(t, cfg, "0.0.0.0:0") }
	get := func(url, host, token string) (int, string) { return hostGet(t, url, host, token) }
	url, port := serveOn(server.Config{Origins: []string{"https://app.example"}})
	(&tt.Client{T: t, URL: url}).Create("ask")
	for _, host := range []string{"rebind.example:" + port, "192.168.1.10.rebind.example:" + port, "app.example.rebind.example:" + port} {
		status, body := get(url, host, "")
		if status != http.StatusMisdirectedRequest || strings.Contains(body, "session-") || !strings.Contains(body, `Host \"`+host+`\"`) || !strings.Contains(body, "--token") {
			t.Errorf("Host %s: %d %s, want 421 naming the host and --token, and no session", host, status, body)
		}
	}
	for _, host := range []string{"192.168.1.10:" + port, "[fe80::1]:" + port, "127.0.0.1:" + port, "localhost:" + port, "app.example"} {
		if status, body := get(url, host, ""); status != http.StatusOK || !strings.Contains(body, "session-") {
			t.Errorf("Host %s: %d %s, want the sessions", host, status, body)
		}
	}
	// With a token, a name is served (to whoever holds the token).
	url, port = serveOn(server.Config{Token: "secret"})
	if status, body := get(url, "floe.example:"+port, "secret"); status != http.StatusOK {
		t.Errorf("with a token, Host floe.example: %d %s, want 200", status, body)
	}
	if status, _ := get(url, "floe.example:"+port, ""); status != http.StatusUnauthorized {
		t.Errorf("with a token, Host floe.example without it: %d, want 401", status)
	}
}

// TestHostFlagNameIsServed: a name given as --host is the operator's, so
// a server without a token listening there answers it.
func TestHostFlagNameIsServed(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	h := namedHostsOnly(ok, "floe.lan", nil)
	for host, want := range map[string]int{"floe.lan:8787": 204, "FLOE.LAN.": 204, "10.0.0.2:8787": 204, "other.lan:8787": 421} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/api/sessions", nil)
		req.Host = host
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %s: %d, want %d", host, rec.Code, want)
		}
	}
}

// serveAt runs the server on addr until the test ends: the URL it is
// reached at on loopback, and its port.
func serveAt(t *testing.T, cfg server.Config, addr string) (url, port string) {
	ctx, stop := context.WithCancel(context.Background())
	out := make(lines, 4)
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, addr, out) }()
	t.Cleanup(func() { stop(); <-done })
	_, rest, _ := strings.Cut(<-out, "listening on ")
	listen := strings.TrimSuffix(strings.Fields(rest)[0], "/")
	port = listen[strings.LastIndexByte(listen, ':')+1:]
	return "http://127.0.0.1:" + port, port
}

// hostGet lists the sessions at url as a page on host would ask: Host and
// Origin name it.
func hostGet(t *testing.T, url, host, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url+"/api/sessions", nil)
	req.Host = host
	req.Header.Set("Origin", "http://"+host)
	status, body, _ := send(t, req, token)
	return status, body
}

// TestServerWithoutTokenWarns: a server off loopback without a --token
// serves an open API, as asked; its log says so once, at the start, as the
// Worker's does without FLOE_TOKEN. Before, nothing said it. On loopback,
// or with a token, there is no such record.
func TestServerWithoutTokenWarns(t *testing.T) {
	for _, c := range []struct {
		addr, token string
		warns       bool
	}{{"0.0.0.0:0", "", true}, {"0.0.0.0:0", "tok", false}, {"127.0.0.1:0", "", false}, {"localhost:0", "", false}} {
		ctx, stop := context.WithCancel(context.Background())
		log := &syncBuffer{}
		out := make(lines, 4)
		done := make(chan error, 1)
		go func() {
			done <- serve(ctx, server.Config{Token: c.token}, c.addr, out, runOpts{log: newLogger(log, "text"), lim: defaultLimits})
		}()
		<-out // the warning, when there is one, is logged before this line
		got := strings.Count(log.String(), "no --token: the API answers whoever reaches this address")
		if want := map[bool]int{true: 1, false: 0}[c.warns]; got != want {
			t.Errorf("%s, token %q: %d warnings, want %d; log: %s", c.addr, c.token, got, want, log.String())
		}
		if c.warns && !strings.Contains(log.String(), "level=WARN") {
			t.Errorf("%s: not a warning: %s", c.addr, log.String())
		}
		stop()
		<-done
	}
}
