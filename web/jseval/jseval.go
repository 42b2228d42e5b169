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
			return result(d), nil
		case <-t.C:
			return playground.EvalResult{}, errors.New("run_js: timed out after " + strconv.FormatFloat(timeout.Seconds(), 'f', -1, 64) + " s; the worker was terminated")
		case <-ctx.Done():
			return playground.EvalResult{}, errors.New("run_js: aborted; the worker was terminated")
		}
	}
}

// The most of a worker's answer the page reads: the code runs in the
// worker and can post anything (a console of 2e9 lines, a string of a
// gigabyte, not an object at all), which the page must not loop over or
// copy whole.
const (
	maxLines = 1000
	maxChars = 256 << 10 // a line's, the result's, the error's, and the console's in all
)

// result reads the worker's answer d: {console: string[], result: string}
// or {console, error: string}, within the limits above.
func result(d js.Value) (r playground.EvalResult) {
	if d.Type() != js.TypeObject {
		r.Error = "the code posted a " + d.Type().String() + " to the page, not a result"
		return r
	}
	left := maxChars
	if c := d.Get("console"); js.Global().Get("Array").Call("isArray", c).Bool() {
		n := c.Length()
		for i := 0; i < n && i < maxLines && left > 0; i++ {
			line := text(c.Index(i), left)
			left -= len(line)
			r.Console = append(r.Console, line)
		}
		if n > len(r.Console) {
			r.Console = append(r.Console, "… "+strconv.Itoa(n-len(r.Console))+" more lines not shown")
		}
	}
	if e := d.Get("error"); e.Type() == js.TypeString {
		r.Error = text(e, maxChars)
	} else {
		r.Result = text(d.Get("result"), maxChars)
	}
	return r
}

// text returns v as a string of at most max UTF-16 units, marked when cut;
// a value of another type than string is named by its type.
func text(v js.Value, max int) string {
	if v.Type() != js.TypeString {
		return "(" + v.Type().String() + ")"
	}
	o := js.Global().Get("Object").Invoke(v) // a String object: syscall/js reads no property of a primitive
	if n := o.Get("length").Int(); n > max {
		return o.Call("slice", 0, max).String() + "… (" + strconv.Itoa(n) + " characters in all)"
	}
	return v.String()
}
