package transport

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestHubReclaimsIdleChannels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := NewHub(Options{})
		idle := h.Channel("idle")
		busy := h.Channel("busy")
		busy.SetBusy(true)
		watched := h.Channel("watched")
		s, _ := watched.Subscribe("", false, nil)
		time.Sleep(30*time.Minute - time.Second) // the README's 30 minutes, written out
		if n := h.Reclaim(); n != 0 {
			t.Fatalf("reclaimed %d before 30 min", n)
		}
		time.Sleep(time.Second)
		if n := h.Reclaim(); n != 1 {
			t.Fatalf("reclaimed %d at 30 min, want 1", n)
		}
		if _, ok := h.Lookup("idle"); ok {
			t.Fatal("the idle channel survived")
		}
		again := h.Channel("idle")
		if again.Epoch() == idle.Epoch() {
			t.Fatal("a recreated channel kept its epoch")
		}
		// The subscriber leaves: the channel is reclaimed 30 min later.
		s.Close()
		time.Sleep(IdleReclaim)
		h.Reclaim()
		if _, ok := h.Lookup("watched"); ok {
			t.Fatal("the channel whose subscriber left 30 min ago survived")
		}
		if _, ok := h.Lookup("busy"); !ok {
			t.Fatal("a busy channel was reclaimed")
		}
		busy.SetBusy(false)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { h.Run(ctx); close(done) }()
		time.Sleep(IdleReclaim + time.Minute)
		synctest.Wait()
		if h.Len() != 0 {
			t.Fatalf("Run left %d channels", h.Len())
		}
		cancel()
		<-done
	})
}

func TestHubCloseEndsStreamsAfterWhatWasQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := NewHub(Options{})
		c := h.Channel("s")
		s, _ := c.Subscribe("", false, []Event{Simple("task_state", "state", "running")})
		c.Publish(msg(1))
		c.Publish(msg(2)) // the run's last events, queued and not yet written
		h.Close()
		h.Close() // a second Close is harmless
		w := &sink{}
		if err := s.Serve(context.Background(), w, nil); err != ErrClosed {
			t.Fatalf("Serve after Hub.Close = %v, want ErrClosed", err)
		}
		evs := parseSSE(t, w.text())
		if len(evs) != 3 || evs[1].data != `{"n":1}` || evs[2].data != `{"n":2}` {
			t.Fatalf("a closed channel's subscriber got %+v, want the three events queued before Close", evs)
		}
		// A channel asked for after Close is closed: its stream ends at once.
		late, _ := h.Channel("late").Subscribe("", false, nil)
		if err := late.Serve(context.Background(), &sink{}, nil); err != ErrClosed {
			t.Fatalf("Serve on a channel made after Hub.Close = %v, want ErrClosed", err)
		}
	})
}
