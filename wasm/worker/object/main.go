//go:build js && wasm

// Command object is the WebAssembly half of the session Durable Object:
// the session server (transport/server) over the object's SQLite storage.
// session_object.mjs, the Durable Object class, instantiates it once per
// isolate and calls it through globalThis.floeObject:
//
//	open(sql, {delayMs, mode, replayEvents}) → handle     one server per object
//	fetch(handle, method, url, headers, body, reply)
//
// where reply is {head(status, headers), write(bytes), end(), onCancel(f)}.
package main

import (
	"syscall/js"
	"time"

	"github.com/floehq/floe/transport/server"
	"github.com/floehq/floe/web/dostore"
)

func main() {
	var servers []*server.Server
	open := js.FuncOf(func(this js.Value, args []js.Value) (out any) {
		defer guard(&out)
		if len(args) < 2 || args[0].Type() != js.TypeObject {
			return jsError("open: want (sql, options)")
		}
		store, err := dostore.New(args[0], time.Now)
		if err != nil {
			return jsError("open: " + err.Error())
		}
		cfg := server.Config{Store: store}
		if o := args[1]; o.Type() == js.TypeObject {
			if d := o.Get("delayMs"); d.Type() == js.TypeNumber {
				cfg.Delay = time.Duration(d.Float() * float64(time.Millisecond))
			}
			if m := o.Get("mode"); m.Type() == js.TypeString {
				cfg.Mode = m.String()
			}
			if n := o.Get("replayEvents"); n.Type() == js.TypeNumber {
				cfg.Channel.MaxEvents = n.Int()
			}
		}
		srv, err := server.New(cfg)
		if err != nil {
			return jsError("open: " + err.Error())
		}
		servers = append(servers, srv)
		return len(servers) - 1
	})
	fetch := js.FuncOf(func(this js.Value, args []js.Value) (out any) {
		defer guard(&out)
		if len(args) < 6 || args[0].Type() != js.TypeNumber || args[0].Int() < 0 || args[0].Int() >= len(servers) {
			return jsError("fetch: want (handle, method, url, headers, body, reply)")
		}
		go serve(servers[args[0].Int()], args[1].String(), args[2].String(), args[3], args[4], args[5])
		return nil
	})
	js.Global().Set("floeObject", map[string]any{"open": open, "fetch": fetch})
	select {}
}

func jsError(msg string) js.Value { return js.Global().Get("Error").New(msg) }

// guard turns a panic in an export into a returned Error.
func guard(out *any) {
	if p := recover(); p != nil {
		*out = jsError("floe object: panic")
	}
}
