//go:build js && wasm

// Package fetch is a provider.Transport on the browser's fetch, for the
// playground: each request is one fetch with its own AbortController
// (cancelled with the request's context), no cookies, no referrer, and
// redirects refused — so an API key reaches only the URL it was sent to.
// The response body streams chunk by chunk from its ReadableStream.
package fetch

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"syscall/js"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/internal/errf"
	"github.com/floehq/floe/provider"
	"github.com/floehq/floe/web/jsx"
)

// Transport sends requests with fetch. Hint, when set, turns a fetch that
// got no response (the network, or a server that refuses the page's
// origin) into the message the user sees.
//
// Workers is for Cloudflare Workers, whose fetch has no cookies, cache or
// referrer to leave out and refuses those options, and takes no redirect
// "error": there the redirect is not followed ("manual"), and a 3xx answer
// is handed on without its body, which the adapters end as failed,
// permanent, naming where it pointed.
type Transport struct {
	Hint    func(url string, err error) error
	Workers bool
}

// RoundTrip implements provider.Transport.
func (t Transport) RoundTrip(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ac := js.Global().Get("AbortController").New()
	headers := map[string]any{}
	for k, v := range req.Header {
		why := provider.HeaderProblem(k, v)
		for _, r := range v {
			if r > 0xff && why == "" {
				why = "the value holds a character above U+00FF, which fetch refuses"
			}
		}
		if why != "" {
			// fetch throws a TypeError at every request: not a network
			// error to retry (the value may be a key: never shown).
			return nil, &provider.Failure{Status: omni.StatusFailed, Permanent: true, Message: "header " + errf.Quote(k) + ": " + why}
		}
		headers[k] = v
	}
	method := req.Method
	if method == "" {
		method = "POST"
	}
	init := map[string]any{"method": method, "headers": headers, "signal": ac.Get("signal")}
	if t.Workers {
		init["redirect"] = "manual"
	} else {
		init["redirect"], init["credentials"], init["referrerPolicy"], init["cache"] = "error", "omit", "no-referrer", "no-store"
	}
	if len(req.Body) > 0 {
		init["body"] = string(req.Body)
	}
	p, err := jsx.Invoke(js.Global().Get("fetch"), req.URL, init)
	if err != nil {
		return nil, t.hint(req.URL, err)
	}
	abort := func() { ac.Call("abort") }
	stop := context.AfterFunc(ctx, abort)
	res, err := jsx.Await(ctx, p)
	if err != nil {
		stop()
		abort()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, t.hint(req.URL, err)
	}
	status := res.Get("status").Int()
	out := &provider.Response{Status: status, Header: map[string]string{}}
	it := res.Get("headers").Call("entries")
	for {
		n := it.Call("next")
		if n.Get("done").Bool() {
			break
		}
		kv := n.Get("value")
		out.Header[strings.ToLower(kv.Index(0).String())] = kv.Index(1).String()
	}
	if t.Workers && status >= 300 && status < 400 {
		// Handed on without its body, as nethttp hands it on: the adapter
		// ends the request as a 3xx, failed and permanent, naming where
		// it pointed (provider.StatusFailure), rather than retry a
		// network error.
		stop()
		abort()
		out.Body = io.NopCloser(strings.NewReader(""))
		return out, nil
	}
	b := &body{ctx: ctx, abort: abort, stop: stop}
	if rs := res.Get("body"); rs.Truthy() {
		b.reader = rs.Call("getReader")
	} else {
		b.err = io.EOF
	}
	out.Body = b
	return out, nil
}

func (t Transport) hint(url string, err error) error {
	if t.Hint != nil {
		return t.Hint(url, err)
	}
	return errors.New("fetch " + url + ": " + err.Error())
}

// body reads a ReadableStream one chunk at a time.
type body struct {
	ctx    context.Context
	reader js.Value
	abort  func()
	stop   func() bool

	mu   sync.Mutex
	buf  []byte
	err  error
	shut bool
}

// Read implements io.Reader.
func (b *body) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.buf) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		r, err := jsx.AwaitCall(b.ctx, b.reader, "read")
		switch {
		case err != nil && b.ctx.Err() != nil:
			b.err = b.ctx.Err()
		case err != nil:
			b.err = errors.New("reading the response: " + err.Error())
		case r.Get("done").Bool():
			b.err = io.EOF
			b.stop()
		default:
			v := r.Get("value")
			chunk := make([]byte, v.Get("byteLength").Int())
			js.CopyBytesToGo(chunk, v)
			b.buf = chunk
		}
	}
	n := copy(p, b.buf)
	b.buf = b.buf[n:]
	return n, nil
}

// Close implements io.Closer: it aborts a transfer still in progress.
func (b *body) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.shut {
		b.shut = true
		if b.err != io.EOF {
			b.abort()
		}
		b.stop()
		if b.err == nil {
			b.err = errors.New("response body closed")
		}
	}
	return nil
}
