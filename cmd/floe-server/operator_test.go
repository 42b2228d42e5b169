package main

import (
	"bufio"
	"bytes"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
)

// FLOE_TOKEN is the token when --token is not given, and -h does not print
// it (it was the flag's default, so the help showed it to whoever asked).
func TestTokenFromEnvironmentNotInHelp(t *testing.T) {
	cmd := exec.Command(binary, "-h")
	cmd.Env = append(os.Environ(), "FLOE_TOKEN=s3cret-token")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("-h: %v", err)
	}
	if strings.Contains(string(out), "s3cret-token") {
		t.Errorf("-h prints the token:\n%s", out)
	}
	if !strings.Contains(string(out), "$FLOE_TOKEN") {
		t.Errorf("-h does not name FLOE_TOKEN:\n%s", out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{{nil, "s3cret-token"}, {[]string{"--token", "flag-token"}, "flag-token"}} {
		p := startEnv(t, []string{"FLOE_TOKEN=s3cret-token"}, append([]string{"--dir", ":memory:"}, tc.args...)...)
		for token, status := range map[string]int{"": 401, "wrong": 401, tc.want: 200} {
			req, _ := http.NewRequest("GET", p.url+"/api/sessions", nil)
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != status {
				t.Errorf("%v, token %q: %d, want %d", tc.args, token, resp.StatusCode, status)
			}
		}
		p.kill()
	}
}

// A bad flag value is said once, with the usage (the flag package's
// message was printed again after the usage).
func TestFlagParseErrorSaidOnce(t *testing.T) {
	cmd := exec.Command(binary, "--port", "abc")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("%v, want exit status 2", err)
	}
	if n := strings.Count(stderr.String(), `invalid value "abc" for flag -port`); n != 1 {
		t.Errorf("the error is said %d times:\n%s", n, stderr.String())
	}
	if !strings.Contains(stderr.String(), "Usage of floe-server") {
		t.Errorf("no usage:\n%s", stderr.String())
	}
}

// A Trace directory the server cannot write stops it at start, naming the
// directory; before, it started and answered every request with a 500. An
// empty --dir (an unset variable in a script) is refused: it kept the
// Traces in memory, lost at the next restart.
func TestTraceDirRefused(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	cases := []struct {
		dir, want string
		status    int
	}{
		{"", "--dir: empty; want a directory, or :memory: to keep the Traces in memory", 2},
		{filepath.Join(file, "under"), "--dir: mkdir " + file + ": not a directory", 1},
	}
	if runtime.GOOS == "linux" {
		cases = append(cases, struct {
			dir, want string
			status    int
		}{"/proc/self", "--dir /proc/self: cannot write Traces: ", 1})
	}
	for _, tc := range cases {
		cmd := exec.Command(binary, "--port", "0", "--dir", tc.dir)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// It either says it listens or exits (its stdout closes).
		if line, _ := bufio.NewReader(out).ReadString('\n'); line != "" {
			cmd.Process.Kill()
			t.Errorf("--dir %q: the server started: %s", tc.dir, line)
		}
		err := cmd.Wait()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != tc.status {
			t.Errorf("--dir %q: %v, want exit status %d", tc.dir, err, tc.status)
		}
		if !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("--dir %q: stderr %q, want %q", tc.dir, stderr.String(), tc.want)
		}
	}
	// The directory is checked without a trace left in it.
	dir := t.TempDir()
	p := start(t, "--dir", dir)
	p.kill()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the check left %v", entries)
	}
}

// A diagnostic is logged on one line: a line break a model or a tool put
// in what it quotes (a tool call's id) would forge a line of the log.
func TestDiagnosticLoggedOnOneLine(t *testing.T) {
	var buf bytes.Buffer
	logDiagnostic(newLogger(&buf, "text"))(engine.Diagnostic{Kind: engine.DiagTool, Err: errors.New("tool \"x\": call \"c1\nfloe-server: listening on 0.0.0.0\" failed\t")})
	out := buf.String()
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, `kind=tool err="tool \"x\": call \"c1\nfloe-server: listening on 0.0.0.0\" failed\t"`) {
		t.Errorf("logged %q", out)
	}
}
