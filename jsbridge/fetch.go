//go:build js && wasm

package jsbridge

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"syscall/js"

	"github.com/floehq/floe/provider"
)

// fetchTransport is the provider seam (provider.Transport) on JavaScript's
// fetch. Its JavaScript half is the shim's http host (static/floe.mjs,
// httpHost), which owns the fetch call, its AbortController and the
// response body's ReadableStream reader:
//
//	send(waiterID, url, method, headers "name\nvalue\n…", body string) → conn
//	    settles the waiter with [status, headers "name\nvalue\n…", hasBody],
//	    or rejects it with the message of a fetch that gave no response
//	conn.read(waiterID)   settles with the next chunk (a Uint8Array), null at
//	                      the end, or rejects with the transfer's failure
//	conn.abort(reason)    aborts the request (the connection closes); reason,
//	                      when not undefined, is the run's signal's (abortReason)
//
// Each network chunk crosses into Go once, as bytes (js.CopyBytesToGo);
// the model's stream is parsed in Go and never crosses message by message.
// ctx cancels through conn.abort. The shim does not follow redirects, so
// a key reaches only the configured endpoint.
type fetchTransport struct {
	b    *Bridge
	host js.Value // the shim's http host
}

// errNoResponse marks a fetch that settled without a response (a refused
// connection, DNS, TLS, a CORS refusal).
var errNoResponse = errors.New("no response")

// netError is a failure before any response; it wraps errNoResponse.
type netError struct{ msg string }

func (e *netError) Error() string { return e.msg }
func (e *netError) Unwrap() error { return errNoResponse }

// wait waits for the reply of waiter id, or for ctx.
func (t *fetchTransport) wait(ctx context.Context, id int, ch chan reply) (reply, error) {
	defer t.b.waiters.remove(id)
	select {
	case r := <-ch:
		return r, nil
	case <-ctx.Done():
		return reply{}, ctx.Err()
	}
}

// RoundTrip implements provider.Transport.
func (t *fetchTransport) RoundTrip(ctx context.Context, req *provider.Request) (res *provider.Response, err error) {
	defer guard("fetch", func(e error) { res, err = nil, e })
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var h strings.Builder
	for k, v := range req.Header {
		h.WriteString(k + "\n" + v + "\n")
	}
	method := req.Method
	if method == "" {
		method = "POST"
	}
	id, ch := t.b.waiters.add()
	conn := t.host.Call("send", id, req.URL, method, h.String(), string(req.Body))
	stop := context.AfterFunc(ctx, func() {
		defer guard("fetch: abort", nil)
		abortWith(ctx, conn)
	})
	r, err := t.wait(ctx, id, ch)
	if err == nil && r.end == endThrew {
		err = &netError{msg: endMessage(r)}
	}
	if err != nil {
		stop()
		if ctx.Err() != nil {
			abortWith(ctx, conn) // before returning (AfterFunc may not have run yet)
		}
		return nil, err
	}
	v := r.value
	res = &provider.Response{Status: v.Index(0).Int(), Header: map[string]string{}}
	lines := splitLines(v.Index(1).String())
	for i := 0; i+1 < len(lines); i += 2 {
		res.Header[lines[i]] = lines[i+1]
	}
	body := &fetchBody{t: t, ctx: ctx, conn: conn, stop: stop}
	if !v.Index(2).Truthy() {
		body.err = io.EOF // no body (null), e.g. 204
		body.eof.Store(true)
		stop()
	}
	res.Body = body
	return res, nil
}

// fetchBody is a response body read chunk by chunk through conn.read.
type fetchBody struct {
	t     *fetchTransport
	ctx   context.Context
	conn  js.Value
	stop  func() bool
	buf   []byte // the unread rest of the last chunk
	store []byte // buf's backing array, reused across chunks
	err   error  // sticky: io.EOF or the failure
	eof   atomic.Bool
	shut  atomic.Bool // Close was called
}

// Read implements io.Reader: one conn.read per chunk, copied once.
func (r *fetchBody) Read(p []byte) (n int, err error) {
	defer guard("fetch: body", func(e error) { n, err = 0, e })
	for len(r.buf) == 0 {
		if r.shut.Load() {
			return 0, errors.New("reading the response: the body is closed")
		}
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

// next reads one chunk into buf: nil, or the error that ends the body.
func (r *fetchBody) next() error {
	id, ch := r.t.b.waiters.add()
	r.conn.Call("read", id)
	rep, err := r.t.wait(r.ctx, id, ch)
	switch {
	case err != nil:
		abortWith(r.ctx, r.conn) // ctx is done: AfterFunc aborts too, maybe later
		return err
	case rep.end == endThrew:
		if err := r.ctx.Err(); err != nil {
			return err
		}
		return errors.New(endMessage(rep))
	case absent(rep.value):
		r.eof.Store(true)
		r.stop()
		return io.EOF
	}
	size := rep.value.Length()
	if cap(r.store) < size {
		r.store = make([]byte, size)
	}
	r.buf = r.store[:js.CopyBytesToGo(r.store[:size], rep.value)]
	return nil
}

// Close implements io.Closer: an unfinished body is aborted, which closes
// the connection. Safe at any time, more than once.
func (r *fetchBody) Close() error {
	defer guard("fetch: close", nil)
	r.stop()
	if !r.shut.Swap(true) && !r.eof.Load() {
		r.conn.Call("abort")
	}
	return nil
}
