package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/floehq/floe/transport/server"
)

// Every refused request answers a clear 4xx error and changes nothing: the
// session list, the session's history and its channel stay as they were.
func TestBadInputCorpus(t *testing.T) {
	e := newEnv(t, server.Config{})
	id := e.create("ask")
	s := "/api/sessions/" + id
	huge := `{"input":"` + strings.Repeat("x", 1<<20) + `"}`
	cases := []struct {
		method, path, body string
		status             int
		code               string
		hdr                []string
	}{
		{"POST", s + "/tasks", `{`, 400, "bad_json", nil},
		{"POST", s + "/tasks", `{"input":"hi","bogus":1}`, 400, "bad_json", nil},
		{"POST", s + "/tasks", `["hi"]`, 400, "bad_json", nil},
		{"POST", s + "/tasks", `"hi"`, 400, "bad_json", nil},
		{"POST", s + "/tasks", `{"input":"hi"} {"input":"again"}`, 400, "bad_json", nil},
		{"POST", s + "/tasks", ``, 400, "bad_json", nil},
		{"POST", s + "/tasks", `{}`, 400, "bad_request", nil},
		{"POST", s + "/tasks", `{"input":""}`, 400, "bad_request", nil},
		{"POST", s + "/tasks", `{"input":[]}`, 400, "bad_request", nil},
		{"POST", s + "/tasks", `{"input":42}`, 400, "bad_request", nil},
		{"POST", s + "/tasks", `{"input":[{"type":"model_msg","payload":{"type":"text"}}]}`, 400, "bad_request", nil},
		{"POST", s + "/tasks", `{"input":[{"type":"model_msg","payload":{"type":"text","role":"user","text":7}}]}`, 400, "bad_request", nil},
		{"POST", s + "/tasks", `{"input":"hi","queueIfBusy":"yes"}`, 400, "bad_json", nil},
		{"POST", s + "/tasks", huge, 413, "body_too_large", nil},
		{"POST", s + "/tasks", `{"input":"hi"}`, 415, "unsupported_media_type", []string{"Content-Type", "text/plain"}},
		{"GET", s + "/tasks", ``, 405, "method_not_allowed", nil},
		{"DELETE", s + "/stream", ``, 405, "method_not_allowed", nil},
		{"PUT", "/api/sessions", ``, 405, "method_not_allowed", nil},
		{"POST", s, `{}`, 405, "method_not_allowed", nil},
		{"POST", "/api/sessions/session-none/tasks", `{"input":"hi"}`, 404, "session_not_found", nil},
		{"GET", "/api/sessions/session-none/stream", ``, 404, "session_not_found", nil},
		{"GET", "/api/sessions/..%2F..%2Fetc/messages", ``, 404, "session_not_found", nil}, // one segment, no session id
		{"GET", "/api/sessions/bad%20id/messages", ``, 404, "session_not_found", nil},
		{"DELETE", "/api/sessions/session-none", ``, 404, "session_not_found", nil},
		{"GET", "/api/nothing", ``, 404, "not_found", nil},
		{"GET", s + "/nothing", ``, 404, "not_found", nil},
		{"GET", "/elsewhere", ``, 404, "not_found", nil},
		{"POST", s + "/steer", `{"text":"x"}`, 409, "not_running", nil},
		{"POST", s + "/steer", `{"text":""}`, 400, "bad_request", nil},
		{"POST", s + "/steer", `{"text":"  "}`, 400, "bad_request", nil},
		{"POST", s + "/steer", `{"txt":"x"}`, 400, "bad_json", nil},
		{"POST", s + "/abort", `{`, 400, "bad_json", nil},
		{"POST", s + "/retry-now", `{"now":true}`, 400, "bad_json", nil},
		{"POST", s + "/compact", ``, 409, "nothing_to_compact", nil},
		{"POST", s + "/approvals/call_9", `{"decision":"allow"}`, 404, "approval_not_found", nil},
		{"POST", s + "/approvals/call_9", `{"decision":"maybe"}`, 400, "bad_request", nil},
		{"POST", s + "/approvals/call_9", `{}`, 400, "bad_request", nil},
		{"PATCH", s, `{"approvalMode":"sometimes"}`, 400, "bad_request", nil},
		{"PATCH", s, `{}`, 400, "bad_request", nil},
		{"POST", "/api/sessions", `{"approvalMode":"x"}`, 400, "bad_request", nil},
		{"POST", "/api/sessions", `{"id":"a/b"}`, 400, "bad_request", nil},
		{"POST", "/api/sessions", `{"id":"` + id + `"}`, 409, "session_exists", nil},
		{"POST", "/api/sessions", `{"title":"x"}`, 400, "bad_json", nil},
	}
	if _, body := e.do("POST", "/api/sessions", `{"id":"`+id+`"}`); !strings.Contains(string(body), `\"`+id+`\" exists`) {
		t.Errorf("session_exists names no id: %s", body)
	}
	before := observe(e, id)
	for _, tc := range cases {
		status, body := e.do(tc.method, tc.path, tc.body, tc.hdr...)
		var eb struct {
			Error struct{ Code, Message string }
		}
		if err := json.Unmarshal(body, &eb); err != nil || status != tc.status || eb.Error.Code != tc.code || eb.Error.Message == "" {
			short := tc.body
			if len(short) > 60 {
				short = short[:60] + "…"
			}
			t.Errorf("%s %s %s: %d %s; want %d %s", tc.method, tc.path, short, status, body, tc.status, tc.code)
		}
		if after := observe(e, id); after != before {
			t.Fatalf("%s %s %s changed the server:\nbefore %s\nafter  %s", tc.method, tc.path, tc.body, before, after)
		}
	}
}

