//go:build js && wasm

package jsbridge

import (
	"context"
	"errors"
	"io"
	"sync"
	"syscall/js"

	"github.com/floehq/floe/provider"
)

// fetchTransport is the provider seam (provider.Transport) on a JavaScript
// fetch function: globalThis.fetch or the one a model's options inject.
//
// The request goes out as one fetch call with an AbortController tied to
// ctx; the response body is read through its ReadableStream reader, and
// each network chunk crosses into Go once, as bytes (js.CopyBytesToGo).
// Redirects are not followed (redirect: "manual"), so the headers that
// carry a key reach only the configured endpoint.
type fetchTransport struct {
	b       *Bridge
	fetch   js.Value // the fetch function
	browser bool     // a network failure may be a CORS refusal
}

// errNoResponse marks a fetch that settled without a response (a rejected
// Promise: a refused connection, DNS, CORS, TLS).
var errNoResponse = errors.New("no response")

// RoundTrip implements provider.Transport.
func (t *fetchTransport) RoundTrip(ctx context.Context, req *provider.Request) (res *provider.Response, err error) {
	defer guard("fetch", func(e error) { res, err = nil, e })
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ac := js.Global().Get("AbortController").New()
	stop := context.AfterFunc(ctx, func() {
		defer guard("fetch: abort", nil)
		ac.Call("abort")
	})
	fail := func(err error) (*provider.Response, error) {
		stop()
		ac.Call("abort")
		return nil, err
	}
	init := js.Global().Get("Object").New()
	init.Set("method", req.Method)
	h := js.Global().Get("Object").New()
	for k, v := range req.Header {
		h.Set(k, v)
	}
	init.Set("headers", h)
	if len(req.Body) > 0 {
		body := js.Global().Get("Uint8Array").New(len(req.Body))
		js.CopyBytesToJS(body, req.Body)
		init.Set("body", body)
	}
	init.Set("signal", ac.Get("signal"))
	init.Set("redirect", "manual")

	var p js.Value
	if threw := catchJS(func() { p = t.fetch.Invoke(req.URL, init) }); threw != nil {
		return fail(t.networkError(req, *threw))
	}
	v, rejected, err := t.b.awaitValue(ctx, p)
	if err != nil {
		return fail(err)
	}
	if rejected {
		if ctx.Err() != nil {
			return fail(ctx.Err())
		}
		return fail(t.networkError(req, v))
	}
	if v.Type() != js.TypeObject || v.Get("status").Type() != js.TypeNumber {
		return fail(errors.New("fetch " + req.URL + ": the fetch function resolved to " + typeName(v) + ", want a Response"))
	}
	res = &provider.Response{Status: v.Get("status").Int(), Header: responseHeaders(v.Get("headers"))}
	if v.Get("type").Type() == js.TypeString && v.Get("type").String() == "opaqueredirect" {
		// A browser hides where a manual redirect leads: status 0.
		res.Status = 302
	}
	body := &fetchBody{t: t, ctx: ctx, ac: ac, stop: stop}
	if b := v.Get("body"); b.Type() == js.TypeObject && b.Get("getReader").Type() == js.TypeFunction {
		body.reader = b.Call("getReader")
	} else {
		body.err = io.EOF // no body (null), e.g. 204
	}
	res.Body = body
	return res, nil
}

// networkError is the error of a fetch that gave no response: what the
// runtime said (with the cause Node gives) and, in a browser, the likely
// causes, which the browser does not tell the page apart.
func (t *fetchTransport) networkError(req *provider.Request, e js.Value) error {
	msg := "fetch " + req.URL + ": " + jsErrorText(e)
	if t.browser {
		msg += " (no response reached the page: the server is unreachable, or it refused this origin — a cross-origin endpoint must allow it with CORS headers; see the browser console)"
	}
	return &netError{msg: msg}
}

// netError is a failure before any response; it wraps errNoResponse.
type netError struct{ msg string }

func (e *netError) Error() string { return e.msg }
func (e *netError) Unwrap() error { return errNoResponse }

// jsErrorText renders a thrown or rejected JavaScript value: "Name:
// message", then the cause's code and message when there is one (Node's
// fetch puts ECONNREFUSED and the like there).
func jsErrorText(e js.Value) string {
	if e.Type() != js.TypeObject {
		if e.Type() == js.TypeString {
			return e.String()
		}
		return "rejected with " + typeName(e)
	}
	s := ""
	if n := e.Get("name"); n.Type() == js.TypeString {
		s = n.String() + ": "
	}
	if m := e.Get("message"); m.Type() == js.TypeString {
		s += m.String()
	}
	if c := e.Get("cause"); c.Type() == js.TypeObject {
		cs := ""
		if code := c.Get("code"); code.Type() == js.TypeString {
			cs = code.String()
		}
		if m := c.Get("message"); m.Type() == js.TypeString && m.String() != cs {
			if cs != "" {
				cs += " "
			}
			cs += m.String()
		}
		if cs != "" {
			s += " (" + cs + ")"
		}
	}
	return s
}

