//go:build js && wasm

// Package jseval is the playground's JavaScript evaluator: each call runs
// the code in a fresh dedicated Worker (no DOM; floe-serve gives the
// worker's script a Content-Security-Policy without network access) and
// terminates it when the code is done, the time limit passes or the call
// is aborted.
package jseval

import (
	"context"
	"errors"
	"strconv"
	"syscall/js"
	"time"

	"github.com/floehq/floe/playground"
)

// New returns an Evaluator whose Workers run the script at url.
func New(url string) playground.Evaluator {
	return func(ctx context.Context, code string, timeout time.Duration) (playground.EvalResult, error) {
		ch := make(chan js.Value, 1)
		w := js.Global().Get("Worker").New(url)
		onMsg := js.FuncOf(func(_ js.Value, a []js.Value) any {
			select {
			case ch <- a[0].Get("data"):
			default:
			}
			return nil
		})
		onErr := js.FuncOf(func(_ js.Value, a []js.Value) any {
			msg := "the worker failed to start"
			if len(a) > 0 && a[0].Get("message").Type() == js.TypeString {
				msg = a[0].Get("message").String()
			}
			if len(a) > 0 {
				a[0].Call("preventDefault")
			}
			select {
			case ch <- js.ValueOf(map[string]any{"error": msg, "console": []any{}}):
			default:
			}
			return nil
		})
		w.Set("onmessage", onMsg)
		w.Set("onerror", onErr)
		defer func() {
			w.Call("terminate")
			onMsg.Release()
			onErr.Release()
		}()
		w.Call("postMessage", map[string]any{"code": code})
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case d := <-ch:
			var r playground.EvalResult
			c := d.Get("console")
			for i := 0; c.Truthy() && i < c.Length(); i++ {
				r.Console = append(r.Console, c.Index(i).String())
			}
			if e := d.Get("error"); e.Type() == js.TypeString {
				r.Error = e.String()
			} else {
				r.Result = d.Get("result").String()
			}
			return r, nil
		case <-t.C:
			return playground.EvalResult{}, errors.New("run_js: timed out after " + strconv.FormatFloat(timeout.Seconds(), 'f', -1, 64) + " s; the worker was terminated")
		case <-ctx.Done():
			return playground.EvalResult{}, errors.New("run_js: aborted; the worker was terminated")
		}
	}
}
