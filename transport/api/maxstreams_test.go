package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/floehq/floe/internal/leakcheck"
	"github.com/floehq/floe/transport"
	"github.com/floehq/floe/transport/server"
)

// A session takes at most Options.MaxSubscribers streams at once, and so
// does the user channel: the next is refused, 429 too_many_streams, with
// the server's error body, until one of them closes. A client could open
// thousands, each with its goroutines and queue.
func TestStreamsOfOneSessionAreBounded(t *testing.T) {
	e := newEnv(t, server.Config{Channel: transport.Options{MaxSubscribers: 2}})
	id := e.create("ask")
	other := e.create("ask")
	for _, c := range []struct{ path, first string }{
		{"/api/sessions/" + id + "/stream", "task_state"},
		{"/api/events", "hello"},
	} {
		a := e.open(c.path, "", false)
		a.until(serverEvent(c.first)) // subscribed
		b := e.open(c.path, "", false)
		b.until(serverEvent(c.first))
		status, body := headOf(t, e.url+c.path)
		var got struct {
			Error struct{ Code, Message string }
		}
		if err := json.Unmarshal(body, &got); status != 429 || err != nil || got.Error.Code != "too_many_streams" || !strings.Contains(got.Error.Message, "as many streams open as the server takes") {
			t.Fatalf("GET %s with 2 streams open: %d %s, want 429 too_many_streams", c.path, status, body)
		}
		a.Close()
		ch := e.srv.Registry.UserChannel()
		if c.first == "task_state" {
			ch = e.srv.Hub.Channel(id)
		}
		leakcheck.Until(t, safety, "the closed stream's subscriber to go", func() bool { return ch.Subscribers() == 1 })
		e.open(c.path, "", false).until(serverEvent(c.first))
	}
	// Another session's streams are counted apart.
	e.open("/api/sessions/"+other+"/stream", "", false).until(serverEvent("task_state"))
}

// headOf GETs url and returns its status, and its body unless it is a
// stream (which would never end): a stream taken is not a refusal.
func headOf(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == 200 {
		return 200, []byte("(a stream)")
	}
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}