// responseHeaders reads a Headers object: lower-case names, repeated
// headers already joined by ", " (the Fetch standard). A cross-origin
// response shows only what its CORS headers expose.
func responseHeaders(h js.Value) map[string]string {
	out := map[string]string{}
	if h.Type() != js.TypeObject {
		return out
	}
	pairs := js.Global().Get("Array").Call("from", h)
	for i, n := 0, pairs.Length(); i < n; i++ {
		p := pairs.Index(i)
		out[p.Index(0).String()] = p.Index(1).String()
	}
	return out
}

// fetchBody is a response body read through its stream reader.
type fetchBody struct {
	t      *fetchTransport
	ctx    context.Context
	ac     js.Value // the request's AbortController
	stop   func() bool
	reader js.Value
	buf    []byte // the unread rest of the last chunk
	store  []byte // buf's backing array, reused across chunks
	err    error  // sticky: io.EOF or the failure
	once   sync.Once
}

// Read implements io.Reader: each reader.read() is one chunk, copied once.
func (r *fetchBody) Read(p []byte) (n int, err error) {
	defer guard("fetch: body", func(e error) { n, err = 0, e })
	for len(r.buf) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if err := r.ctx.Err(); err != nil {
			return 0, err
		}
		r.err = r.next()
	}
	n = copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// next reads one chunk into buf; nil, or the error that ends the body.
func (r *fetchBody) next() error {
	var p js.Value
	if threw := catchJS(func() { p = r.reader.Call("read") }); threw != nil {
		return errors.New("reading the response: " + jsErrorText(*threw))
	}
	v, rejected, err := r.t.b.awaitValue(r.ctx, p)
	switch {
	case err != nil:
		return err
	case rejected:
		if err := r.ctx.Err(); err != nil {
			return err
		}
		return errors.New("reading the response: " + jsErrorText(v))
	case v.Type() != js.TypeObject:
		return errors.New("reading the response: read() resolved to " + typeName(v))
	case v.Get("done").Truthy():
		r.release()
		return io.EOF
	}
	c := v.Get("value")
	if c.Type() != js.TypeObject || !c.InstanceOf(uint8Array()) {
		return errors.New("reading the response: the body yielded " + typeName(c) + ", want a Uint8Array")
	}
	size := c.Length()
	if cap(r.store) < size {
		r.store = make([]byte, size)
	}
	r.buf = r.store[:js.CopyBytesToGo(r.store[:size], c)]
	return nil
}

// release forgets the abort hook once the body is over.
func (r *fetchBody) release() { r.once.Do(func() { r.stop() }) }

// Close implements io.Closer: an unfinished body is aborted, which closes
// the connection. Safe at any time, more than once.
func (r *fetchBody) Close() error {
	defer guard("fetch: close", nil)
	done := r.err == io.EOF
	r.release()
	if r.err == nil {
		r.err = errors.New("reading the response: the body is closed")
	}
	if !done {
		r.ac.Call("abort")
	}
	return nil
}

var uint8ArrayOnce = sync.OnceValue(func() js.Value { return js.Global().Get("Uint8Array") })

func uint8Array() js.Value { return uint8ArrayOnce() }

// catchJS runs f, which calls into JavaScript; a JavaScript exception it
// throws is returned (syscall/js panics with a js.Error).
func catchJS(f func()) (threw *js.Value) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(js.Error); ok {
				threw = &e.Value
				return
			}
			panic(r)
		}
	}()
	f()
	return nil
}

// awaitValue waits for the Promise (or plain value) p: its value, whether
// it rejected (then v is the reason), or ctx's error when ctx ends first.
// The callbacks are the Bridge's two permanent functions, bound to a
// waiter id: no js.Func is made per call.
func (b *Bridge) awaitValue(ctx context.Context, p js.Value) (v js.Value, rejected bool, err error) {
	if p.Type() != js.TypeObject || p.Get("then").Type() != js.TypeFunction {
		return p, false, nil
	}
	ok, no := b.promiseCallbacks()
	id, ch := b.waiters.add()
	defer b.waiters.remove(id)
	p.Call("then", ok.Call("bind", nil, id), no.Call("bind", nil, id))
	select {
	case r := <-ch:
		return r.value, r.end == endThrew, nil
	case <-ctx.Done():
		return js.Undefined(), false, ctx.Err()
	}
}

// promiseCallbacks returns the two functions awaitValue hands to then():
// (id, value) → the waiter id gets the value, or the rejection reason.
func (b *Bridge) promiseCallbacks() (ok, no js.Value) {
	b.then.once.Do(func() {
		mk := func(end int) js.Func {
			return js.FuncOf(func(this js.Value, args []js.Value) any {
				defer guard("Promise callback", nil)
				if id := arg(args, 0); id.Type() == js.TypeNumber {
					b.waiters.send(id.Int(), reply{end: end, value: arg(args, 1)})
				}
				return nil
			})
		}
		f, r := mk(endDone), mk(endThrew)
		b.funcs = append(b.funcs, f, r)
		b.then.ok, b.then.no = f.Value, r.Value
	})
	return b.then.ok, b.then.no
}

// thenFuncs are the Bridge's permanent Promise callbacks, made on first use.
type thenFuncs struct {
	once   sync.Once
	ok, no js.Value
}
