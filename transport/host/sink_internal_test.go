package host

import (
	"context"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/playground"
	"github.com/floehq/floe/transport"
)

// checkedStore calls after on every Append, once the records are in the
// store.
type checkedStore struct {
	trace.Store
	after func()
}

func (s *checkedStore) Append(ctx context.Context, id string, index int, data []byte) (trace.AppendResult, error) {
	r, err := s.Store.Append(ctx, id, index, data)
	s.after()
	return r, err
}

// scriptedRegistry is a registry of playground sessions (the scripted
// model, no delay) over store.
func scriptedRegistry(t *testing.T, store trace.Store) *Registry {
	t.Helper()
	hub := transport.NewHub(transport.Options{})
	r, err := NewRegistry(Config{
		Store: store, Hub: hub, Mode: ModeAllowAll,
		NewMeta: func(string, time.Time) omni.Message { return playground.Meta(time.Now()) },
		Wire: func(omni.Message) (Wiring, error) {
			ws := playground.NewWorkspace(nil)
			return Wiring{LLM: playground.NewModel(ws, nil), Environment: ws, Tools: ws.Tools(), MaxTurns: 8}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hub.Close)
	return r
}

// A record reaches the Trace and joins the unpublished list in one step
// under h.mu: a Messages call in between read it in the Trace without
// counting it unpublished, and a client that fetched history then got
// it a second time from the stream.
func TestTraceWriteHoldsTheLock(t *testing.T) {
	var h atomic.Pointer[Host]
	var appends, unlocked atomic.Int32
	store := &checkedStore{Store: &trace.MemStore{}}
	store.after = func() {
		x := h.Load()
		if x == nil {
			return // the session_meta, written by Create
		}
		appends.Add(1)
		if x.mu.TryLock() {
			x.mu.Unlock()
			unlocked.Add(1)
		}
	}
	r := scriptedRegistry(t, store)
	x, err := r.Create(context.Background(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	h.Store(x)
	if _, err := x.Start(Task{Input: []omni.Message{omni.UserText("Count the lines of main.go")}}); err != nil {
		t.Fatal(err)
	}
	if err := x.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if appends.Load() == 0 {
		t.Fatal("the run wrote no record")
	}
	if n := unlocked.Load(); n > 0 {
		t.Fatalf("%d of %d records reached the Trace while h.mu was free", n, appends.Load())
	}
}

// Every answer of Messages taken during a run splits history exactly: the
// complete messages published up to its cursor are its history but for
// the unpublished tail (and the session_meta, never streamed). The probe
// races the run, so a broken split shows in some runs only; a correct one
// passes in every run.
func TestMessagesSplitsHistoryAtTheCursor(t *testing.T) {
	r := scriptedRegistry(t, &trace.MemStore{})
	ctx := context.Background()
	h, err := r.Create(ctx, "", "")
	if err != nil {
		t.Fatal(err)
	}
	sub, _ := h.Subscribe("", false)
	pr, pw := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- sub.Serve(ctx, pw, nil) }()
	events := make(chan []transport.Received, 1)
	go func() {
		var got []transport.Received
		rd := transport.NewReader(pr)
		running := false
		for {
			ev, err := rd.Next()
			if err != nil {
				t.Error(err)
				break
			}
			got = append(got, ev)
			if ev.Name == "server_event" && strings.Contains(ev.Data, `"type":"task_state"`) {
				if strings.Contains(ev.Data, `"state":"running"`) {
					running = true
				} else if running && strings.Contains(ev.Data, `"state":"idle"`) {
					break
				}
			}
		}
		sub.Close()
		pr.Close() // a write still under way fails rather than blocks Serve
		events <- got
	}()

	if _, err := h.Start(Task{Input: []omni.Message{omni.UserText("Count the lines of main.go")}}); err != nil {
		t.Fatal(err)
	}
	var answers []Messages
	var mu sync.Mutex
	stop := make(chan struct{})
	probed := make(chan struct{})
	go func() {
		defer close(probed)
		for {
			m, err := h.Messages(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			answers = append(answers, m)
			mu.Unlock()
			// Asked at least once, whether or not the run ended before
			// this goroutine first ran.
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	if err := h.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	close(stop)
	<-probed
	got := <-events
	<-served

	seqOf := func(id string) int {
		n := 0
		for _, c := range id[strings.LastIndexByte(id, '-')+1:] {
			n = n*10 + int(c-'0')
		}
		return n
	}
	for k, m := range answers {
		upTo := seqOf(m.Cursor)
		var want []string // complete messages streamed up to the cursor
		for _, ev := range got {
			if ev.Name == "" && ev.ID != "" && seqOf(ev.ID) <= upTo && !strings.Contains(ev.Data, `"type":"partial_`) {
				want = append(want, ev.Data)
			}
		}
		var have []string // history but for the tail and the session_meta
		for i, msg := range m.History {
			if (i >= m.TailStart && i < m.TailStart+m.Tail) || msg.Type == omni.TypeSessionMeta {
				continue
			}
			have = append(have, string(msg.AppendJSON(nil)))
		}
		// History holds the messages streamed before they were traced
		// (the input, tool_list_ready) last: compare them as sets.
		slices.Sort(have)
		slices.Sort(want)
		if !slices.Equal(have, want) {
			t.Fatalf("answer %d of %d (cursor %s, tail %d at %d): history but for the tail\n%s\nwant what was streamed up to the cursor\n%s",
				k, len(answers), m.Cursor, m.Tail, m.TailStart, strings.Join(have, "\n"), strings.Join(want, "\n"))
		}
	}
	if len(answers) == 0 {
		t.Fatal("no answer")
	}
}

// A negative KeepWarmBytes is refused by name, not taken as no bound.
func TestNegativeKeepWarmBytesIsRefused(t *testing.T) {
	hub := transport.NewHub(transport.Options{})
	t.Cleanup(hub.Close)
	_, err := NewRegistry(Config{
		Store: &trace.MemStore{}, Hub: hub, KeepWarmBytes: -1,
		NewMeta: func(string, time.Time) omni.Message { return playground.Meta(time.Now()) },
		Wire:    func(omni.Message) (Wiring, error) { return Wiring{}, nil },
	})
	if err == nil || !strings.Contains(err.Error(), "KeepWarmBytes") {
		t.Fatalf("got %v, want an error naming KeepWarmBytes", err)
	}
}

// An unknown Mode is refused with the modes there are.
func TestUnknownModeIsRefusedWithTheModes(t *testing.T) {
	hub := transport.NewHub(transport.Options{})
	t.Cleanup(hub.Close)
	_, err := NewRegistry(Config{
		Store: &trace.MemStore{}, Hub: hub, Mode: "auto",
		NewMeta: func(string, time.Time) omni.Message { return playground.Meta(time.Now()) },
		Wire:    func(omni.Message) (Wiring, error) { return Wiring{}, nil },
	})
	if want := `host: Config.Mode: "auto" is not an approval mode (ask, allow-all, deny-all or read-only)`; err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}
