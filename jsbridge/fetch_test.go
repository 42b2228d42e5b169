//go:build js && wasm

package jsbridge

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"syscall/js"
	"testing"
	"time"

	"github.com/floehq/floe/provider"
)

// jsFunc compiles a JavaScript function from its parameters and body.
func jsFunc(params []string, body string) js.Value {
	args := make([]any, 0, len(params)+1)
	for _, p := range params {
		args = append(args, p)
	}
	return js.Global().Get("Function").New(append(args, body)...)
}

// fakeFetch is a fetch written in JavaScript: it records each call in
// log (url, init, signal) and answers with respond(url, init, log), a
// JavaScript function body returning a Response (or throwing).
func fakeFetch(respond string) (fetch, log js.Value) {
	log = js.Global().Get("Array").New()
	fetch = jsFunc([]string{"log"}, `return async (url, init) => {
		const entry = { url, init, reads: 0 };
		log.push(entry);
		return (`+respond+`)(url, init, entry);
	};`).Invoke(log)
	return fetch, log
}

// chunked is a respond function streaming the given chunks (strings, one
// enqueue per pull), then ending with end: "eof", "error" or "hang".
const chunked = `(chunks, end, status = 200, headers = {}) => (url, init, entry) => new Response(new ReadableStream({
	pull(c) {
		entry.reads++;
		if (chunks.length) return c.enqueue(new TextEncoder().encode(chunks.shift()));
		if (end === "eof") return c.close();
		if (end === "error") return c.error(new TypeError("terminated", { cause: { code: "UND_ERR_SOCKET", message: "other side closed" } }));
		return new Promise(() => {}); // hang
	},
}, { highWaterMark: 0 }), { status, headers })`

func transport(b *Bridge, fetch js.Value, browser bool) *fetchTransport {
	return &fetchTransport{b: b, fetch: fetch, browser: browser}
}

func request() *provider.Request {
	return &provider.Request{
		Method: "POST",
		URL:    "http://127.0.0.1:9/v1/chat/completions",
		Header: map[string]string{"Authorization": "Bearer k", "Content-Type": "application/json"},
		Body:   []byte(`{"model":"m","stream":true}`),
	}
}

func respond(chunks []string, end string, status int, headers map[string]any) string {
	c := make([]any, len(chunks))
	for i, s := range chunks {
		c[i] = s
	}
	js.Global().Set("__floeTestChunks", js.ValueOf(c))
	js.Global().Set("__floeTestHeaders", js.ValueOf(headers))
	return "(" + chunked + `)(globalThis.__floeTestChunks, "` + end + `", ` + strconv.Itoa(status) + `, globalThis.__floeTestHeaders)`
}

