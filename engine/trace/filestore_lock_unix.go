//go:build unix && !js

package trace

import (
	"errors"
	"syscall"
)

// pidGone reports whether no process of this pid runs.
func pidGone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }
