//go:build unix

package engine_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/signal"
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
	approve := func(ctx context.Context, call omni.Message) (engine.Decision, error) {
		fmt.Printf("Run %s %s? [y/N] ", call.Payload.Name, call.Payload.Arguments)
		select {
		case line := <-lines: // "" once stdin is closed
			if strings.TrimSpace(line) == "y" {
				return engine.DecisionAllow, nil
			}
			return engine.DecisionDeny, nil
		case <-ctx.Done(): // Ctrl-C: the run is aborted; the next line is the next prompt
			return engine.DecisionDeny, ctx.Err()
		}
	}
	for prompt := range lines {
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
	return nil
}

func TestREADMETerminal(t *testing.T) {
	readmetest.Check(t, "../README.md", "readme_terminal_test.go", "terminal")
}

// The README's terminal program on pipes as stdin and stdout: an approval
// answered "y"; then an approval interrupted by a real SIGINT (Ctrl-C),
// which aborts the run at once, with no line typed; the line typed next
// is the next run's prompt, not an answer to the abandoned question.
func TestREADMETerminalCtrlC(t *testing.T) {
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
	defer func() { os.Stdin, os.Stdout = stdin, stdout }()
	output := make(chan string, 64) // what the program printed, as it comes
	go func() {
		defer close(output)
		buf := make([]byte, 4096)
		for {
			n, err := outR.Read(buf)
			if n > 0 {
				output <- string(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	var printed bytes.Buffer
	waitFor := func(s string) { // a bound for a program that hangs, not an order of events
		t.Helper()
		timeout := time.After(10 * time.Second)
		for !strings.Contains(printed.String(), s) {
			select {
			case o, ok := <-output:
				if !ok {
					t.Fatalf("stdout closed before %q; printed %q", s, printed.String())
				}
				printed.WriteString(o)
			case <-timeout:
				t.Fatalf("no %q within 10 s; printed %q", s, printed.String())
			}
		}
		printed.Reset()
	}

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
	session, err := engine.New(engine.Config{Meta: enginetest.Meta("terminal"), LLM: llm, Environment: tools})
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	done := make(chan error, 1)
	go func() { done <- readmeTerminal(session) }()

	fmt.Fprintln(inW, "What time is it?")
	waitFor("Run clock {}? [y/N] ")
	fmt.Fprintln(inW, "y")
	waitFor("It is noon.\n")

	fmt.Fprintln(inW, "And now?")
	waitFor("Run clock {}? [y/N] ") // the run's signal.NotifyContext is in effect
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	waitFor("Aborted.\n") // with no line typed
	fmt.Fprintln(inW, "bye")
	waitFor("Bye.\n")
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	outW.Close()

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
