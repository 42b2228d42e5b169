// Command floe-conform runs the engine's conformance scenarios.
//
//	floe-conform [--resume] DIR
//
// It runs every *.json scenario of DIR (sorted by name) against the native
// engine and prints one line per scenario, "PASS <id> <name>" or
// "FAIL <id> <name>" followed by an indented line with the first difference,
// then "conformance (native): N passed, M failed". The exit status is 0 when
// every scenario passed, 1 when one failed (or DIR holds none), 2 on a usage
// error or an unreadable DIR.
//
// With --resume each scenario's Trace is written to an in-memory trace
// store and, after its last run, every session is resumed from the Trace it
// wrote; the resumed history, carry-over, pending summary and counters must
// equal what the engine held (up to the documented differences a resume
// cannot rebuild). The summary line is then
// "conformance (native, resume): N passed, M failed".
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/floehq/floe/engine/conformance"
)

const usage = "usage: floe-conform [--resume] DIR"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var resume bool
	var dirs []string
	for _, a := range args {
		switch a {
		case "--resume", "-resume":
			resume = true
		case "-h", "-help", "--help":
			fmt.Fprintln(stdout, usage)
			return 0
		default:
			if strings.HasPrefix(a, "-") {
				fmt.Fprintf(stderr, "floe-conform: unknown flag %s\n%s\n", a, usage)
				return 2
			}
			dirs = append(dirs, a)
		}
	}
	if len(dirs) != 1 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	scenarios, err := conformance.LoadDir(dirs[0])
	if err != nil {
		fmt.Fprintf(stderr, "floe-conform: %v\n", err)
		return 2
	}
	passed, failed := 0, 0
	for _, s := range scenarios {
		res := conformance.Run(ctx, s, conformance.Options{Resume: resume})
		if res.Pass {
			passed++
			fmt.Fprintf(stdout, "PASS %s %s\n", res.ID, res.Name)
			continue
		}
		failed++
		fmt.Fprintf(stdout, "FAIL %s %s\n", res.ID, res.Name)
		fmt.Fprintf(stdout, "    %s\n", strings.ReplaceAll(res.Diff, "\n", "\n    "))
	}
	mode := "native"
	if resume {
		mode = "native, resume"
	}
	fmt.Fprintf(stdout, "conformance (%s): %d passed, %d failed\n", mode, passed, failed)
	if failed > 0 || passed == 0 {
		return 1
	}
	return 0
}
