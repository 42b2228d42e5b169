//go:build wasm

package lock_test

import (
	"strings"
	"testing"

	"github.com/floehq/floe/internal/lock"
)

// Unlocking an unlocked lock panics with what was wrong (sync.Mutex ends
// the program there, which the native build keeps).
func TestMutexUnlockUnlocked(t *testing.T) {
	var mu lock.Mutex
	defer func() {
		r := recover()
		if s, _ := r.(string); !strings.Contains(s, "unlock of unlocked") {
			t.Fatalf("recovered %v, want the unlock of an unlocked mutex", r)
		}
	}()
	mu.Unlock()
}
