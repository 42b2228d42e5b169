// Package nethttp is the provider.Transport of native programs, on
// net/http. The WebAssembly build never imports it: the browser's
// Transport is built on fetch.
package nethttp

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider"
)

// Transport sends requests with an http.Client. It never follows a
// redirect unless the client says how (its CheckRedirect): a redirected
// request would carry the key headers (x-api-key, api-key…) and the
// conversation to wherever the answer points, and net/http strips only
// Authorization on the way. The 3xx comes back as the response, which the
// adapters end as failed, permanent (provider: as fetch's redirect: "manual"
// does in the browser).
type Transport struct {
	Client *http.Client // nil = http.DefaultClient's settings, redirects not followed
}

// New returns a Transport on client (nil = http.DefaultClient's settings).
// A nil *Transport sends as New(nil) does.
func New(client *http.Client) *Transport { return &Transport{Client: client} }

// noRedirects is the client of a Transport given none.
var noRedirects = &http.Client{CheckRedirect: stopAtRedirect}

func stopAtRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

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
		if why := provider.HeaderProblem(k, v); why != "" {
			// net/http refuses it at every request: not a network
			// error to retry (the value may be a key: never shown).
			return nil, &provider.Failure{Status: omni.StatusFailed, Permanent: true, Message: "header " + strconv.Quote(k) + ": " + why}
		}
		hreq.Header.Set(k, v)
	}
	var c *http.Client
	if t != nil { // a nil *Transport is New(nil): its requests panicked, each recovered as a failure and retried
		c = t.Client
	}
	switch {
	case c == nil:
		c = noRedirects
	case c.CheckRedirect == nil:
		cc := *c // the caller's settings, but no redirect followed
		cc.CheckRedirect = stopAtRedirect
		c = &cc
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
