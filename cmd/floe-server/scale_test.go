package main

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	tt "github.com/floehq/floe/transport/transporttest"
)

// rssKiB reads a VmRSS-style line of the server's /proc status.
func rssKiB(t *testing.T, p *proc, key string) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			n, _ := strconv.Atoi(strings.Fields(v)[0])
			return n
		}
	}
	t.Fatalf("no %s in /proc status", key)
	return 0
}

// follower is a lean SSE client: it counts message events until the
// broadcast task_state idle that follows running.
type follower struct {
	ready chan struct{}
	done  chan int // messages seen
}

func follow(t *testing.T, ctx context.Context, url string) *follower {
	f := &follower{ready: make(chan struct{}), done: make(chan int, 1)}
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			close(f.ready)
			f.done <- -1
			return
		}
		defer resp.Body.Close()
		rd := bufio.NewReaderSize(resp.Body, 4096)
		n, running, first := 0, false, true
		named := false
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				f.done <- -1
				return
			}
			switch {
			case line == "event: server_event\n":
				named = true
			case strings.HasPrefix(line, "data: "):
				if first {
					first = false
					close(f.ready)
				} else if !named {
					n++
				} else if strings.HasPrefix(line, `data: {"type":"task_state","state":"running"`) {
					running = true
				} else if running && strings.HasPrefix(line, `data: {"type":"task_state","state":"idle"`) {
					f.done <- n
					return
				}
			case line == "\n":
				named = false
			}
		}
	}()
	return f
}

func TestThousandSubscribersOneSession(t *testing.T) {
	if testing.Short() {
		t.Skip("scale test")
	}
	p := start(t, "--dir", t.TempDir(), "--delay", "1ms", "--mode", "allow-all")
	c := &tt.Client{T: t, URL: p.url}
	id := c.Create("")
	base := rssKiB(t, p, "VmRSS")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const n = 1000
	fs := make([]*follower, n)
	for i := range fs {
		fs[i] = follow(t, ctx, p.url+"/api/sessions/"+id+"/stream")
	}
	for _, f := range fs {
		<-f.ready
	}
	subscribed := rssKiB(t, p, "VmRSS")
	c.Must(202, "POST", "/api/sessions/"+id+"/tasks", `{"input":"Count the lines of main.go"}`)
	want := -2
	for i, f := range fs {
		got := <-f.done
		if want == -2 {
			want = got
		}
		if got != want || got < 100 {
			t.Fatalf("subscriber %d saw %d messages, subscriber 0 saw %d", i, got, want)
		}
	}
	peak := rssKiB(t, p, "VmHWM")
	per := (subscribed - base) * 1024 / n
	t.Logf("1,000 subscribers: server RSS %d KiB idle, %d KiB subscribed (%d B per subscriber), peak %d KiB over a %d-message run",
		base, subscribed, per, peak, want)
	if per > 64*1024 || peak-base > 256*1024 {
		t.Fatalf("memory not bounded: %d B per subscriber, peak growth %d KiB", per, peak-base)
	}
}

func TestHundredSessionsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("scale test")
	}
	p := start(t, "--dir", t.TempDir(), "--delay", "1ms", "--mode", "allow-all")
	c := &tt.Client{T: t, URL: p.url}
	base := rssKiB(t, p, "VmRSS")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const n = 100
	ids := make([]string, n)
	fs := make([]*follower, n)
	for i := range ids {
		ids[i] = c.Create("")
		fs[i] = follow(t, ctx, p.url+"/api/sessions/"+ids[i]+"/stream")
		<-fs[i].ready
	}
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Must(202, "POST", "/api/sessions/"+id+"/tasks", `{"input":"Count the lines of main.go"}`)
		}()
	}
	wg.Wait()
	for i, f := range fs {
		if got := <-f.done; got < 100 {
			t.Fatalf("session %d: %d messages", i, got)
		}
	}
	peak := rssKiB(t, p, "VmHWM")
	t.Logf("100 sessions running at once: server RSS %d KiB idle, peak %d KiB (%d KiB per session)", base, peak, (peak-base)/n)
	if (peak-base)/n > 2048 {
		t.Fatalf("memory not bounded: %d KiB per session", (peak-base)/n)
	}
}
