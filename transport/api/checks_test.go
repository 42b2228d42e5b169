package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/floehq/floe/transport/host"
	"github.com/floehq/floe/transport/server"
)

func errorOf(body []byte) (code, msg string) {
	var eb struct {
		Error struct{ Code, Message string }
	}
	json.Unmarshal(body, &eb)
	return eb.Error.Code, eb.Error.Message
}

// A client-chosen session id with whitespace or a control character is
// refused with the rule; before, " " and "x y" became sessions (and Trace
// file names). Ids in the reference format still work.
func TestSessionIDRule(t *testing.T) {
	e := newEnv(t, server.Config{})
	_, before := e.do("GET", "/api/sessions", "")
	for _, id := range []string{" ", "x y", " x", "x\ty", "x\u0085y", "x\u00a0y", "x\u2028y", "x\x00y", "a/b", ".x"} {
		body, _ := json.Marshal(map[string]string{"id": id})
		status, resp := e.do("POST", "/api/sessions", string(body))
		code, msg := errorOf(resp)
		if status != 400 || code != "bad_request" || !strings.HasPrefix(msg, "id: ") || !strings.HasSuffix(msg, host.IDRule) {
			t.Errorf("id %q: %d %s", id, status, resp)
		}
	}
	if _, after := e.do("GET", "/api/sessions", ""); string(after) != string(before) {
		t.Fatalf("refused ids changed the list:\n%s\n%s", before, after)
	}
	e.must(201, "POST", "/api/sessions", `{"id":"session-2026-01-02-03-04-05-abcdef12"}`)
	e.must(200, "GET", "/api/sessions/session-2026-01-02-03-04-05-abcdef12", "")
}

// An image is a web URL or a data: URL (PROTOCOL.md §3, image_url), in a
// steer's images and in a task's input; anything else is refused before
// the session is looked at. Before, any string was accepted.
func TestImageReferences(t *testing.T) {
	e := newEnv(t, server.Config{})
	id := e.create("ask")
	s := "/api/sessions/" + id
	for _, bad := range []string{"not a url", "ftp://x/y.png", "javascript:alert(1)", "https://", "/y.png", "x/y.png", "data:image/png;base64", "https://x/a b.png"} {
		body, _ := json.Marshal(map[string]any{"text": "look", "images": []string{"https://x/ok.png", bad}})
		status, resp := e.do("POST", s+"/steer", string(body))
		code, msg := errorOf(resp)
		if status != 400 || code != "bad_request" || !strings.HasPrefix(msg, "images[1]: ") {
			t.Errorf("steer image %q: %d %s", bad, status, resp)
		}
		input, _ := json.Marshal(map[string]any{"input": []any{
			map[string]any{"type": "model_msg", "payload": map[string]any{"type": "image_url", "role": "user", "image_url": bad}},
		}})
		status, resp = e.do("POST", s+"/tasks", string(input))
		code, msg = errorOf(resp)
		if status != 400 || code != "bad_request" || !strings.HasPrefix(msg, "input[0].payload.image_url: ") {
			t.Errorf("input image %q: %d %s", bad, status, resp)
		}
	}
	_, msg := errorOf(e.must(400, "POST", s+"/steer", `{"images":["not a url"]}`))
	if want := `images[0]: "not a url" is not a web URL (http or https) or a data: URL`; msg != want {
		t.Errorf("message %q, want %q", msg, want)
	}
	for _, good := range []string{"https://x/y.png", "HTTP://X/Y.PNG?s=1", "data:image/png;base64,AAAA", "DATA:,x"} {
		body, _ := json.Marshal(map[string]any{"images": []string{good}})
		e.must(409, "POST", s+"/steer", string(body)) // accepted, and no run to steer
	}
}
