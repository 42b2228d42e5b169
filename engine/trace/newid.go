//go:build !js

package trace

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// NewID returns a new session id in the reference's format,
// session-YYYY-MM-DD-HH-mm-ss-<8 hex>, from now's UTC time (to the
// second) and 32 random bits, as floe.newSessionId does in JavaScript:
// such an id passes [ValidateID] and [CheckMeta], and sessions listed
// by id sort by their start. Native builds only.
func NewID(now time.Time) string {
	var b [4]byte
	rand.Read(b[:]) // never fails (crypto/rand's documentation)
	return "session-" + now.UTC().Format("2006-01-02-15-04-05") + "-" + hex.EncodeToString(b[:])
}
