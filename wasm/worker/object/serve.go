//go:build js && wasm

package main

import (
	"bytes"
	"context"
	"net/http"
	"syscall/js"
	"time"

	"github.com/floehq/floe/transport/flow"
	"github.com/floehq/floe/transport/server"
)

// serve runs one request through the server's handler, streaming the
// response into reply.
func serve(srv *server.Server, method, url string, headers, body, reply js.Value) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &writer{reply: reply, hdr: http.Header{}}
	w.flow = flow.New(ctx, w.enqueue, nil, nil)
	onDrain := js.FuncOf(func(js.Value, []js.Value) any { w.flow.Drained(); return nil })
	defer onDrain.Release()
	reply.Call("onDrain", onDrain)
	defer func() {
		if p := recover(); p != nil && !w.wrote {
			w.hdr.Set("Content-Type", "application/json")
			w.WriteHeader(500)
			w.Write([]byte(`{"error":{"code":"internal","message":"floe object: panic"}}`))
		}
		if !w.wrote {
			w.WriteHeader(200)
		}
		reply.Call("end")
	}()
	onCancel := js.FuncOf(func(js.Value, []js.Value) any { cancel(); return nil })
	defer onCancel.Release()
	reply.Call("onCancel", onCancel)
	var data []byte
	if body.Type() == js.TypeObject {
		data = make([]byte, body.Length())
		js.CopyBytesToGo(data, body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(data))
	if err != nil {
		w.hdr.Set("Content-Type", "application/json")
		w.WriteHeader(400)
		w.Write([]byte(`{"error":{"code":"bad_request","message":"unreadable request"}}`))
		return
	}
	for i := 0; i < headers.Length(); i++ {
		kv := headers.Index(i)
		req.Header.Add(kv.Index(0).String(), kv.Index(1).String())
	}
	srv.Handler.ServeHTTP(w, req)
}

// writer is an http.ResponseWriter over the JavaScript reply object: the
// head goes out at the first write, each Write is one chunk of the body.
// The body's stream queues what it is handed; once it holds more than its
// mark (session_object.mjs), the next write waits for the client to read,
// up to the write deadline the stream handler sets (flow.Writer).
type writer struct {
	reply  js.Value
	hdr    http.Header
	wrote  bool
	noBody bool
	flow   *flow.Writer
}

func (w *writer) Header() http.Header { return w.hdr }

func (w *writer) WriteHeader(status int) {
	if w.wrote {
		return
	}
	w.wrote = true
	w.noBody = status == 204 || status == 304
	var hs []any
	for k, vs := range w.hdr {
		for _, v := range vs {
			hs = append(hs, []any{k, v})
		}
	}
	w.reply.Call("head", status, hs)
}

func (w *writer) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(200)
	}
	if w.noBody || len(b) == 0 {
		return len(b), nil
	}
	return w.flow.Write(b)
}

// enqueue hands b to the body's stream; false when the stream is over its
// mark.
func (w *writer) enqueue(b []byte) bool {
	u8 := js.Global().Get("Uint8Array").New(len(b))
	js.CopyBytesToJS(u8, b)
	return w.reply.Call("write", u8).Truthy()
}

// FlushError waits, as a write does, while the client is behind: every
// Write already went out (http.ResponseController prefers it to Flush).
func (w *writer) FlushError() error { return w.flow.Flush() }

// Flush is FlushError for http.Flusher.
func (w *writer) Flush() { w.flow.Flush() }

// SetWriteDeadline bounds each wait for the client (http.ResponseController).
func (w *writer) SetWriteDeadline(t time.Time) error { return w.flow.SetWriteDeadline(t) }
