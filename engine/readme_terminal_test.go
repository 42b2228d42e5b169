//go:build unix

package engine_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/enginetest"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/internal/readmetest"
)

// readmeTerminal is the README's program at a terminal (its "At a
// terminal" block), word for word between the markers: prompts and
// approvals read from one goroutine's lines, Ctrl-C aborting a run.
func readmeTerminal(session *engine.Session) error {
	// README terminal begin
	lines := make(chan string) // the terminal's lines: one goroutine reads them for the whole program
	go func() {
		for in := bufio.NewScanner(os.Stdin); in.Scan(); {
			lines <- in.Text()
		}
		close(lines)
	}()
	unread := make(chan string, 1) // a line typed as Ctrl-C came: the next prompt
	approve := func(ctx context.Context, call omni.Message) (engine.Decision, error) {
		fmt.Printf("Run %s %s? [y/N] ", call.Payload.Name, call.Payload.Arguments)
		select {
		case line, ok := <-lines: // "" once stdin is closed
			if ok && ctx.Err() != nil { // select took the line, not the Ctrl-C that came with it
				unread <- line
				return engine.DecisionDeny, ctx.Err()
			}
			if strings.TrimSpace(line) == "y" {
				return engine.DecisionAllow, nil
			}
			return engine.DecisionDeny, nil
		case <-ctx.Done(): // Ctrl-C: the run is aborted; the next line is the next prompt
			return engine.DecisionDeny, ctx.Err()
		}
	}
	for {
		var prompt string
		select {
		case prompt = <-unread:
		default:
			var ok bool
			if prompt, ok = <-lines; !ok {
				return nil // stdin closed
			}
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt) // Ctrl-C aborts the run
		stream, err := session.Run(ctx, []omni.Message{omni.UserText(prompt)},
			engine.RunOptions{Approve: approve, ApproveHonorsCancel: true})
		if err != nil {
			stop()
			return err
		}
		for m := range stream {
			switch {
			case m.IsModel(omni.Text):
				fmt.Println(m.Payload.Text)
			case m.IsEvent(omni.Abort): // an aborted run's last message
				fmt.Println("Aborted.")
			}
		}
		stop() // Ctrl-C at the prompt ends the program
	}
	// README terminal end
}

func TestREADMETerminal(t *testing.T) {
	readmetest.Check(t, "../README.md", "readme_terminal_test.go", "terminal")
}

// terminal is the README's terminal program running on pipes as its stdin
// and stdout.
type terminal struct {
	t       *testing.T
	in      *os.File // the program's stdin, to type on
	out     *os.File // its stdout, read by waitFor only
	outW    *os.File
	printed string // read and not yet waited for
	done    chan error
}

func startTerminal(t *testing.T, llm engine.LLM, tools enginetest.Tools) *terminal {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, stdout := os.Stdin, os.Stdout
	os.Stdin, os.Stdout = inR, outW
	t.Cleanup(func() { os.Stdin, os.Stdout = stdin, stdout })
	session, err := engine.New(engine.Config{Meta: enginetest.Meta("terminal"), LLM: llm, Environment: tools})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { session.Close() })
	tm := &terminal{t: t, in: inW, out: outR, outW: outW, done: make(chan error, 1)}
	go func() { tm.done <- readmeTerminal(session) }()
	return tm
}

// waitFor reads what the program prints until s; a bound for a program
// that hangs, not an order of events.
func (tm *terminal) waitFor(s string) {
	tm.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	buf := make([]byte, 4096)
	for !strings.Contains(tm.printed, s) {
		tm.out.SetReadDeadline(deadline)
		n, err := tm.out.Read(buf)
		tm.printed += string(buf[:n])
		if err != nil && !strings.Contains(tm.printed, s) {
			tm.t.Fatalf("no %q (%v); printed %q", s, err, tm.printed[max(0, len(tm.printed)-200):])
		}
	}
	_, tm.printed, _ = strings.Cut(tm.printed, s)
}

// end closes stdin and waits for the program to return.
func (tm *terminal) end() {
	tm.t.Helper()
	tm.in.Close()
	if err := <-tm.done; err != nil {
		tm.t.Fatal(err)
	}
	tm.outW.Close()
}