// A client's slips that are not wrong input as such: a path with a
// trailing slash is a 404 saying the API's paths have none, and a body
// that starts with a UTF-8 byte order mark is read.
func TestTrailingSlashAndByteOrderMark(t *testing.T) {
	e := newEnv(t, server.Config{})
	id := e.create("ask")
	for _, path := range []string{"/api/sessions/", "/api/sessions/" + id + "/", "/api/sessions/" + id + "/messages/"} {
		status, body := e.do("GET", path, "")
		if status != 404 || !strings.Contains(string(body), "no route "+path+" (the API's paths end without a slash)") {
			t.Errorf("GET %s: %d %s; want 404 naming the trailing slash", path, status, body)
		}
	}
	e.must(201, "POST", "/api/sessions", "\ufeff"+`{"id":"with-bom"}`)
	e.must(204, "POST", "/api/sessions/"+id+"/abort", "\ufeff{}")
	// A body of a byte order mark alone is as empty as none, where a body
	// may be left out (a file saved empty by an editor that adds one).
	e.must(204, "POST", "/api/sessions/"+id+"/abort", "\ufeff")
	e.must(201, "POST", "/api/sessions", "\ufeff\n")
}

// observe describes everything a request could change.
func observe(e *env, id string) string {
	_, list := e.do("GET", "/api/sessions", "")
	_, hist := e.do("GET", "/api/sessions/"+id+"/messages", "")
	_, info := e.do("GET", "/api/sessions/"+id, "")
	ch := e.srv.Hub.Channel(id)
	return string(list) + string(hist) + string(info) + ch.LastID()
}