func TestFetchRequestAndChunks(t *testing.T) {
	noPanics(t)
	b := New()
	fetch, log := fakeFetch(respond([]string{"data: a\n", "\ndata: é", "\n\n"}, "eof", 200,
		map[string]any{"Content-Type": "text/event-stream", "X-Request-Id": "r1"}))
	res, err := transport(b, fetch, false).RoundTrip(context.Background(), request())
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 200 || res.Header["content-type"] != "text/event-stream" || res.Header["x-request-id"] != "r1" {
		t.Fatalf("status %d headers %v", res.Status, res.Header)
	}
	e := log.Index(0)
	init := e.Get("init")
	if e.Get("url").String() != "http://127.0.0.1:9/v1/chat/completions" || init.Get("method").String() != "POST" ||
		init.Get("redirect").String() != "manual" || init.Get("headers").Get("Authorization").String() != "Bearer k" {
		t.Fatalf("request: %s", js.Global().Get("JSON").Call("stringify", init).String())
	}
	if got := js.Global().Get("TextDecoder").New().Call("decode", init.Get("body")).String(); got != `{"model":"m","stream":true}` {
		t.Fatalf("body %q", got)
	}
	if !init.Get("signal").InstanceOf(js.Global().Get("AbortSignal")) {
		t.Fatal("no AbortSignal")
	}
	var got []byte
	p := make([]byte, 3) // smaller than a chunk: a chunk serves several Reads
	for {
		n, err := res.Body.Read(p)
		got = append(got, p[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if string(got) != "data: a\n\ndata: é\n\n" {
		t.Fatalf("body %q", got)
	}
	if n := e.Get("reads").Int(); n != 4 { // 3 chunks and the end: one read() each
		t.Fatalf("%d reads of the stream, want 4", n)
	}
	if n, err := res.Body.Read(p); n != 0 || err != io.EOF {
		t.Fatalf("after EOF: %d, %v", n, err)
	}
	res.Body.Close()
	res.Body.Close()
	if init.Get("signal").Get("aborted").Bool() {
		t.Fatal("a finished body was aborted")
	}
}

func TestFetchBodyError(t *testing.T) {
	noPanics(t)
	b := New()
	fetch, _ := fakeFetch(respond([]string{"data: {}\n\n"}, "error", 200, nil))
	res, err := transport(b, fetch, false).RoundTrip(context.Background(), request())
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(res.Body)
	if string(got) != "data: {}\n\n" || err == nil || err == io.EOF {
		t.Fatalf("got %q, %v; want the bytes, then an error", got, err)
	}
	if !strings.Contains(err.Error(), "terminated") || !strings.Contains(err.Error(), "UND_ERR_SOCKET other side closed") {
		t.Fatalf("error %q does not say what happened", err)
	}
}

func TestFetchStatusAndNoBody(t *testing.T) {
	noPanics(t)
	b := New()
	fetch, _ := fakeFetch(`() => new Response(null, { status: 204 })`)
	res, err := transport(b, fetch, false).RoundTrip(context.Background(), request())
	if err != nil || res.Status != 204 {
		t.Fatal(res, err)
	}
	if n, err := res.Body.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("%d, %v", n, err)
	}
	fetch, _ = fakeFetch(`() => new Response('{"error":{"message":"bad key"}}', { status: 401, headers: { "retry-after": "7" } })`)
	res, err = transport(b, fetch, false).RoundTrip(context.Background(), request())
	if err != nil || res.Status != 401 || res.Header["retry-after"] != "7" {
		t.Fatal(res, err)
	}
	if got, err := io.ReadAll(res.Body); err != nil || string(got) != `{"error":{"message":"bad key"}}` {
		t.Fatalf("%q, %v", got, err)
	}
	// A browser's manual redirect is an opaque response of status 0.
	fetch, _ = fakeFetch(`() => ({ type: "opaqueredirect", status: 0, headers: new Headers(), body: null })`)
	res, err = transport(b, fetch, false).RoundTrip(context.Background(), request())
	if err != nil || res.Status != 302 {
		t.Fatal(res, err)
	}
}

func TestFetchNetworkFailure(t *testing.T) {
	noPanics(t)
	b := New()
	node := `() => { throw new TypeError("fetch failed", { cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" }) }); }`
	fetch, _ := fakeFetch(node)
	_, err := transport(b, fetch, false).RoundTrip(context.Background(), request())
	if !errors.Is(err, errNoResponse) || err.Error() != "fetch http://127.0.0.1:9/v1/chat/completions: TypeError: fetch failed (ECONNREFUSED connect ECONNREFUSED 127.0.0.1:9)" {
		t.Fatalf("%v", err)
	}
	fetch, _ = fakeFetch(`() => { throw new TypeError("Failed to fetch"); }`)
	_, err = transport(b, fetch, true).RoundTrip(context.Background(), request())
	if !errors.Is(err, errNoResponse) || !strings.Contains(err.Error(), "TypeError: Failed to fetch") || !strings.Contains(err.Error(), "CORS") {
		t.Fatalf("%v", err)
	}
	// A fetch that throws synchronously, or resolves to something else.
	_, err = transport(b, jsFunc(nil, `throw new RangeError("bad init")`), false).RoundTrip(context.Background(), request())
	if !errors.Is(err, errNoResponse) || !strings.Contains(err.Error(), "RangeError: bad init") {
		t.Fatalf("%v", err)
	}
	_, err = transport(b, jsFunc(nil, `return Promise.resolve(42)`), false).RoundTrip(context.Background(), request())
	if err == nil || !strings.Contains(err.Error(), "resolved to number, want a Response") {
		t.Fatalf("%v", err)
	}
	fetch, _ = fakeFetch(`() => new Response(new ReadableStream({ start(c) { c.enqueue("text"); c.close(); } }))`)
	res, err := transport(b, fetch, false).RoundTrip(context.Background(), request())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(res.Body); err == nil || !strings.Contains(err.Error(), "yielded string, want a Uint8Array") {
		t.Fatalf("%v", err)
	}
}

func TestFetchAbort(t *testing.T) {
	noPanics(t)
	b := New()
	// Cancelled while the body waits for a chunk.
	fetch, log := fakeFetch(respond([]string{"data: a\n\n"}, "hang", 200, nil))
	ctx, cancel := context.WithCancel(context.Background())
	res, err := transport(b, fetch, false).RoundTrip(ctx, request())
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 64)
	if n, err := res.Body.Read(p); err != nil || string(p[:n]) != "data: a\n\n" {
		t.Fatalf("%q, %v", p[:n], err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := res.Body.Read(p)
		done <- err
	}()
	later(cancel)
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("read after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a pending read did not return after the cancel")
	}
	res.Body.Close()
	if !log.Index(0).Get("init").Get("signal").Get("aborted").Bool() {
		t.Fatal("the fetch's signal was not aborted")
	}

	// Cancelled while fetch itself is pending.
	hang := jsFunc(nil, `return new Promise(() => {})`)
	ctx, cancel = context.WithCancel(context.Background())
	later(cancel)
	if _, err := transport(b, hang, false).RoundTrip(ctx, request()); !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}

	// Closed before the end: the request is aborted.
	fetch, log = fakeFetch(respond([]string{"data: a\n\n"}, "hang", 200, nil))
	res, err = transport(b, fetch, false).RoundTrip(context.Background(), request())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if !log.Index(0).Get("init").Get("signal").Get("aborted").Bool() {
		t.Fatal("Close did not abort an unfinished body")
	}
	if _, err := res.Body.Read(p); err == nil {
		t.Fatal("Read after Close succeeded")
	}
}
