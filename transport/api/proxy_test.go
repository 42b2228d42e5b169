package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/floehq/floe/transport/server"
)

// The streams tell the proxies between the server and a browser not to
// hold their events back: nginx's buffering (X-Accel-Buffering), caches
// (no-cache), and a proxy that compresses what it passes on, which then
// sends a compressed stream in blocks of its own, not event by event
// (no-transform: Express's compression middleware and CDNs leave such a
// response as it is). Before, the streams lacked no-transform.
func TestStreamHeadersForProxies(t *testing.T) {
	e := newEnv(t, server.Config{})
	id := e.create("ask")
	for _, path := range []string{"/api/sessions/" + id + "/stream", "/api/events"} {
		ctx, cancel := context.WithTimeout(context.Background(), safety)
		req, _ := http.NewRequestWithContext(ctx, "GET", e.url+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			cancel()
			t.Fatalf("GET %s: %v", path, err)
		}
		h := resp.Header
		if h.Get("Content-Type") != "text/event-stream" || h.Get("Cache-Control") != "no-cache, no-transform" || h.Get("X-Accel-Buffering") != "no" {
			t.Errorf("GET %s: Content-Type %q, Cache-Control %q, X-Accel-Buffering %q; want text/event-stream, \"no-cache, no-transform\", no",
				path, h.Get("Content-Type"), h.Get("Cache-Control"), h.Get("X-Accel-Buffering"))
		}
		cancel()
		resp.Body.Close()
	}
}
