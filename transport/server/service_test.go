package server

import (
	"github.com/floehq/floe/internal/leakcheck"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/floehq/floe/transport/transporttest"
)

// A server in Trace files, its sessions driven over HTTP by clients that
// leave their streams mid-run, abort, compact and delete, several at
// once: once the server and its listener are closed, no goroutine and no
// file of its is left open.
func TestServerLeavesNothingOpen(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts /proc/self/fd")
	}
	dir := t.TempDir()
	fds, goroutines := leakcheck.OpenFiles(t), runtime.NumGoroutine()
	func() {
		srv, err := New(Config{Dir: dir, Mode: "allow-all", Delay: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(srv.Handler)
		defer func() {
			srv.Close()
			ts.CloseClientConnections()
			ts.Close()
		}()
		client := &transporttest.Client{T: t, URL: ts.URL}
		defer func() { client.HTTP.CloseIdleConnections() }()
		users := client.Open("/api/events", "", false) // the user channel, left open until the server closes
		defer users.Close()
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id := client.Create("")
				base := "/api/sessions/" + id
				for n := range 3 {
					st := client.Open(base+"/stream", "", false)
					client.Must(202, "POST", base+"/tasks", `{"input":"Count the lines of main.go"}`)
					st.Until(transporttest.ServerEvent("task_state")) // running
					st.MustNext()
					st.Close() // left mid-run
					switch n {
					case 0:
						client.Do("POST", base+"/abort", "")
					case 1:
						client.Do("GET", base+"/messages", "")
					}
					st = client.Open(base+"/stream", "", false)
					st.Until(transporttest.TaskState("idle"))
					// A compaction started holds the session until it
					// ends: the next task waits for it (it was refused,
					// 409 task_in_progress, now and then).
					if code, _ := client.Do("POST", base+"/compact", ""); code == 202 {
						st.Until(transporttest.TaskState("compacting"))
						st.Until(transporttest.TaskState("idle"))
					}
					st.Close()
				}
				client.Must(204, "DELETE", base, "")
			}()
		}
		wg.Wait()
	}()
	leakcheck.Until(t, 10*time.Second, "the goroutines of before", func() bool { return runtime.NumGoroutine() <= goroutines })
	leakcheck.Until(t, 10*time.Second, "the open files of before", func() bool { return leakcheck.OpenFiles(t) <= fds })
}
