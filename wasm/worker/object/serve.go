//go:build js && wasm

package main

import (
	"bytes"
	"context"
	"net/http"
	"syscall/js"

	"github.com/floehq/floe/transport/server"
)

// serve runs one request through the server's handler, streaming the
// response into reply.
func serve(srv *server.Server, method, url string, headers, body, reply js.Value) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &writer{reply: reply, hdr: http.Header{}}
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
type writer struct {
	reply  js.Value
	hdr    http.Header
	wrote  bool
	noBody bool
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
	u8 := js.Global().Get("Uint8Array").New(len(b))
	js.CopyBytesToJS(u8, b)
	w.reply.Call("write", u8)
	return len(b), nil
}

// Flush: every Write already went out.
func (w *writer) Flush() {}
