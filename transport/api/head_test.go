package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/floehq/floe/transport/server"
)

// HEAD is refused on every route, the two streams included: before, a HEAD
// on a stream answered 200 text/event-stream, subscribed and never ended.
// The request's context bounds the wait, so a hang fails instead of
// blocking the test.
func TestHeadIsRefusedEverywhere(t *testing.T) {
	e := newEnv(t, server.Config{})
	id := e.create("ask")
	s := "/api/sessions/" + id
	for _, tc := range []struct{ path, allow string }{
		{s + "/stream", "GET"},
		{"/api/events", "GET"},
		{s + "/messages", "GET"},
		{"/api/sessions", "GET, POST"},
		{s, "GET, PATCH, DELETE"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), safety)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodHead, e.url+tc.path, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("HEAD %s: %v", tc.path, err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != tc.allow {
				t.Errorf("HEAD %s: %d, Allow %q, Content-Type %q; want 405, Allow %q", tc.path, resp.StatusCode, resp.Header.Get("Allow"), resp.Header.Get("Content-Type"), tc.allow)
			}
		})
	}
	if n := e.srv.Hub.Channel(id).Subscribers(); n != 0 {
		t.Errorf("%d subscribers after HEAD requests, want 0", n)
	}
	if t.Failed() { // end streams a HEAD may have opened, so cleanup does not hang
		e.srv.Hub.Remove(id)
		e.srv.Registry.UserChannel().Close()
	}
}
