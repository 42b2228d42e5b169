//go:build unix

package main

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	tt "github.com/floehq/floe/transport/transporttest"
)

// TestReadmeCurl runs the shell block of the README's "From curl or a page
// of your own" with bash and curl (skipped without them) against a server
// in its default ask mode: it creates a session, starts a task, approves
// each call from the stream and stops at the run's end. The answers its
// comments show are the ones it gets, and the session ends idle with
// every call run.
func TestReadmeCurl(t *testing.T) {
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	at := strings.Index(doc, "### From curl or a page of your own")
	if at < 0 {
		t.Fatal(`README: no "### From curl or a page of your own"`)
	}
	m := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(doc[at:])
	if m == nil {
		t.Fatal("README, From curl: no ```sh block")
	}
	const base = "http://127.0.0.1:8787/api/sessions"
	if !strings.Contains(m[1], base) {
		t.Fatalf("README, From curl: the block names no %s:\n%s", base, m[1])
	}
	p := start(t, "--dir", ":memory:", "--delay", "1ms")
	cmd := exec.Command("bash", "-c", strings.ReplaceAll(m[1], base, p.url+"/api/sessions"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A file, not a pipe: the stream's curl outlives the block (until its
	// next write, the next ping) and would hold a pipe open.
	out, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	printed := func() string { b, _ := os.ReadFile(out.Name()); return string(b) }
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the block failed: %v\n%s", err, printed())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the block did not end within 60 s (a safety bound):\n%s", printed())
	}
	got := printed()
	for _, c := range regexp.MustCompile(`# (\{.*\})`).FindAllStringSubmatch(m[1], -1) {
		if !strings.Contains(got, c[1]) {
			t.Errorf("README, From curl: the block's comment says %s; it printed:\n%s", c[1], got)
		}
	}
	if n := strings.Count(got, `data: {"type":"approval_request"`); n == 0 {
		t.Fatalf("no approval request came:\n%s", got)
	}
	c := &tt.Client{T: t, URL: p.url}
	state, msgs, _ := messages(t, c, "demo")
	if state != "idle" {
		t.Errorf("the session is %s after the block, want idle", state)
	}
	calls, outputs := 0, 0
	for _, s := range msgs {
		calls += strings.Count(s, `"type":"tool_call",`)
		if strings.Contains(s, `"type":"tool_call_output"`) && strings.Contains(s, `"stop_reason":"completed"`) {
			outputs++
		}
	}
	if calls == 0 || outputs != calls {
		t.Errorf("%d tool calls, %d run to completion; want each approved and run:\n%s", calls, outputs, strings.Join(msgs, "\n"))
	}
}
