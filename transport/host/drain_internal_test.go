//go:build !js

package host

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/transport"
)

// TestDrainWhileRunsStart: runs, follow-ups, compactions and aborts
// started from several goroutines while the registry drains: once Idle
// returns no run is in flight and none starts after it (each refused with
// ErrShuttingDown), and the metrics balance (every run started ended,
// no approval left pending). The race detector watches it.
func TestDrainWhileRunsStart(t *testing.T) {
	r, _ := serviceRegistry(t, trace.NewFileStore(t.TempDir(), trace.FileStoreOptions{}), 2)
	m := &transport.Metrics{}
	r.cfg.Metrics = m
	ctx := context.Background()
	var hosts []*Host
	for i := range 4 {
		h, err := r.Create(ctx, fmt.Sprintf("drain-%d", i), "")
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			h.SetMode(ModeAsk) // its tool calls wait for a decision, until the abort
		}
		hosts = append(hosts, h)
	}
	drained := make(chan struct{})
	var wg, going sync.WaitGroup
	going.Add(len(hosts))
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				if n == 8 {
					going.Done() // Drain once each has gone a few rounds
				}
				after := false // Idle had returned before this round began
				select {
				case <-drained:
					after = true
				default:
				}
				var err error
				switch (i + n) % 4 {
				case 0, 1:
					_, err = h.Start(Task{Input: []omni.Message{omni.UserText("Count the lines of main.go")}, QueueIfBusy: n%2 == 0})
				case 2:
					err = h.Compact()
				case 3:
					h.Abort()
					continue
				}
				if after {
					if !errors.Is(err, ErrShuttingDown) {
						t.Errorf("a run or compaction after Idle: %v, want ErrShuttingDown", err)
					}
					return
				}
			}
		}()
	}
	going.Wait()
	r.Drain()
	idle, cancel := context.WithCancel(ctx)
	go func() { // the runs waiting for an approval end at their abort
		for _, h := range hosts {
			if h.Mode() == ModeAsk {
				h.Abort()
			}
		}
		<-drained
		cancel()
	}()
	if err := r.Idle(idle); err != nil {
		t.Fatalf("Idle: %v", err)
	}
	if n := r.Counts().Running; n != 0 {
		t.Errorf("%d sessions running once Idle returned", n)
	}
	close(drained)
	wg.Wait()
	if n := r.Counts().Running; n != 0 {
		t.Errorf("%d sessions running after Idle", n)
	}
	var ended int64
	for i := range m.RunsEnded {
		ended += m.RunsEnded[i].Load()
	}
	if started := m.RunsStarted.Load(); started != ended || started == 0 {
		t.Errorf("%d runs started, %d ended", started, ended)
	}
	if n := m.ApprovalsPending.Load(); n != 0 {
		t.Errorf("%d approvals pending after every run ended", n)
	}
}
