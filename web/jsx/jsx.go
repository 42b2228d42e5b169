//go:build js && wasm

// Package jsx holds the small JavaScript helpers the playground's browser
// adapters share: waiting for a Promise from a goroutine.
package jsx

import (
	"context"
	"errors"
	"syscall/js"
)

// Await waits for the Promise p (or returns a non-Promise value as is).
// A rejection is an error carrying the JavaScript error's name and
// message. Call it from a goroutine, never from a js.FuncOf body.
func Await(ctx context.Context, p js.Value) (js.Value, error) {
	if p.Type() != js.TypeObject || p.Get("then").Type() != js.TypeFunction {
		return p, nil
	}
	type result struct {
		v   js.Value
		err error
	}
	ch := make(chan result, 1)
	var ok, fail js.Func
	ok = js.FuncOf(func(_ js.Value, a []js.Value) any {
		ch <- result{v: arg(a)}
		return nil
	})
	fail = js.FuncOf(func(_ js.Value, a []js.Value) any {
		ch <- result{err: Error(arg(a))}
		return nil
	})
	p.Call("then", ok, fail)
	defer func() {
		// Released only once settled: a later settle would call a released func.
		go func() {
			<-ch
			ok.Release()
			fail.Release()
		}()
	}()
	select {
	case r := <-ch:
		ch <- r // for the releasing goroutine
		return r.v, r.err
	case <-ctx.Done():
		return js.Undefined(), ctx.Err()
	}
}

func arg(a []js.Value) js.Value {
	if len(a) == 0 {
		return js.Undefined()
	}
	return a[0]
}

// Error turns a thrown JavaScript value into a Go error: "Name: message"
// for an Error or DOMException, its string otherwise.
func Error(v js.Value) error {
	if v.Type() == js.TypeObject && v.Get("message").Type() == js.TypeString {
		name := v.Get("name").String()
		if name == "" || name == "<undefined>" {
			name = "Error"
		}
		return errors.New(name + ": " + v.Get("message").String())
	}
	if v.Type() == js.TypeString {
		return errors.New(v.String())
	}
	return errors.New("JavaScript error: " + js.Global().Get("String").Invoke(v).String())
}

// Call calls method on v, turning a synchronous throw into an error. An
// object without the method (a browser that lacks it: Safari before 26
// has no FileSystemFileHandle.createWritable) is an error naming it, not
// a panic.
func Call(v js.Value, method string, args ...any) (res js.Value, err error) {
	if t := v.Type(); (t == js.TypeObject || t == js.TypeFunction) && v.Get(method).Type() != js.TypeFunction {
		return js.Undefined(), errors.New("TypeError: " + typeName(v) + "." + method + " is not a function in this browser")
	}
	defer caught(&err)
	return v.Call(method, args...), nil
}

// typeName is the name of v's constructor, or "object".
func typeName(v js.Value) string {
	if c := v.Get("constructor"); c.Type() == js.TypeFunction {
		if n := c.Get("name"); n.Type() == js.TypeString && n.String() != "" {
			return n.String()
		}
	}
	return "object"
}

// Invoke calls the function f with this undefined, returning what it throws
// as an error. (A global function such as fetch is called so, not as a
// method of js.Global(): Cloudflare's Go glue makes that a Proxy, which
// fetch refuses as its this.)
func Invoke(f js.Value, args ...any) (res js.Value, err error) {
	defer caught(&err)
	return f.Invoke(args...), nil
}

// caught, deferred, turns a JavaScript throw (a js.Error panic) into *err;
// any other panic goes on.
func caught(err *error) {
	if p := recover(); p != nil {
		if je, ok := p.(js.Error); ok {
			*err = Error(je.Value)
			return
		}
		panic(p)
	}
}

// AwaitCall calls method on v and waits for the Promise it returns.
func AwaitCall(ctx context.Context, v js.Value, method string, args ...any) (js.Value, error) {
	p, err := Call(v, method, args...)
	if err != nil {
		return js.Undefined(), err
	}
	return Await(ctx, p)
}
