package nethttp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider"
	"github.com/floehq/floe/provider/openai"
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

// A header net/http refuses (a key read with its line break, a name with a
// space), here added by a Transport that wraps this one, ends the request
// failed and permanent at once, naming the header and never its value:
// net/http refused it at every request, and each was retried as a network
// error. The server is never reached.
func TestBadHeaderFailsPermanently(t *testing.T) {
	var reached atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Add(1) }))
	defer srv.Close()
	for _, tc := range []struct{ name, value, says string }{
		{"x-token", "secret\n", `openai: request failed: header "x-token": the value ends in a line break, which a header cannot hold (read from a file with it?)`},
		{"x-token", "sec\x00ret", `openai: request failed: header "x-token": the value holds a line break or another control character, which a header cannot hold`},
		{"X Token", "secret", `openai: request failed: header "X Token": not a header name (letters, digits and !#$%&'*+-.^_` + "`|~ only)"},
	} {
		inner := New(nil)
		tr := provider.TransportFunc(func(ctx context.Context, req *provider.Request) (*provider.Response, error) {
			r := *req
			r.Header = map[string]string{tc.name: tc.value}
			for k, v := range req.Header {
				r.Header[k] = v
			}
			return inner.RoundTrip(ctx, &r)
		})
		m, err := openai.New(openai.Options{Transport: tr, BaseURL: srv.URL + "/v1", Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		out := m.StreamGenerate(context.Background(), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("hi")}}, func(omni.Message) {})
		if out.Status != omni.StatusFailed || !out.Permanent || out.ErrorMessage != tc.says {
			t.Errorf("%q: outcome %+v\nwant failed, permanent, %q", tc.name, out, tc.says)
		}
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the server got %d requests", n)
	}
}
