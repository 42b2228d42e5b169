// Command floe-serve serves a directory (static/ by default) on the loopback
// interface for local development: the playground, the browser tests and the
// examples. It sets the MIME types WebAssembly and ES modules need
// (application/wasm for WebAssembly.instantiateStreaming, text/javascript for
// .mjs), asks browsers to revalidate every file so a rebuild is picked up on
// reload, and refuses to listen anywhere but 127.0.0.1.
//
// Usage:
//
//	floe-serve [-addr 127.0.0.1:8080] [-dir static]
//
// With port 0 the system picks a free port; the printed URL names it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address; the host must be 127.0.0.1 (or localhost)")
	dir := flag.String("dir", "static", "directory to serve")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("floe-serve: ")
	if err := run(*addr, *dir); err != nil {
		log.Fatal(err)
	}
}

func run(addr, dir string) error {
	ln, err := listen(addr)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		ln.Close()
		return fmt.Errorf("-dir %q: not a directory", dir)
	}
	srv := &http.Server{Handler: Handler(dir), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	fmt.Printf("floe-serve: serving %s at http://%s/\n", dir, ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// listen opens addr after checking that it names the loopback address
// 127.0.0.1: the server is a development tool and never faces a network.
func listen(addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("-addr %q: %w", addr, err)
	}
	switch host {
	case "127.0.0.1":
	case "localhost":
		host = "127.0.0.1"
	default:
		return nil, fmt.Errorf("-addr %q: only 127.0.0.1 is allowed", addr)
	}
	ln, err := net.Listen("tcp4", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("-addr %q: %w", addr, err)
	}
	return ln, nil
}
