//go:build js && wasm

// Command playground is the demo page: the real engine with a scripted
// model (or a real provider, chosen in its settings), a workspace in the
// Origin Private File System, a JavaScript sandbox in a Worker and sessions
// stored in IndexedDB, rendered by package web/ui. Build it with
// scripts/build.sh; serve it with ./build.sh serve.
package main

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"syscall/js"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/playground"
	"github.com/floehq/floe/web/idb"
	"github.com/floehq/floe/web/jseval"
	"github.com/floehq/floe/web/opfs"
	"github.com/floehq/floe/web/ui"
)

func main() {
	doc := js.Global().Get("document")
	if !doc.Truthy() {
		println("playground: needs a page with a document")
		return
	}
	console := js.Global().Get("console")
	q, _ := url.ParseQuery(strings.TrimPrefix(js.Global().Get("location").Get("search").String(), "?"))
	ctx := context.Background()
	env := ui.Env{
		Store: idb.New("floe-playground"),
		Eval:  jseval.New(js.Global().Get("URL").New("eval-frame.html", doc.Get("baseURI")).Get("href").String()),
		Pace:  playground.RealTime,
		Plain: q.Get("render") == "plain",
		Diag: func(d engine.Diagnostic) {
			console.Call("warn", "floe diagnostic ("+string(d.Kind)+"): "+d.Err.Error())
		},
	}
	// ?pace=0.25 scales the scripted model's delays (tests); 0 streams at once.
	if s := q.Get("pace"); s != "" {
		if f, err := strconv.ParseFloat(s, 64); err == nil && f >= 0 {
			env.Pace = func(ctx context.Context, d time.Duration) bool {
				return playground.RealTime(ctx, time.Duration(float64(d)*f))
			}
			if f == 0 {
				env.Pace = nil
			}
		}
	}
	// ?backoff=MS sets the reconnect backoff's base (tests: a countdown
	// that does not end before a slow machine's click on Retry now).
	if n, err := strconv.Atoi(q.Get("backoff")); err == nil && n > 0 {
		env.BackoffMs = n
	}
	fs, created, err := opfs.Open(ctx, "workspace")
	if err != nil {
		console.Call("warn", "playground: "+err.Error()+"; the workspace is kept in memory")
		env.FS, env.InMemory = playground.NewMemFS(playground.DemoFiles()), true
	} else {
		env.FS = fs
		if created {
			for p, body := range playground.DemoFiles() {
				if err := fs.Write(ctx, p, body); err != nil {
					console.Call("warn", "playground: seeding the workspace: "+err.Error())
					break
				}
			}
		}
	}
	ui.New(doc, env).Run(ctx)
}
