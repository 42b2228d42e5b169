//go:build !js

package api_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/floehq/floe/transport/server"
)

// wantBusy does a request and fails unless it answers 409 session_busy
// naming the process that holds the session's lock file.
func (e *env) wantBusy(method, path, body, holder string) {
	e.t.Helper()
	status, b := e.do(method, path, body)
	var res struct {
		Error struct{ Code, Message string }
	}
	json.Unmarshal(b, &res)
	if status != 409 || res.Error.Code != "session_busy" || !strings.Contains(res.Error.Message, holder) || !strings.Contains(res.Error.Message, ".lock") {
		e.t.Fatalf("%s %s: %d %s, want 409 session_busy naming %s and the lock file", method, path, status, b, holder)
	}
}

// Two servers on one directory (two processes, or two stores of one): while
// one runs a session, the other cannot resume, run or delete it; each runs
// it in turn. Before, both wrote its Trace at once.
func TestTwoServersOneDirectory(t *testing.T) {
	dir := t.TempDir()
	a := newEnv(t, server.Config{Dir: dir})
	b := newEnv(t, server.Config{Dir: dir})
	me := "pid " + strconv.Itoa(os.Getpid())
	id := a.create("ask")
	st := a.open("/api/sessions/"+id+"/stream", "", false)
	st.next()
	a.must(202, "POST", "/api/sessions/"+id+"/tasks", `{"input":"hi"}`)
	st.until(serverEvent("approval_request"))
	// Looking at it takes no lock: its engine is resumed at its first run.
	b.must(200, "GET", "/api/sessions/"+id, "")
	b.must(200, "GET", "/api/sessions/"+id+"/messages", "")
	b.wantBusy("POST", "/api/sessions/"+id+"/tasks", `{"input":"mine"}`, me)
	b.wantBusy("POST", "/api/sessions/"+id+"/compact", "", me)
	b.wantBusy("DELETE", "/api/sessions/"+id, "", me)
	a.must(202, "POST", "/api/sessions/"+id+"/abort", "")
	st.until(taskState("idle"))

	// Now b runs it, and a, which still has it loaded, is refused.
	bst := b.open("/api/sessions/"+id+"/stream", "", false)
	bst.next()
	b.must(202, "POST", "/api/sessions/"+id+"/tasks", `{"input":"hi again"}`)
	bst.until(serverEvent("approval_request"))
	a.wantBusy("POST", "/api/sessions/"+id+"/tasks", `{"input":"mine"}`, me)
	b.must(202, "POST", "/api/sessions/"+id+"/abort", "")
	bst.until(taskState("idle"))
	a.must(204, "DELETE", "/api/sessions/"+id, "")
	if _, err := os.Stat(filepath.Join(dir, "."+id+".lock")); !os.IsNotExist(err) {
		t.Fatalf("the lock file outlived the delete: %v", err)
	}
}

// The Node build's lock file (a { dir } store's run in another process)
// refuses the server too: the same name and format.
func TestServerRefusesNodeLock(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, server.Config{Dir: dir})
	host, _ := os.Hostname()
	lock := filepath.Join(dir, ".s2.lock")
	node := `{"pid":` + strconv.Itoa(os.Getppid()) + `,"host":` + strconv.Quote(host) + `,"token":"k2j4x0lq8mbz1"}` + "\n"
	if err := os.WriteFile(lock, []byte(node), 0o600); err != nil {
		t.Fatal(err)
	}
	e.wantBusy("POST", "/api/sessions", `{"id":"s2"}`, "pid "+strconv.Itoa(os.Getppid())+" on "+host)
	os.Remove(lock)
	e.must(201, "POST", "/api/sessions", `{"id":"s2","approvalMode":"allow-all"}`)
	st := e.open("/api/sessions/s2/stream", "", false)
	st.next()
	e.must(202, "POST", "/api/sessions/s2/tasks", `{"input":"hi"}`)
	st.until(taskState("idle"))
	os.WriteFile(lock, []byte(node), 0o600)
	e.wantBusy("POST", "/api/sessions/s2/tasks", `{"input":"hi"}`, "pid "+strconv.Itoa(os.Getppid()))
	e.wantBusy("POST", "/api/sessions/s2/compact", "", "pid "+strconv.Itoa(os.Getppid()))
	e.wantBusy("DELETE", "/api/sessions/s2", "", "pid "+strconv.Itoa(os.Getppid()))
	os.Remove(lock)
	e.must(202, "POST", "/api/sessions/s2/compact", "")
	st.until(taskState("idle"))
	e.must(204, "DELETE", "/api/sessions/s2", "")
}

// wantLockFailed does a request and fails unless it answers 500
// store_failed naming the session's lock file and the system's error.
func (e *env) wantLockFailed(method, path, body, lock string) {
	e.t.Helper()
	status, b := e.do(method, path, body)
	var res struct {
		Error struct{ Code, Message string }
	}
	json.Unmarshal(b, &res)
	if status != 500 || res.Error.Code != "store_failed" || !strings.Contains(res.Error.Message, "its lock file "+lock+" cannot be read: is a directory") {
		e.t.Fatalf("%s %s: %d %s, want 500 store_failed naming %s and its error", method, path, status, b, lock)
	}
}

// A lock file the server cannot read (a directory in its place; no
// permission) is a storage failure, 500 store_failed naming the file and
// the error, not 409 session_busy (it was taken for another process's,
// and named none), and nothing is written or lost.
func TestServerLockFileFails(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, server.Config{Dir: dir})
	lock := filepath.Join(dir, ".s3.lock")
	if err := os.Mkdir(lock, 0o700); err != nil {
		t.Fatal(err)
	}
	e.wantLockFailed("POST", "/api/sessions", `{"id":"s3","approvalMode":"allow-all"}`, lock)
	e.must(404, "GET", "/api/sessions/s3", "")
	os.Remove(lock)
	e.must(201, "POST", "/api/sessions", `{"id":"s3","approvalMode":"allow-all"}`)
	st := e.open("/api/sessions/s3/stream", "", false)
	st.next()
	e.must(202, "POST", "/api/sessions/s3/tasks", `{"input":"hi"}`)
	st.until(taskState("idle"))
	before := e.must(200, "GET", "/api/sessions/s3/messages", "")
	os.Mkdir(lock, 0o700)
	e.wantLockFailed("POST", "/api/sessions/s3/tasks", `{"input":"again"}`, lock)
	e.wantLockFailed("POST", "/api/sessions/s3/compact", "", lock)
	e.wantLockFailed("DELETE", "/api/sessions/s3", "", lock)
	if after := e.must(200, "GET", "/api/sessions/s3/messages", ""); string(after) != string(before) {
		t.Fatalf("the history changed:\n%s\nwas\n%s", after, before)
	}
	os.Remove(lock)
	e.must(202, "POST", "/api/sessions/s3/tasks", `{"input":"again"}`)
	st.until(taskState("idle"))
	e.must(204, "DELETE", "/api/sessions/s3", "")
}
