package engine

import (
	"bytes"
	"runtime"
	"testing"
	"testing/synctest"
)

// goroutineID reads the running goroutine's id from its stack header.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	return string(bytes.Fields(buf)[1])
}

// A run's second task runs on the worker that finished the first (it keeps
// its grown stack); a task given while every worker is busy gets a new one
// (tools run concurrently, E-6.1); and the workers end with the run (the
// bubble would report them blocked otherwise).
func TestRunWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &run{tasks: make(chan task), quit: make(chan struct{})}
		ids := make(chan string, 3)
		r.spawn(funcTask(func() { ids <- goroutineID() }))
		first := <-ids
		synctest.Wait() // the worker waits for a task
		r.spawn(funcTask(func() { ids <- goroutineID() }))
		if again := <-ids; again != first {
			t.Fatalf("the second task ran on goroutine %s, not on the idle worker %s", again, first)
		}
		synctest.Wait()
		gate := make(chan struct{})
		r.spawn(funcTask(func() { <-gate; ids <- goroutineID() }))
		synctest.Wait() // that worker is busy
		r.spawn(funcTask(func() { ids <- goroutineID() }))
		if other := <-ids; other == first {
			t.Fatal("a task given while the only worker was busy ran on it")
		}
		close(gate)
		<-ids
		close(r.quit)
	})
}
