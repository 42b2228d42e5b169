package playground

import (
	"context"
	"time"

	"github.com/floehq/floe/clock"
)

// Pace waits d before the next fragment; it returns false if ctx was
// cancelled first. A nil Pace does not wait.
type Pace func(ctx context.Context, d time.Duration) bool

// RealTime is a Pace on the system clock.
func RealTime(ctx context.Context, d time.Duration) bool { return clock.System{}.Sleep(ctx, d) }

// wait applies p, or only checks ctx when p is nil.
func (p Pace) wait(ctx context.Context, d time.Duration) bool {
	if p == nil || d <= 0 {
		return ctx.Err() == nil
	}
	return p(ctx, d) && ctx.Err() == nil
}
