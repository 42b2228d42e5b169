//go:build js && wasm

// Command object is the WebAssembly half of the session Durable Object:
// the session server (transport/server) over the object's SQLite storage.
// session_object.mjs, the Durable Object class, instantiates it once per
// isolate and calls it through globalThis.floeObject:
//
//	open(sql, {delayMs, mode, replayEvents, writeTimeoutMs, maxStreams, pingMs}, env, key) → handle or Error   one server per object
//	live(handle) → whether the server is still kept (open releases idle ones: keepIdle)
//	release(handle) → true when the server is let go (or was), false while it answers a request or runs
//	count() → how many servers are kept
//	check({delayMs, …}, env) → null or Error   open's checks of the configuration, no server (/readyz)
//	fetch(handle, method, url, headers, body, reply)
//
// where key is the object's id (a server opened before under it, of an
// instance that is gone, is released); pingMs is the streams' heartbeat in milliseconds (absent: every
// 20 s, T-11), which no variable sets: a test's subclass of the object
// does, since the object's clock cannot be set; env(name) reads the
// Worker's variable or secret of that name ("" when unset); and reply is
// {head(status, headers), write(bytes) → room, end(), onCancel(f),
// onDrain(f)}: write reports whether the body's queue is under its mark,
// and f given to onDrain runs when the client has read it back under
// (serve.go waits for that before its next write). The model is the
// scripted one unless FLOE_MODEL names a provider (modelSettings).
package main

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"syscall/js"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/transport/host"
	"github.com/floehq/floe/transport/server"
	"github.com/floehq/floe/web/dostore"
	"github.com/floehq/floe/web/fetch"
)

// keepIdle is how many servers an isolate keeps, besides the one open
// makes, that answer no request and run nothing: past it, open releases
// those used the longest ago.
// Nothing says when an object is evicted while its isolate lives on, so
// its server would otherwise stay for the isolate's life; a live object
// whose server was released opens a new one at its next request, as after
// an eviction (its session resumed from its Trace, a new channel epoch).
const keepIdle = 8

// object is one object's server in this isolate.
type object struct {
	srv      *server.Server
	key      string // the object's id
	inFlight int    // requests being answered, the streams included
	used     uint64 // the last open or fetch of it, in calls
}

func main() {
	servers := map[int]*object{}
	next, calls := 0, uint64(0)
	// release drops a server: its channels closed, its sessions' runs
	// aborted (there are none when it is idle).
	release := func(h int) {
		o := servers[h]
		delete(servers, h)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			o.srv.Shutdown(ctx)
		}()
	}
	idle := func(o *object) bool {
		return o.inFlight == 0 && o.srv.Registry.Counts().Running == 0
	}
	open := js.FuncOf(func(this js.Value, args []js.Value) (out any) {
		defer guard(&out)
		if len(args) < 3 || args[0].Type() != js.TypeObject || args[2].Type() != js.TypeFunction {
			return jsError("open: want (sql, options, env, key)")
		}
		key := ""
		if len(args) > 3 && args[3].Type() == js.TypeString {
			key = args[3].String()
		}
		cfg, err := configure(args[1], args[2])
		if err != nil {
			return jsError(err.Error())
		}
		store, err := dostore.New(args[0], time.Now)
		if err != nil {
			return jsError("open: " + err.Error())
		}
		cfg.Store = store
		srv, err := server.New(cfg)
		if err != nil {
			return jsError("open: " + err.Error())
		}
		// An object has one live instance: a server of its id opened
		// before belongs to one that is gone (evicted, reset).
		var byAge []int
		for h, o := range servers {
			if key != "" && o.key == key {
				release(h)
			} else if idle(o) {
				byAge = append(byAge, h)
			}
		}
		sort.Slice(byAge, func(i, j int) bool { return servers[byAge[i]].used < servers[byAge[j]].used })
		for i := 0; i < len(byAge) && len(byAge)-i > keepIdle; i++ {
			release(byAge[i])
		}
		calls++
		next++
		servers[next] = &object{srv: srv, key: key, used: calls}
		return next
	})
	// live says whether a handle's server is still kept (open released
	// it, or not).
	live := js.FuncOf(func(this js.Value, args []js.Value) (out any) {
		defer guard(&out)
		if len(args) < 1 || args[0].Type() != js.TypeNumber {
			return false
		}
		_, ok := servers[args[0].Int()]
		return ok
	})
	// release lets a handle's server go if it is idle (the object's idle
	// timer): true when it went, or was gone; false while it answers a
	// request or runs.
	releaseIdle := js.FuncOf(func(this js.Value, args []js.Value) (out any) {
		defer guard(&out)
		if len(args) < 1 || args[0].Type() != js.TypeNumber {
			return jsError("release: want (handle)")
		}
		h := args[0].Int()
		o, ok := servers[h]
		if !ok {
			return true
		}
		if !idle(o) {
			return false
		}
		release(h)
		return true
	})
	// count is how many servers this isolate keeps (for tests).
	count := js.FuncOf(func(js.Value, []js.Value) any { return len(servers) })
	// check is open's checks of the configuration without a server: the
	// Worker's /readyz.
	check := js.FuncOf(func(this js.Value, args []js.Value) (out any) {
		defer guard(&out)
		if len(args) < 2 || args[1].Type() != js.TypeFunction {
			return jsError("check: want (options, env)")
		}
		if _, err := configure(args[0], args[1]); err != nil {
			return jsError(err.Error())
		}
		return nil
	})
	fetchFn := js.FuncOf(func(this js.Value, args []js.Value) (out any) {
		defer guard(&out)
		var o *object
		if len(args) >= 6 && args[0].Type() == js.TypeNumber {
			o = servers[args[0].Int()]
		}
		if o == nil {
			return jsError("fetch: want (handle, method, url, headers, body, reply), the handle of a server open keeps")
		}
		calls++
		o.used = calls
		o.inFlight++
		go func() {
			defer func() { o.inFlight-- }()
			serve(o.srv, args[1].String(), args[2].String(), args[3], args[4], args[5])
		}()
		return nil
	})
	js.Global().Set("floeObject", map[string]any{"open": open, "live": live, "release": releaseIdle, "count": count, "check": check, "fetch": fetchFn})
	select {}
}

