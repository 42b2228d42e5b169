//go:build !js

package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/floehq/floe/transport/server"
)

// A Go service serving the session API over net/http, shut down cleanly:
// told to stop (SIGINT, SIGTERM), it aborts the runs in flight and waits
// for their Traces (Server.Shutdown), which also ends the streams, then
// lets the HTTP server finish the other requests. Server.Shutdown goes
// first: http.Server.Shutdown waits for the streams, which end only then.
func ExampleServer_Shutdown() {
	srv, err := server.New(server.Config{Delay: time.Hour}) // the scripted model, slow; Dir: "sessions" for Traces in files
	if err != nil {
		fmt.Println(err)
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	hs := &http.Server{Handler: srv.Handler, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)

	// In main: ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	url := "http://" + ln.Addr().String() + "/api/sessions"
	resp, err := http.Post(url, "application/json", strings.NewReader(`{}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	var session struct{ ID string }
	json.NewDecoder(resp.Body).Decode(&session)
	resp.Body.Close()
	resp, err = http.Post(url+"/"+session.ID+"/tasks", "application/json", strings.NewReader(`{"input":"Read main.go"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println("task:", resp.Status)
	stop() // the signal

	<-ctx.Done()
	grace, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(grace); err != nil { // the runs aborted, their Traces written, the streams ended
		fmt.Println(err)
	}
	if hs.Shutdown(grace) != nil { // no longer listening; the other requests finished
		hs.Close()
	}

	records, _ := srv.Registry.History(context.Background(), session.ID)
	fmt.Println("the Trace ends with:", records[len(records)-1].Payload.Type)
	late := httptest.NewRecorder() // a task that still reached the handler
	srv.Handler.ServeHTTP(late, httptest.NewRequest("POST", "/api/sessions/"+session.ID+"/tasks", strings.NewReader(`{"input":"hi"}`)))
	fmt.Println("a task after it:", late.Code, strings.Contains(late.Body.String(), "shutting_down"))
	// Output:
	// task: 202 Accepted
	// the Trace ends with: abort
	// a task after it: 503 true
}
