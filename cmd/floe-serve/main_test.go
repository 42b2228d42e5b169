package main

import (
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"floe.wasm":  "\x00asm",
		"floe.mjs":   "export {}",
		"index.html": "<!doctype html>",
		".npmrc":     "secret",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(Handler(dir))
	defer srv.Close()

	tests := []struct {
		name, method, path string
		status             int
		contentType        string
	}{
		{"wasm", "GET", "/floe.wasm", 200, "application/wasm"},
		{"module", "GET", "/floe.mjs", 200, "text/javascript; charset=utf-8"},
		{"index", "GET", "/", 200, "text/html; charset=utf-8"},
		{"head", "HEAD", "/floe.wasm", 200, "application/wasm"},
		{"missing", "GET", "/nope.js", 404, ""},
		{"dotfile", "GET", "/.npmrc", 404, ""},
		{"post", "POST", "/floe.mjs", 405, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, srv.URL+tc.path, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tc.status)
			}
			if tc.contentType != "" && resp.Header.Get("Content-Type") != tc.contentType {
				t.Errorf("Content-Type = %q, want %q", resp.Header.Get("Content-Type"), tc.contentType)
			}
			if tc.status == 200 && resp.Header.Get("Cache-Control") != "no-cache" {
				t.Errorf("Cache-Control = %q, want no-cache", resp.Header.Get("Cache-Control"))
			}
		})
	}
}

func TestCSP(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"index.html", "eval-frame.html"} {
		os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644)
	}
	os.MkdirAll(filepath.Join(dir, "tests"), 0o755)
	os.WriteFile(filepath.Join(dir, "tests", "page.html"), []byte("x"), 0o644)
	srv := httptest.NewServer(Handler(dir))
	defer srv.Close()
	for path, want := range map[string]string{"/": CSP, "/index.html": CSP, "/eval-frame.html": FrameCSP, "/tests/page.html": ""} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Content-Security-Policy"); got != want {
			t.Errorf("%s: Content-Security-Policy %q, want %q", path, got, want)
		}
	}
	for _, must := range []string{"script-src 'self' 'wasm-unsafe-eval';", "object-src 'none'", "base-uri 'none'"} {
		if !strings.Contains(CSP, must) {
			t.Errorf("CSP lacks %q", must)
		}
	}
	if strings.Contains(CSP, "unsafe-inline") || strings.Contains(CSP, "'unsafe-eval'") {
		t.Error("CSP allows inline script or eval")
	}
}

// The sandbox frame runs at an opaque origin with no network, and the
// policy admits exactly the scripts of static/eval-frame.html: an edit of
// the file that does not update the hash stops run_js.
func TestFrameCSP(t *testing.T) {
	for _, must := range []string{"default-src 'none';", "worker-src blob:;", "frame-ancestors 'self';", "sandbox allow-scripts"} {
		if !strings.Contains(FrameCSP, must) {
			t.Errorf("FrameCSP lacks %q", must)
		}
	}
	for _, bad := range []string{"allow-same-origin", "allow-popups", "allow-top-navigation", "unsafe-inline", "script-src 'self'", "connect-src", "*"} {
		if strings.Contains(FrameCSP, bad) {
			t.Errorf("FrameCSP has %q", bad)
		}
	}
	page, err := os.ReadFile(filepath.Join("..", "..", "static", "eval-frame.html"))
	if err != nil {
		t.Fatal(err)
	}
	scripts := regexp.MustCompile(`(?s)<script>(.*?)</script>`).FindAllSubmatch(page, -1)
	if len(scripts) == 0 {
		t.Fatal("eval-frame.html has no inline script")
	}
	for _, s := range scripts {
		sum := sha256.Sum256(s[1])
		if h := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !strings.Contains(FrameCSP, h) {
			t.Errorf("FrameCSP lacks %s, the hash of eval-frame.html's script (update it after editing the script)", h)
		}
	}
}

func TestListenLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.168.1.1:0", "nonsense"} {
		if ln, err := listen(addr); err == nil {
			ln.Close()
			t.Errorf("listen(%q) succeeded, want an error", addr)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0"} {
		ln, err := listen(addr)
		if err != nil {
			t.Fatalf("listen(%q): %v", addr, err)
		}
		if host, _, _ := net.SplitHostPort(ln.Addr().String()); host != "127.0.0.1" {
			t.Errorf("listen(%q) bound %s", addr, ln.Addr())
		}
		ln.Close()
	}
}

// A static host sends none of floe-serve's headers: the playground's pages
// carry the same policies in meta elements, without the directives a meta
// element cannot set (frame-ancestors, sandbox), and the service worker
// gives the sandbox its whole policy. An edit of a policy here that does
// not reach the files fails.
func TestStaticPolicies(t *testing.T) {
	without := func(policy string, names ...string) string {
		var kept []string
		for _, d := range strings.Split(policy, "; ") {
			if !slices.Contains(names, strings.Fields(d)[0]) {
				kept = append(kept, d)
			}
		}
		return strings.Join(kept, "; ")
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", "static", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	meta := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]*)">`)
	for name, want := range map[string]string{
		"index.html":      without(CSP, "frame-ancestors"),
		"eval-frame.html": without(FrameCSP, "frame-ancestors", "sandbox"),
	} {
		m := meta.FindAllStringSubmatch(read(name), -1)
		if len(m) != 1 {
			t.Errorf("%s: %d policy meta elements, want 1", name, len(m))
			continue
		}
		if m[0][1] != want {
			t.Errorf("%s: meta policy\n%q, want\n%q", name, m[0][1], want)
		}
	}
	if !strings.Contains(read("sw.js"), `const FRAME_POLICY = "`+FrameCSP+`";`) {
		t.Errorf("sw.js: FRAME_POLICY is not FrameCSP %q", FrameCSP)
	}
}
