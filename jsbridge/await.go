//go:build js && wasm

package jsbridge

import (
	"context"
	"errors"
	"syscall/js"
)

// await registers a waiter, calls start(id) — a shim function that settles
// the waiter through Bridge.settle once the JavaScript side is done — and
// waits for the result or for ctx. start may return an object with an
// abort() method, called when ctx is done first, or a string: the result,
// given at once (the approver's decision), with nothing to wait for. A
// rejection is returned as an error carrying the JavaScript message
// (E-1.3). A string value may have crossed as bytes: reply.str reads it
// either way.
func (b *Bridge) await(ctx context.Context, what string, start func(id int) js.Value) (reply, error) {
	if err := ctx.Err(); err != nil {
		return reply{}, err
	}
	id, ch := b.waiters.add()
	defer b.waiters.remove(id)
	canceller := start(id)
	if canceller.Type() == js.TypeString {
		return reply{end: endDone, value: canceller}, nil
	}
	select {
	case r := <-ch:
		if r.end == endThrew {
			return reply{}, errors.New(endMessage(r))
		}
		return r, nil
	case <-ctx.Done():
		if canceller.Type() == js.TypeObject && canceller.Get("abort").Type() == js.TypeFunction {
			abortWith(ctx, canceller)
		}
		return reply{}, ctx.Err()
	}
}
