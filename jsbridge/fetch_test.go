//go:build js && wasm

package jsbridge

import (
	"context"
	"errors"
	"io"
	"strings"
	"syscall/js"
	"testing"
	"time"

	"github.com/floehq/floe/provider"
)

// fakeHTTP is an http host written in JavaScript, shaped like the shim's
// (static/floe.mjs httpHost): send answers [status, headers, hasBody] or
// rejects with fail; each read hands out the next chunk, then null, or
// never answers once chunks run out when hang is set. It records the
// requests, reads and aborts in its log.
func fakeHTTP(b *Bridge, settle js.Value, status int, headers string, chunks []string, fail string, hang bool) (host, log js.Value) {
	c := make([]any, len(chunks))
	for i, s := range chunks {
		c[i] = s
	}
	mk := js.Global().Get("Function").New("settle", "status", "headers", "chunks", "fail", "hang", `
		const log = { sent: [], reads: 0, aborts: 0 };
		const later = (f) => setTimeout(f, 0);
		const host = {
			send(wid, url, method, hdrs, body) {
				log.sent.push({ url, method, hdrs, body });
				if (status >= 0) later(() => fail ? settle(wid, false, fail) : settle(wid, true, [status, headers, chunks.length > 0 || hang]));
				return {
					read(rid) {
						log.reads++;
						if (chunks.length) later(() => settle(rid, true, new TextEncoder().encode(chunks.shift())));
						else if (!hang) later(() => settle(rid, true, null));
					},
					abort() { log.aborts++; },
				};
			},
		};
		return [host, log];`)
	r := mk.Invoke(settle, status, headers, js.ValueOf(c), fail, hang)
	return r.Index(0), r.Index(1)
}

// settleFunc is Bridge.settle as the shim calls it.
func settleFunc(t *testing.T, b *Bridge) js.Value {
	fn := js.FuncOf(func(this js.Value, args []js.Value) any {
		b.settle(args)
		return nil
	})
	t.Cleanup(fn.Release)
	return fn.Value
}

func request() *provider.Request {
	return &provider.Request{
		Method: "POST",
		URL:    "http://127.0.0.1:9/v1/chat/completions",
		Header: map[string]string{"Authorization": "Bearer k"},
		Body:   []byte(`{"model":"m","stream":true}`),
	}
}

func TestFetchChunks(t *testing.T) {
	noPanics(t)
	b := New()
	host, log := fakeHTTP(b, settleFunc(t, b), 200, "content-type\ntext/event-stream\nx-request-id\nr1\n",
		[]string{"data: a\n", "\ndata: é", "\n\n"}, "", false)
	tr := &fetchTransport{b: b, host: host}
	res, err := tr.RoundTrip(context.Background(), request())
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 200 || len(res.Header) != 2 || res.Header["content-type"] != "text/event-stream" || res.Header["x-request-id"] != "r1" {
		t.Fatalf("status %d headers %v", res.Status, res.Header)
	}
	sent := log.Get("sent").Index(0)
	if sent.Get("url").String() != request().URL || sent.Get("method").String() != "POST" ||
		sent.Get("hdrs").String() != "Authorization\nBearer k\n" || sent.Get("body").String() != `{"model":"m","stream":true}` {
		t.Fatalf("sent %s", js.Global().Get("JSON").Call("stringify", sent).String())
	}
	var got []byte
	p := make([]byte, 3) // smaller than a chunk: one chunk serves several Reads
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
	if n := log.Get("reads").Int(); n != 4 { // 3 chunks and the end: one read each
		t.Fatalf("%d reads, want 4", n)
	}
	if n, err := res.Body.Read(p); n != 0 || err != io.EOF {
		t.Fatalf("after EOF: %d, %v", n, err)
	}
	res.Body.Close()
	res.Body.Close()
	if log.Get("aborts").Int() != 0 {
		t.Fatal("a finished body was aborted")
	}
}

func TestFetchNoBodyAndFailures(t *testing.T) {
	noPanics(t)
	b := New()
	host, _ := fakeHTTP(b, settleFunc(t, b), 204, "", nil, "", false)
	res, err := (&fetchTransport{b: b, host: host}).RoundTrip(context.Background(), request())
	if err != nil || res.Status != 204 {
		t.Fatal(res, err)
	}
	if n, err := res.Body.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("%d, %v", n, err)
	}
	host, _ = fakeHTTP(b, settleFunc(t, b), 200, "", nil, "fetch http://x/: TypeError: fetch failed (ECONNREFUSED)", false)
	_, err = (&fetchTransport{b: b, host: host}).RoundTrip(context.Background(), request())
	if !errors.Is(err, errNoResponse) || err.Error() != "fetch http://x/: TypeError: fetch failed (ECONNREFUSED)" {
		t.Fatalf("%v", err)
	}
}

func TestFetchAbort(t *testing.T) {
	noPanics(t)
	b := New()
	// Cancelled while the body waits for a chunk.
	host, log := fakeHTTP(b, settleFunc(t, b), 200, "", []string{"data: a\n\n"}, "", true)
	ctx, cancel := context.WithCancel(context.Background())
	res, err := (&fetchTransport{b: b, host: host}).RoundTrip(ctx, request())
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
	if log.Get("aborts").Int() < 1 {
		t.Fatal("the cancel did not abort the request")
	}
	res.Body.Close()

	// Cancelled while send is pending.
	host, log = fakeHTTP(b, settleFunc(t, b), -1, "", nil, "", false)
	ctx, cancel = context.WithCancel(context.Background())
	later(cancel)
	if _, err := (&fetchTransport{b: b, host: host}).RoundTrip(ctx, request()); !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
	if log.Get("aborts").Int() < 1 {
		t.Fatal("a pending send was not aborted")
	}

	// Closed before the end: the request is aborted, later reads fail.
	host, log = fakeHTTP(b, settleFunc(t, b), 200, "", []string{"data: a\n\n"}, "", true)
	res, err = (&fetchTransport{b: b, host: host}).RoundTrip(context.Background(), request())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	res.Body.Close()
	if log.Get("aborts").Int() != 1 {
		t.Fatalf("Close aborted %d times, want 1", log.Get("aborts").Int())
	}
	if _, err := res.Body.Read(p); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("Read after Close: %v", err)
	}
}