func TestBearerTokenOnEveryRoute(t *testing.T) {
	e := newEnv(t, server.Config{Token: "s3cret"})
	id := e.create("ask")
	s := "/api/sessions/" + id
	routes := [][2]string{
		{"GET", "/api/sessions"}, {"POST", "/api/sessions"}, {"GET", s}, {"PATCH", s}, {"DELETE", s},
		{"GET", s + "/stream"}, {"GET", "/api/events"}, {"GET", s + "/messages"}, {"POST", s + "/tasks"},
		{"POST", s + "/steer"}, {"POST", s + "/abort"}, {"POST", s + "/retry-now"}, {"POST", s + "/compact"},
		{"POST", s + "/approvals/call_1"}, {"GET", "/api/nothing"},
	}
	before := observe(e, id)
	for _, r := range routes {
		for _, auth := range []string{"", "Bearer wrong", "s3cret", "Basic czNjcmV0"} {
			req, _ := http.NewRequest(r[0], e.url+r[1], strings.NewReader(`{"input":"hi"}`))
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s %s with %q: %d, want 401", r[0], r[1], auth, resp.StatusCode)
			}
		}
	}
	if after := observe(e, id); after != before {
		t.Fatal("unauthorized requests changed the server")
	}
	st := e.open(s+"/stream", "", false) // with the token
	if ev := st.next(); !taskState("idle")(ev) {
		t.Fatalf("authorized stream began with %+v", ev)
	}
}

func TestCORSOrigins(t *testing.T) {
	e := newEnv(t, server.Config{Origins: []string{"http://app.example"}})
	for _, tc := range []struct {
		origin string
		allow  string
	}{{"http://app.example", "http://app.example"}} { // another origin: TestForeignOriginReadsWhy
		req, _ := http.NewRequest("OPTIONS", e.url+"/api/sessions", nil)
		req.Header.Set("Origin", tc.origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != tc.allow || resp.StatusCode != 204 {
			t.Errorf("preflight from %s: %d, Allow-Origin %q, want %q", tc.origin, resp.StatusCode, got, tc.allow)
		}
		if tc.allow != "" && !strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
			t.Errorf("preflight does not allow the Authorization header")
		}
	}
}

// A 404 names what was not found: the session id, the tool call id.
func TestNotFoundNamesTheID(t *testing.T) {
	e := newEnv(t, server.Config{})
	id := e.create("ask")
	long := strings.Repeat("c", 300)
	cases := []struct{ method, path, body, want string }{
		{"GET", "/api/sessions/session-none/stream", ``, `no session "session-none"`},
		{"POST", "/api/sessions/session-none/tasks", `{"input":"hi"}`, `no session "session-none"`},
		{"DELETE", "/api/sessions/bad%20id", ``, `no session "bad id"`},
		{"POST", "/api/sessions/" + id + "/approvals/call_9", `{"decision":"allow"}`, `no approval is pending for tool call "call_9"`},
		{"POST", "/api/sessions/" + id + "/approvals/" + long, `{"decision":"allow"}`, `no approval is pending for tool call "` + long[:64] + `"…`},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path[:min(len(c.path), 60)], func(t *testing.T) {
			_, body := e.do(c.method, c.path, c.body, "Content-Type", "application/json")
			var got struct {
				Error struct{ Code, Message string }
			}
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("answer %s: %v", body, err)
			}
			if got.Error.Message != c.want {
				t.Fatalf("message %q, want %q", got.Error.Message, c.want)
			}
		})
	}
}

// Escaped letters are the letters in every segment, "api" too (RFC 3986
// §6.2.2.2), as they were before the routes read the escaped path: the
// prefix was compared escaped, and /%61pi/sessions was answered "no route
// /api/sessions", naming a route that is. An escaped "/" still joins no
// segments.
func TestEscapedLettersOfTheAPISegment(t *testing.T) {
	e := newEnv(t, server.Config{})
	id := e.create("ask")
	e.must(200, "GET", "/%61pi/sessions", "")
	e.must(200, "GET", "/%61%70%69/sessions/"+id+"/messages", "")
	for _, p := range []string{"/api%2Fsessions", "/%61pi%2Fsessions/" + id, "/apis/sessions", "/%2Fapi/sessions"} {
		if code, body := e.do("GET", p, ""); code != 404 || !strings.Contains(string(body), `"not_found"`) {
			t.Errorf("GET %s: %d %s, want 404 not_found", p, code, body)
		}
	}
}