// The README's terminal program on pipes as stdin and stdout: an approval
// answered "y"; then an approval interrupted by a real SIGINT (Ctrl-C),
// which aborts the run at once, with no line typed; the line typed next
// is the next run's prompt, not an answer to the abandoned question.
func TestREADMETerminalCtrlC(t *testing.T) {
	llm := enginetest.NewLLM(
		enginetest.Reply{Emit: []omni.Message{omni.ToolCallMsg("call-1", "clock", `{}`)}},
		enginetest.Reply{Emit: []omni.Message{omni.AssistantText("It is noon.", omni.StatusCompleted)}},
		enginetest.Reply{Emit: []omni.Message{omni.ToolCallMsg("call-2", "clock", `{}`)}},
		enginetest.Reply{Emit: []omni.Message{omni.AssistantText("Bye.", omni.StatusCompleted)}},
	)
	tools := enginetest.Tools{"clock": func(ctx context.Context, call omni.Message, emit func(omni.Message)) error {
		emit(omni.ToolOutput(call.Payload.ToolCallID, "noon", omni.StatusCompleted))
		return nil
	}}
	tm := startTerminal(t, llm, tools)

	fmt.Fprintln(tm.in, "What time is it?")
	tm.waitFor("Run clock {}? [y/N] ")
	fmt.Fprintln(tm.in, "y")
	tm.waitFor("It is noon.\n")

	fmt.Fprintln(tm.in, "And now?")
	tm.waitFor("Run clock {}? [y/N] ") // the run's signal.NotifyContext is in effect
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	tm.waitFor("Aborted.\n") // with no line typed
	fmt.Fprintln(tm.in, "bye")
	tm.waitFor("Bye.\n")
	tm.end()

	calls := llm.Calls()
	if len(calls) != 4 {
		t.Fatalf("%d requests, want 4", len(calls))
	}
	var last []string
	for _, m := range calls[3] {
		if m.IsModel(omni.Text) {
			last = append(last, m.Payload.Text)
		}
	}
	if len(last) == 0 || last[len(last)-1] != "bye" {
		t.Errorf("the last request's texts %q: want the prompt \"bye\" last", last)
	}
}

// A line typed at the instant of a Ctrl-C: the approver's select finds
// both the line and ctx.Done() ready, and may take either (at random);
// either way the line is the next run's prompt. Each round holds the
// approver in its question's write (stdout is a full pipe) while the line
// is typed (the reading goroutine waits to hand it over) and the SIGINT
// aborts the run, then lets it go on to its select. The rounds make a
// select that took the line and kept it fail all but once in 2^16 runs.
func TestREADMETerminalCtrlCWithALine(t *testing.T) {
	asked := make(chan context.Context, 1) // an "ask" request's context
	calls := 0
	llm := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		calls++ // one request at a time
		var prompt string
		for _, m := range p.NewMessages {
			if m.IsModel(omni.Text) {
				prompt = m.Payload.Text
			}
		}
		if strings.HasPrefix(prompt, "ask ") {
			asked <- ctx
			emit(omni.ToolCallMsg(fmt.Sprintf("call-%d", calls), "clock", `{}`))
		} else {
			emit(omni.AssistantText("Got "+prompt+".", omni.StatusCompleted))
		}
		return engine.Outcome{Status: omni.StatusCompleted}
	})
	tools := enginetest.Tools{"clock": func(ctx context.Context, call omni.Message, emit func(omni.Message)) error {
		t.Error("the clock ran")
		return nil
	}}
	tm := startTerminal(t, llm, tools)
	for i := range 16 {
		tm.fill()
		fmt.Fprintf(tm.in, "ask %d\n", i)
		parked(t, "[IO wait", "fmt.Printf") // the approver, asking on a full stdout
		fmt.Fprintf(tm.in, "next %d\n", i)
		parked(t, "[chan send", "readmeTerminal") // the line, ready to be taken
		ctx := <-asked
		if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ctx.Done(): // the run is aborted: the approver's ctx.Done() is ready too
		case <-time.After(10 * time.Second):
			t.Fatal("no abort within 10 s of the SIGINT")
		}
		tm.waitFor("Aborted.\n")
		tm.waitFor(fmt.Sprintf("Got next %d.\n", i))
	}
	tm.end()
}

// fill fills the program's stdout, a pipe, to the last byte: its next
// write waits until waitFor reads.
func (tm *terminal) fill() {
	tm.t.Helper()
	rc, err := tm.outW.SyscallConn()
	if err != nil {
		tm.t.Fatal(err)
	}
	chunk := []byte(strings.Repeat("~", 4096))
	err = rc.Write(func(fd uintptr) bool {
		for size := len(chunk); size > 0; {
			if _, err := syscall.Write(int(fd), chunk[:size]); err == syscall.EAGAIN {
				size /= 2
			} else if err != nil {
				tm.t.Fatal(err)
			}
		}
		return true
	})
	if err != nil {
		tm.t.Fatal(err)
	}
}

// parked waits for a goroutine in state (as a stack dump says it, e.g.
// "[chan send") with fn in its stack; a bound of 10 s for a program that
// hangs, not an order of events.
func parked(t *testing.T, state, fn string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	buf := make([]byte, 1<<20)
	for time.Now().Before(deadline) {
		n := runtime.Stack(buf, true)
		for g := range strings.SplitSeq(string(buf[:n]), "\n\n") {
			header, _, _ := strings.Cut(g, "\n")
			if strings.Contains(header, state) && strings.Contains(g, fn) {
				return
			}
		}
		runtime.Gosched()
	}
	t.Fatalf("no goroutine %s in %s within 10 s", state, fn)
}
