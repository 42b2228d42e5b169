package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/floehq/floe/transport/server"
)

// A page of another origin sends a POST without a preflight when its body
// has no Content-Type (fetch with mode "no-cors" and a Blob body) or none:
// without the Origin check it created a session in allow-all mode and
// started a task on it, though it could not read the answers.
func TestForeignOriginRefused(t *testing.T) {
	e := newEnv(t, server.Config{Origins: []string{"http://app.example"}})
	id := e.create("ask")
	post := func(origin, host, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", e.url+path, strings.NewReader(body))
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got struct {
			Error struct{ Code, Message string }
		}
		json.NewDecoder(resp.Body).Decode(&got)
		return resp.StatusCode, got.Error.Message
	}
	for _, c := range []struct{ path, body string }{
		{"/api/sessions", `{"id":"planted","approvalMode":"allow-all"}`},
		{"/api/sessions/" + id + "/tasks", `{"input":"list the files"}`},
		{"/api/sessions/" + id + "/abort", ``},
	} {
		for _, origin := range []string{"http://evil.example", "null", "http://app.example.evil"} {
			status, msg := post(origin, "", c.path, c.body)
			if status != http.StatusForbidden || !strings.Contains(msg, "Origin "+origin+" may not use this server") {
				t.Errorf("POST %s from %s: %d %q, want 403 naming the origin", c.path, origin, status, msg)
			}
		}
	}
	if status, body := e.do("GET", "/api/sessions", ""); status != 200 || strings.Contains(string(body), "planted") {
		t.Fatalf("sessions: %d %s", status, body)
	}
	// The allowed origin, the server's own and a client that sends none are served.
	for _, c := range []struct{ origin, host string }{{"http://app.example", ""}, {"http://127.0.0.1:8787", "127.0.0.1:8787"}, {"http://LOCALHOST:8787", "localhost:8787"}, {"", ""}} {
		if status, msg := post(c.origin, c.host, "/api/sessions/"+id+"/abort", ""); status != http.StatusNoContent {
			t.Errorf("abort from %q at %q: %d %q, want 204", c.origin, c.host, status, msg)
		}
	}
}

// A page of an origin the server does not allow reads why it is refused:
// its preflight passes and the request that follows gets the 403 naming
// the origin and the flag, with the CORS headers that let the page read
// it. Before, the preflight failed and the page saw only "Failed to
// fetch", as for a server that is down.
func TestForeignOriginReadsWhy(t *testing.T) {
	for _, origins := range [][]string{nil, {"http://app.example"}} {
		e := newEnv(t, server.Config{Origins: origins})
		id := e.create("ask")
		const page = "http://127.0.0.1:5173"
		pre, _ := http.NewRequest("OPTIONS", e.url+"/api/sessions/"+id+"/stream", nil)
		pre.Header.Set("Origin", page)
		pre.Header.Set("Access-Control-Request-Method", "GET")
		pre.Header.Set("Access-Control-Request-Headers", "authorization")
		resp, err := http.DefaultClient.Do(pre)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != page || !strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
			t.Errorf("origins %q: preflight: %d %v, want 204 letting the page send its request", origins, resp.StatusCode, resp.Header)
		}
		for _, m := range []struct{ method, path string }{{"GET", "/stream"}, {"POST", "/tasks"}} {
			req, _ := http.NewRequest(m.method, e.url+"/api/sessions/"+id+m.path, strings.NewReader(`{"input":"hi"}`))
			req.Header.Set("Origin", page)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Error struct{ Code, Message string }
			}
			json.NewDecoder(resp.Body).Decode(&got)
			resp.Body.Close()
			want := "Origin " + page + " may not use this server: start it with --origin " + page + " to allow pages of that origin"
			if resp.StatusCode != 403 || got.Error.Code != "origin_not_allowed" || got.Error.Message != want || resp.Header.Get("Access-Control-Allow-Origin") != page {
				t.Errorf("origins %q: %s %s: %d %+v, Allow-Origin %q; want 403 %q the page can read", origins, m.method, m.path, resp.StatusCode, got.Error, resp.Header.Get("Access-Control-Allow-Origin"), want)
			}
		}
		if status, body := e.do("GET", "/api/sessions/"+id+"/messages", ""); status != 200 || strings.Contains(string(body), `"hi"`) {
			t.Fatalf("origins %q: the refused task ran: %d %s", origins, status, body)
		}
	}
}
