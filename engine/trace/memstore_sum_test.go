//go:build !js || floenode

package trace

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// onlyStore hides a store's Summarizer: List then reads each first file.
type onlyStore struct{ Store }

// Listing a memory store reads each session's first prompt in place: it
// copied each session's first file whole (ten sessions of 15 MB: 150 MB at
// every listing). The list is the one List makes without Summaries.
func TestMemStoreListsWithoutCopying(t *testing.T) {
	ctx := context.Background()
	s := &MemStore{}
	big := strings.Repeat(otherRec, (4<<20)/len(otherRec))
	for i := range 3 {
		id := fmt.Sprintf("session-2026-01-01-00-00-00-mem%07d", i)
		first := otherRec + strings.Replace(promptRec, "PROMPT", fmt.Sprintf("prompt %d", i), 1) + big
		if err := s.Create(ctx, id, [][]byte{[]byte(first), []byte(strings.Replace(promptRec, "PROMPT", "second file", 1))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Create(ctx, "session-2026-01-01-00-00-00-nopromptxx", [][]byte{[]byte(otherRec)}); err != nil {
		t.Fatal(err)
	}
	want, err := List(ctx, onlyStore{s})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := List(ctx, s)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("List = %v\nwant %v", got, want)
	}
	if len(got) != 4 || got[0].FirstPrompt == "" {
		t.Errorf("List = %v; want four sessions, prompts read", got)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("List allocated %d bytes for 3 sessions of 4 MB; want under 1 MiB", n)
	}
}
