// Package clock provides the real-time implementation of the engine's
// injected Clock. The engine itself never reads the time or sleeps except
// through a Clock; tests inject fakes.
package clock

import (
	"context"
	"time"
)

// System is the wall clock. Its zero value is ready to use and it is safe for
// concurrent use.
type System struct{}

// Now returns the current time.
func (System) Now() time.Time { return time.Now() }

// Sleep waits d or until ctx is done; it reports whether the full wait
// elapsed.
func (System) Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
