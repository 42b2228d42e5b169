package main

import (
	"context"
	"io"
	"net/http"
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
	ctx, stop := context.WithCancel(context.Background())
	out := make(lines, 4)
	done := make(chan error, 1)
	go func() { done <- run(ctx, server.Config{}, "127.0.0.1:0", out) }()
	t.Cleanup(func() { stop(); <-done })
	_, rest, _ := strings.Cut(<-out, "listening on ")
	url := strings.TrimSuffix(strings.Fields(rest)[0], "/")
	port := url[strings.LastIndexByte(url, ':')+1:]
	(&tt.Client{T: t, URL: url}).Create("ask")
	get := func(host string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", url+"/api/sessions", nil)
		req.Host = host
		req.Header.Set("Origin", "http://"+host)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
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
