package main

import (
	"bufio"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/floehq/floe/transport"
	tt "github.com/floehq/floe/transport/transporttest"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "floe-server-test")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "floe-server")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		panic(string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type proc struct {
	cmd *exec.Cmd
	url string
}

// start runs the server on 127.0.0.1:0 and returns once it listens.
func start(t *testing.T, args ...string) *proc {
	t.Helper()
	return startEnv(t, nil, args...)
}

// startEnv is start with env added to the server's environment.
func startEnv(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"--port", "0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd}
	t.Cleanup(func() { p.kill() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("server did not start: %v", err)
	}
	_, rest, ok := strings.Cut(line, "listening on ")
	if !ok {
		t.Fatalf("server said %q", line)
	}
	p.url = strings.TrimSuffix(strings.Fields(rest)[0], "/")
	return p
}

// kill ends the server at once, as a crash would.
func (p *proc) kill() {
	if p.cmd.ProcessState == nil {
		p.cmd.Process.Kill()
		p.cmd.Wait()
	}
}

func messages(t *testing.T, c *tt.Client, id string) (state string, msgs []string, live json.RawMessage) {
	var body struct {
		State    string
		Messages []json.RawMessage
		Live     json.RawMessage
	}
	if err := json.Unmarshal(c.Must(200, "GET", "/api/sessions/"+id+"/messages", ""), &body); err != nil {
		t.Fatal(err)
	}
	for _, m := range body.Messages {
		msgs = append(msgs, string(m))
	}
	return body.State, msgs, body.Live
}

func TestEndToEnd(t *testing.T) {
	p := start(t, "--dir", t.TempDir(), "--delay", "0", "--token", "tok")
	c := &tt.Client{T: t, URL: p.url, Token: "tok"}
	if status, _ := (&tt.Client{T: t, URL: p.url}).Do("GET", "/api/sessions", ""); status != 401 {
		t.Fatalf("no token: %d", status)
	}
	id := c.Create("ask")
	st := c.Open("/api/sessions/"+id+"/stream", "", false)
	if ev := st.MustNext(); !tt.TaskState("idle")(ev) {
		t.Fatalf("first event %+v", ev)
	}
	c.Must(202, "POST", "/api/sessions/"+id+"/tasks", `{"input":"Count the lines of main.go"}`)
	req := st.Until(tt.ServerEvent("approval_request"))
	// Incremental: the approval request arrives while the run waits for it.
	if state, _, live := messages(t, c, id); state != "running" || !strings.Contains(string(live), `"cursor":"`) {
		t.Fatalf("while waiting: state %s, live %s", state, live)
	}
	c.Must(202, "POST", "/api/sessions/"+id+"/steer", `{"text":"And greet me."}`)
	c.Must(204, "POST", "/api/sessions/"+id+"/approvals/"+tt.ToolCallID(t, req[len(req)-1]), `{"decision":"allow"}`)
	req = st.Until(tt.ServerEvent("approval_request"))
	c.Must(204, "POST", "/api/sessions/"+id+"/approvals/"+tt.ToolCallID(t, req[len(req)-1]), `{"decision":"allow"}`)
	st.Until(tt.TaskState("idle"))
	_, hist, _ := messages(t, c, id)
	all := strings.Join(hist, "\n")
	for _, want := range []string{"Count the lines of main.go", "And greet me.", `"tool_call_output"`, `"approval_decision"`} {
		if !strings.Contains(all, want) {
			t.Errorf("history lacks %s", want)
		}
	}
	// Abort while an approval is pending.
	c.Must(202, "POST", "/api/sessions/"+id+"/tasks", `{"input":"again"}`)
	st.Until(tt.ServerEvent("approval_request"))
	c.Must(202, "POST", "/api/sessions/"+id+"/abort", "")
	rest := st.Until(tt.TaskState("idle"))
	if tt.PayloadType(rest[len(rest)-2]) != "abort" {
		t.Fatalf("the run did not end with abort: %+v", rest[len(rest)-2])
	}
}

func TestRestartMidTaskResumes(t *testing.T) {
	dir := t.TempDir()
	p := start(t, "--dir", dir, "--delay", "0")
	c := &tt.Client{T: t, URL: p.url}
	id := c.Create("ask")
	st := c.Open("/api/sessions/"+id+"/stream", "", false)
	c.Must(202, "POST", "/api/sessions/"+id+"/tasks", `{"input":"Count the lines of main.go"}`)
	req := st.Until(tt.ServerEvent("approval_request"))
	call := tt.ToolCallID(t, req[len(req)-1])
	seen := false
	for _, ev := range req {
		seen = seen || (tt.PayloadType(ev) == "tool_call" && strings.Contains(ev.Data, call))
	}
	if !seen { // the approver may ask before the consumer has taken the call
		st.Until(func(ev transport.Received) bool {
			return tt.PayloadType(ev) == "tool_call" && strings.Contains(ev.Data, call)
		})
	}
	lastID := st.Last
	p.kill() // mid-task: two tool calls streamed, the first awaiting approval
	st.Close()

	p2 := start(t, "--dir", dir, "--delay", "0", "--mode", "allow-all")
	c2 := &tt.Client{T: t, URL: p2.url}
	state, hist, live := messages(t, c2, id)
	if state != "idle" || live != nil {
		t.Fatalf("after restart: state %s, live %s", state, live)
	}
	if j := strings.Join(hist, "\n"); !strings.Contains(j, "Count the lines of main.go") || !strings.Contains(j, `"type":"tool_call"`) {
		t.Fatalf("history after restart lacks the prompt or the tool calls:\n%s", j)
	}
	// The channel is new: the old id is a miss.
	st2 := c2.Open("/api/sessions/"+id+"/stream", lastID, true)
	if ev := st2.MustNext(); ev.Data != `{"type":"resync_required"}` {
		t.Fatalf("reconnect across a restart began with %+v", ev)
	}
	if ev := st2.MustNext(); !tt.TaskState("idle")(ev) {
		t.Fatalf("then %+v", ev)
	}
	c2.Must(202, "POST", "/api/sessions/"+id+"/tasks", `{"input":"Continue."}`)
	st2.Until(tt.TaskState("idle"))
	_, hist2, _ := messages(t, c2, id)
	j := strings.Join(hist2, "\n")
	// The cut-off turn never ended, so its input is carried over (E-17) and
	// the resumed run answers it: the tools run and the request completes.
	if !strings.Contains(j, "Continue.") || !strings.Contains(j, `"tool_call_output"`) || !strings.HasSuffix(j, `"status":"completed"}}`) || len(hist2) <= len(hist) {
		t.Fatalf("the resumed run did not continue the session:\n%s", j)
	}
}

// collect follows a session's run through disconnects: it reconnects with
// Last-Event-ID after each of its seeded disconnect points (and whenever the
// server drops it) and returns the session messages it saw and whether a
// reconnect was answered with resync_required.
func collect(t *testing.T, c *tt.Client, id string, rng *rand.Rand, started chan<- struct{}) (msgs []transport.Received, resynced bool) {
	path := "/api/sessions/" + id + "/stream"
	st := c.Open(path, "", false)
	st.MustNext() // the snapshot
	if started != nil {
		started <- struct{}{}
	}
	running := false
	for {
		budget := 1 + rng.IntN(40)
		for budget > 0 {
			ev, ok := st.Next()
			if !ok {
				break
			}
			switch {
			case ev.Data == `{"type":"resync_required"}`:
				resynced = true
			case tt.TaskState("running")(ev):
				running = true
			case tt.TaskState("idle")(ev) && running:
				st.Close()
				return msgs, resynced
			case ev.Name == "":
				msgs = append(msgs, ev)
				budget--
			}
		}
		st.Close()
		st = c.Open(path, st.Last, true)
	}
}

func TestReconnect50Clients(t *testing.T) {
	p := start(t, "--dir", t.TempDir(), "--delay", "1ms", "--mode", "allow-all")
	c := &tt.Client{T: t, URL: p.url}
	id := c.Create("")
	ref := c.Open("/api/sessions/"+id+"/stream", "", false)
	ref.MustNext()
	const clients = 50
	results := make([][]transport.Received, clients)
	started := make(chan struct{}, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cc := &tt.Client{T: t, URL: p.url}
			var resynced bool
			results[i], resynced = collect(t, cc, id, rand.New(rand.NewPCG(uint64(i), 2026)), started)
			if resynced {
				t.Errorf("client %d got resync_required although nothing was evicted", i)
			}
		}()
	}
	for range clients {
		<-started
	}
	c.Must(202, "POST", "/api/sessions/"+id+"/tasks", `{"input":"Count the lines of main.go and README.md"}`)
	var want []transport.Received
	for _, ev := range ref.Until(tt.TaskState("idle")) {
		if ev.Name == "" {
			want = append(want, ev)
		}
	}
	wg.Wait()
	if len(want) < 100 {
		t.Fatalf("the run streamed only %d messages", len(want))
	}
	for i, got := range results {
		if len(got) != len(want) {
			t.Fatalf("client %d saw %d messages, want %d", i, len(got), len(want))
		}
		for k := range want {
			if got[k] != want[k] {
				t.Fatalf("client %d, message %d: %+v, want %+v", i, k, got[k], want[k])
			}
		}
	}
	t.Logf("%d clients each saw all %d messages exactly once, in order", clients, len(want))
}

func TestEvictionThenResyncRecovers(t *testing.T) {
	p := start(t, "--dir", t.TempDir(), "--delay", "0", "--mode", "allow-all", "--replay-events", "20")
	c := &tt.Client{T: t, URL: p.url}
	id := c.Create("")
	ref := c.Open("/api/sessions/"+id+"/stream", "", false)
	ref.MustNext()
	gone := c.Open("/api/sessions/"+id+"/stream", "", false)
	gone.MustNext()
	gone.Close()
	c.Must(202, "POST", "/api/sessions/"+id+"/tasks", `{"input":"hi"}`)
	var complete []string
	for _, ev := range ref.Until(tt.TaskState("idle")) {
		if ev.Name == "" && !strings.Contains(ev.Data, `"partial_`) {
			complete = append(complete, ev.Data)
		}
	}
	back := c.Open("/api/sessions/"+id+"/stream", gone.Last, true)
	if ev := back.MustNext(); ev.Data != `{"type":"resync_required"}` {
		t.Fatalf("after eviction: %+v", ev)
	}
	if ev := back.MustNext(); !tt.TaskState("idle")(ev) {
		t.Fatalf("then %+v", ev)
	}
	_, hist, _ := messages(t, c, id)
	var got []string
	for _, m := range hist[1:] { // after session_meta
		var v any
		json.Unmarshal([]byte(m), &v)
		b, _ := json.Marshal(v)
		got = append(got, string(b))
	}
	for i := range complete {
		var v any
		json.Unmarshal([]byte(complete[i]), &v)
		b, _ := json.Marshal(v)
		complete[i] = string(b)
	}
	if strings.Join(got, "\n") != strings.Join(complete, "\n") {
		t.Fatalf("/messages after resync differs from the stream:\n%s\n---\n%s", strings.Join(got, "\n"), strings.Join(complete, "\n"))
	}
}
