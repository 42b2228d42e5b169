//go:build !js

package trace_test

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

func TestNewID(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 4, 5, 999, time.FixedZone("CET", 3600))
	re := regexp.MustCompile(`^session-2026-12-01-09-04-05-[0-9a-f]{8}$`)
	seen := map[string]bool{}
	for range 100 {
		id := trace.NewID(now)
		if !re.MatchString(id) {
			t.Fatalf("NewID = %q, want session-2026-12-01-09-04-05-<8 hex> (UTC)", id)
		}
		if err := trace.ValidateID(id); err != nil {
			t.Fatal(err)
		}
		meta := omni.Meta{SessionID: id, Provider: "p", ModelID: "m"}.Message()
		if err := trace.CheckMeta(meta); err != nil {
			t.Fatal(err)
		}
		seen[id] = true
	}
	if len(seen) < 99 { // 100 draws of 32 bits: a repeat is a 1-in-a-million event
		t.Errorf("100 ids, %d distinct", len(seen))
	}
}

// A new session's id, in the format the reference and floe.newSessionId use.
func ExampleNewID() {
	id := trace.NewID(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	fmt.Println(id[:len("session-2026-12-01-09-00-00-")], len(id))
	// Output: session-2026-12-01-09-00-00- 36
}
