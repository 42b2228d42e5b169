// Package nethttp is the provider.Transport of native programs, on
// net/http. The WebAssembly build never imports it: the browser's
// Transport is built on fetch.
package nethttp

import (
	"bytes"
	"context"
	"net/http"
	"strings"

	"github.com/floehq/floe/provider"
)

// Transport sends requests with an http.Client.
type Transport struct {
	Client *http.Client // nil = http.DefaultClient
}

// New returns a Transport on client (nil = http.DefaultClient).
func New(client *http.Client) *Transport { return &Transport{Client: client} }

// RoundTrip implements provider.Transport. The request is bound to ctx, so
// cancelling ctx aborts a pending RoundTrip and any later Body.Read.
func (t *Transport) RoundTrip(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	method := req.Method
	if method == "" {
		method = http.MethodPost
	}
	hreq, err := http.NewRequestWithContext(ctx, method, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		return nil, err
	}
	for k, v := range req.Header {
		hreq.Header.Set(k, v)
	}
	c := t.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(hreq)
	if err != nil {
		return nil, err
	}
	h := make(map[string]string, len(resp.Header))
	for k, vs := range resp.Header {
		h[strings.ToLower(k)] = strings.Join(vs, ", ")
	}
	return &provider.Response{Status: resp.StatusCode, Header: h, Body: resp.Body}, nil
}
