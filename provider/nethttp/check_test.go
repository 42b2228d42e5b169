package nethttp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/floehq/floe/provider"
)

// A nil *Transport, given to an adapter as its Transport, sends as New(nil)
// does: each of its requests panicked, was recovered as a failure and
// retried.
func TestNilTransportSends(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	var tr *Transport
	resp, err := tr.RoundTrip(context.Background(), &provider.Request{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); resp.Status != 200 || string(b) != "ok" {
		t.Errorf("%d %q", resp.Status, b)
	}
}
