// Command floe-providers replays provider response cases against the model
// adapters (see provider/replay): for every *.json case in DIR it serves
// the case's bytes on 127.0.0.1, runs the adapter the case's provider
// names, and prints PASS or FAIL with the first difference; it ends with
// "providers: N passed, M failed" and exits 1 when a case failed.
//
//	floe-providers DIR
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/floehq/floe/provider/replay"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: floe-providers DIR")
		os.Exit(2)
	}
	passed, failed, err := run(context.Background(), os.Args[1], os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "floe-providers:", err)
		os.Exit(2)
	}
	if failed > 0 || passed == 0 {
		os.Exit(1)
	}
}

func run(ctx context.Context, dir string, out *os.File) (passed, failed int, err error) {
	files, err := replay.Files(dir)
	if err != nil {
		return 0, 0, err
	}
	for _, f := range files {
		c, err := replay.Load(f)
		if err == nil {
			err = replay.Run(ctx, c)
		}
		name := f
		if c != nil {
			name = c.Name
		}
		if err != nil {
			failed++
			fmt.Fprintf(out, "FAIL %s: %v\n", name, err)
		} else {
			passed++
			fmt.Fprintf(out, "PASS %s\n", name)
		}
	}
	fmt.Fprintf(out, "providers: %d passed, %d failed\n", passed, failed)
	return passed, failed, nil
}
