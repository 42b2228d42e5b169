package api_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/floehq/floe/transport/server"
)

// FuzzRoutes sends any request path (escaped as a client may), method and
// body to the API: no answer is a 500 or a panic, and every error is the
// API's JSON error naming its code and a message of one line. A stream's
// request has its context ended, so that it answers at once.
func FuzzRoutes(f *testing.F) {
	srv, err := server.New(server.Config{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(srv.Close)
	r := httptest.NewRequest("POST", "/api/sessions", strings.NewReader(`{"id":"s1","approvalMode":"ask"}`))
	w := httptest.NewRecorder()
	srv.Handler.ServeHTTP(w, r)
	if w.Code != 201 {
		f.Fatalf("create: %d %s", w.Code, w.Body)
	}
	for _, s := range [][3]string{
		{"/api/sessions/s1/approvals/call_1", "POST", `{"decision":"allow"}`},
		{"/api/sessions/s1/approvals/a%2Fb", "POST", `{"decision":"deny"}`},
		{"/api/sessions/s1%2Fapprovals/approvals/c", "POST", `{}`},
		{"/api/sessions/s1/approvals/%zz", "POST", ``},
		{"/api/sessions/s1/approvals/", "POST", `{}`},
		{"/api/sessions/", "GET", ``},
		{"/api/sessions/s1/", "GET", ``},
		{"/api/sessions/s1/messages", "GET", ``},
		{"/api/sessions/s1/stream", "GET", ``},
		{"/api/events", "GET", ``},
		{"/api/sessions/s1", "PATCH", "\xef\xbb\xbf{\"approvalMode\":\"auto\"}"},
		{"/api/sessions/s1/abort", "POST", "\xff\xfe{\x00}\x00"},
		{"/api/sessions/%2e%2e/x", "DELETE", ``},
		{"/api/%73essions/s1/approvals/c", "POST", `{"decision":"allow"}`},
		{"/api/sessions/s1/approvals/c%0d%0a", "HEAD", ``},
	} {
		f.Add(s[0], s[1], s[2])
	}
	methods := []string{"GET", "POST", "PATCH", "DELETE", "HEAD", "PUT", "OPTIONS"}
	f.Fuzz(func(t *testing.T, path, method, body string) {
		u, err := url.ParseRequestURI(path)
		if err != nil || !strings.HasPrefix(path, "/") {
			return
		}
		if method == "" || strings.Trim(method, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
			method = methods[len(method)%len(methods)]
		}
		if method == "DELETE" && strings.Trim(u.Path, "/") == "api/sessions/s1" {
			return // the session the others use
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if strings.HasSuffix(u.Path, "/stream") || strings.HasSuffix(u.Path, "/events") {
			cancel() // a stream answers at once
		}
		r := httptest.NewRequest(method, "/", strings.NewReader(body)).WithContext(ctx)
		r.URL, r.RequestURI = u, path
		w := httptest.NewRecorder()
		srv.Handler.ServeHTTP(w, r)
		if w.Code >= 500 && w.Code != 503 && (ctx.Err() == nil || !strings.HasSuffix(w.Body.String(), `context canceled"}}`+"\n")) {
			t.Fatalf("%s %q: %d %s", method, path, w.Code, w.Body)
		}
		if w.Code < 400 || method == "HEAD" {
			return
		}
		var e struct {
			Error struct{ Code, Message string }
		}
		if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error.Code == "" || e.Error.Message == "" || strings.ContainsAny(e.Error.Message, "\r\n") {
			t.Fatalf("%s %q: %d %s", method, path, w.Code, w.Body)
		}
	})
}
