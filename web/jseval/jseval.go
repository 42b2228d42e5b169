//go:build js && wasm

// Package jseval is the playground's JavaScript evaluator: each call loads
// the sandbox document (eval-frame.html) in a fresh hidden frame, which
// runs the code in a dedicated Worker, and removes the frame — and so ends
// its worker — when the code is done, the time limit passes or the call is
// aborted.
//
// The sandbox runs at an opaque origin: floe-serve sends its document with
// a Content-Security-Policy `sandbox allow-scripts` (and no network), so
// neither the frame nor its worker can reach the playground origin's
// storage (the Traces in IndexedDB, the service worker's cache, the
// settings and keys in local storage) nor the page. The frame carries no
// sandbox attribute at first: Chromium sends the navigation of a frame
// sandboxed by its attribute past the service worker, and run_js would not
// work offline. The page checks instead that the loaded frame is not of its
// origin; one that is (a static host sends no headers, and the service
// worker, which adds the policy, does not control the page yet) is
// replaced by a frame with sandbox="allow-scripts", which runs the code at
// an opaque origin too.
package jseval

import (
	"context"
	"errors"
	"strconv"
	"syscall/js"
	"time"

	"github.com/floehq/floe/playground"
)

// startLimit bounds a sandbox's start: its frame and worker loaded, no
// code run yet.
const startLimit = 15 * time.Second

// New returns an Evaluator whose calls run in frames of the document at url.
func New(url string) playground.Evaluator {
	return func(ctx context.Context, code string, timeout time.Duration) (playground.EvalResult, error) {
		doc := js.Global().Get("document")
		var frame js.Value
		sandboxed := false
		mc := js.Global().Get("MessageChannel").New()
		port := mc.Get("port1")
		loaded := make(chan struct{}, 1)
		ready := make(chan struct{}, 1)
		answer := make(chan js.Value, 1)
		onLoad := js.FuncOf(func(js.Value, []js.Value) any {
			select {
			case loaded <- struct{}{}:
			default:
			}
			return nil
		})
		// mount puts a fresh frame of the sandbox in the page, with the
		// sandbox attribute when the document's own header did not
		// sandbox it (a static host that sends no headers of ours).
		mount := func() {
			frame = doc.Call("createElement", "iframe")
			frame.Set("hidden", true)
			frame.Set("title", "run_js sandbox")
			if sandboxed {
				frame.Call("setAttribute", "sandbox", "allow-scripts")
			}
			frame.Call("addEventListener", "load", onLoad)
			frame.Set("src", url)
			doc.Get("body").Call("append", frame)
		}
		// The frame posts {ready: true} before its worker exists, so the
		// first message is the frame's and the second the code's answer.
		started := false
		onMsg := js.FuncOf(func(_ js.Value, a []js.Value) any {
			if !started {
				started = true
				select {
				case ready <- struct{}{}:
				default:
				}
				return nil
			}
			select {
			case answer <- a[0].Get("data"):
			default:
			}
			return nil
		})
		port.Set("onmessage", onMsg)
		defer func() {
			frame.Call("remove")
			port.Call("close")
			onLoad.Release()
			onMsg.Release()
		}()
		mount()

		// The code's limit counts from the sandbox's start: loading the
		// frame (twice, served without its policy) and its worker is
		// bounded apart, by startLimit or the code's limit if longer (on a
		// slow device or a loaded machine that took over 3 s, and the code
		// was never run).
		limit := strconv.FormatFloat(timeout.Seconds(), 'f', -1, 64) + " s"
		start := max(timeout, startLimit)
		t := time.NewTimer(start)
		defer t.Stop()
		posted, running := false, false
		for {
			select {
			case <-loaded:
				if posted {
					continue
				}
				if !frame.Get("contentDocument").IsNull() {
					if sandboxed {
						return playground.EvalResult{}, errors.New("run_js: the sandbox (" + url + ") loaded at this page's origin, even in a frame with sandbox=\"allow-scripts\"; no code was run")
					}
					// Served without its policy: loaded again in a frame
					// that the attribute sandboxes (fetched past the
					// service worker, so not offline).
					frame.Call("remove")
					sandboxed = true
					mount()
					continue
				}
				posted = true
				frame.Get("contentWindow").Call("postMessage", map[string]any{"code": code}, "*", []any{mc.Get("port2")})
			case <-ready:
				running = true
				t.Reset(timeout)
			case d := <-answer:
				return result(d), nil
			case <-t.C:
				if !running {
					return playground.EvalResult{}, errors.New("run_js: the sandbox (" + url + ") did not start within " + strconv.FormatFloat(start.Seconds(), 'f', -1, 64) + " s; no code was run")
				}
				return playground.EvalResult{}, errors.New("run_js: timed out after " + limit + "; the worker was terminated")
			case <-ctx.Done():
				return playground.EvalResult{}, errors.New("run_js: aborted; the worker was terminated")
			}
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
			left -= units(line)
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

// text returns v as a string of at most max UTF-16 units, marked when cut,
// never after half a surrogate pair (it would read U+FFFD); a value of
// another type than string is named by its type.
func text(v js.Value, max int) string {
	if v.Type() != js.TypeString {
		return "(" + v.Type().String() + ")"
	}
	o := js.Global().Get("Object").Invoke(v) // a String object: syscall/js reads no property of a primitive
	if n := o.Get("length").Int(); n > max {
		cut := max
		if c := o.Call("charCodeAt", max-1).Int(); c >= 0xd800 && c <= 0xdbff {
			cut--
		}
		return o.Call("slice", 0, cut).String() + "… (" + strconv.Itoa(n) + " characters in all)"
	}
	return v.String()
}

// units counts the UTF-16 units of s, as the limits do (a Japanese
// character is one, not its three bytes).
func units(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r > 0xffff {
			n++
		}
	}
	return n
}
