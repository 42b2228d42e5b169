//go:build js && wasm

package jsbridge

import (
	"context"
	"errors"
	"math"
	"syscall/js"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// jsClock adapts the shim's clock — now() → ms since the epoch, and
// sleep(waiterID, ms) → {abort()} settling through Bridge.settle — to
// [engine.Clock].
type jsClock struct {
	b    *Bridge
	host js.Value
	diag func(kind engine.DiagnosticKind, err error)
}

// Now implements [engine.Clock]. A now() that does not return a finite
// number is reported and the system time is used.
func (c *jsClock) Now() (t time.Time) {
	defer guard("clock.now", func(err error) { t = time.Now(); c.diag(engine.DiagClock, err) })
	v := c.host.Call("now")
	if v.Type() == js.TypeString { // the shim's report of a throwing now()
		c.diag(engine.DiagClock, errors.New(v.String()))
		return time.Now()
	}
	if v.Type() != js.TypeNumber || math.IsNaN(v.Float()) || math.IsInf(v.Float(), 0) {
		c.diag(engine.DiagClock, badArg("clock.now", "returned "+typeName(v)+", want a number of milliseconds"))
		return time.Now()
	}
	ms := v.Float()
	return time.Unix(0, int64(ms*1e6)).UTC()
}

// sessionClock is the clock of a session's producer batches' stamps
// (produce): the session's clock, set once its options are read; the
// system clock when it has none. last is a copy of the stamper of the
// session's last producer to end, which the next one starts from: only a
// cache (producers running at once each stamp with their own copy).
type sessionClock struct {
	now  func() time.Time
	last omni.Stamper
}

// Sleep implements [engine.Clock]. It returns false when ctx is done first
// or when sleep resolves to false; a rejection is reported and counts as
// slept.
func (c *jsClock) Sleep(ctx context.Context, d time.Duration) (ok bool) {
	defer guard("clock.sleep", func(err error) { ok = ctx.Err() == nil; c.diag(engine.DiagClock, err) })
	ms := float64(d) / float64(time.Millisecond)
	r, err := c.b.await(ctx, "clock.sleep", func(id int) js.Value { return c.host.Call("sleep", id, ms) })
	if err != nil {
		if ctx.Err() != nil {
			return false
		}
		c.diag(engine.DiagClock, errors.New("clock.sleep: "+err.Error()))
	}
	if v := r.value; v.Type() == js.TypeBoolean && !v.Bool() {
		return false
	}
	return ctx.Err() == nil
}