// configure is a server's configuration from open's options and env, the
// Worker's variables: an error names the variable that is wrong.
func configure(o, env js.Value) (server.Config, error) {
	mc, err := server.ParseModel(modelSettings(func(name string) string {
		if v := env.Invoke(name); v.Type() == js.TypeString {
			return v.String()
		}
		return ""
	}))
	if err != nil {
		return server.Config{}, err
	}
	cfg := server.Config{OnDiagnostic: warn}
	if o.Type() == js.TypeObject {
		if d := o.Get("delayMs"); d.Type() == js.TypeNumber {
			cfg.Delay = time.Duration(d.Float() * float64(time.Millisecond))
		}
		if m := o.Get("mode"); m.Type() == js.TypeString {
			cfg.Mode = m.String()
			if !host.ValidMode(cfg.Mode) {
				return cfg, errors.New("FLOE_MODE=" + strconv.Quote(cfg.Mode) + ": want ask, allow-all, deny-all or read-only")
			}
		}
		if n := o.Get("replayEvents"); n.Type() == js.TypeNumber {
			cfg.Channel.MaxEvents = n.Int()
		}
		if d := o.Get("writeTimeoutMs"); d.Type() == js.TypeNumber {
			cfg.WriteTimeout = time.Duration(d.Float() * float64(time.Millisecond))
		}
		if d := o.Get("pingMs"); d.Type() == js.TypeNumber {
			cfg.Channel.PingInterval = time.Duration(d.Float() * float64(time.Millisecond))
		}
		// FLOE_MAX_STREAMS, as floe-server's --max-streams: 0 is no
		// bound (transport.Options: < 0), absent the default.
		if n := o.Get("maxStreams"); n.Type() == js.TypeNumber {
			cfg.Channel.MaxSubscribers = n.Int()
			if cfg.Channel.MaxSubscribers == 0 {
				cfg.Channel.MaxSubscribers = -1
			}
		}
	}
	if err := mc.Apply(&cfg, fetch.Transport{Workers: true}); err != nil {
		return cfg, errors.New("FLOE_MODEL=" + mc.Kind + ": " + err.Error())
	}
	return cfg, nil
}

// modelSettings are the Worker's model variables: FLOE_MODEL (scripted,
// the default, or a provider: server.ModelNames), FLOE_MODEL_ID,
// FLOE_BASE_URL, FLOE_API_KEY_ENV (the secret holding the key when it is
// not the provider's own OPENAI_API_KEY or ANTHROPIC_API_KEY),
// FLOE_SYSTEM_PROMPT, FLOE_CONTEXT_WINDOW, FLOE_IDLE_TIMEOUT_MS,
// FLOE_GEMINI, FLOE_MAX_IMAGE_BYTES, FLOE_MAX_IMAGES, FLOE_NO_IMAGES and
// FLOE_STARTS_IN_THINKING, as the native server's flags of the same names.
func modelSettings(env func(string) string) server.ModelSettings {
	v := func(name string) server.Setting {
		x := env(name)
		return server.Setting{Name: name, Value: x, Set: x != ""}
	}
	return server.ModelSettings{
		Model:            v("FLOE_MODEL"),
		ModelID:          v("FLOE_MODEL_ID"),
		BaseURL:          v("FLOE_BASE_URL"),
		APIKeyEnv:        v("FLOE_API_KEY_ENV"),
		System:           v("FLOE_SYSTEM_PROMPT"),
		ContextWindow:    v("FLOE_CONTEXT_WINDOW"),
		IdleTimeout:      v("FLOE_IDLE_TIMEOUT_MS"),
		Gemini:           v("FLOE_GEMINI"),
		MaxImageBytes:    v("FLOE_MAX_IMAGE_BYTES"),
		MaxImages:        v("FLOE_MAX_IMAGES"),
		NoImages:         v("FLOE_NO_IMAGES"),
		StartsInThinking: v("FLOE_STARTS_IN_THINKING"),
		Assign:           func(name, value string) string { return name + "=" + value },
		Getenv:           env,
		KeySource:        "the secret",
	}
}

// warn hands a session's diagnostic (a Trace write the storage refused,
// say) to console.warn, for the Worker's logs: the run goes on without it.
func warn(d engine.Diagnostic) {
	msg := "floe: " + string(d.Kind)
	if d.Err != nil {
		msg += ": " + d.Err.Error()
	}
	js.Global().Get("console").Call("warn", msg)
}

func jsError(msg string) js.Value { return js.Global().Get("Error").New(msg) }

// guard turns a panic in an export into a returned Error.
func guard(out *any) {
	if p := recover(); p != nil {
		*out = jsError("floe object: panic")
	}
}
