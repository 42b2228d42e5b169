package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/floehq/floe/transport/api"
	tt "github.com/floehq/floe/transport/transporttest"
)

// proxySection is the README's "Behind a reverse proxy": its command line,
// its nginx location block and its Caddyfile.
type proxySection struct {
	args     []string // the flags of the command line
	prefix   string   // the location's prefix, "/agent/"
	upstream string   // proxy_pass's URL
	block    string   // the location block
	caddy    string   // the Caddyfile
}

func readProxySection(t *testing.T) proxySection {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "### Behind a reverse proxy")
	if start < 0 {
		t.Fatal(`README: no "### Behind a reverse proxy"`)
	}
	doc = doc[start:]
	if end := strings.Index(doc[4:], "\n#"); end > 0 {
		doc = doc[:end+4]
	}
	fence := func(lang string) string {
		m := regexp.MustCompile("(?s)```" + lang + "\n(.*?)```").FindStringSubmatch(doc)
		if m == nil {
			t.Fatalf("README, Behind a reverse proxy: no ```%s block", lang)
		}
		return m[1]
	}
	var s proxySection
	cmd := strings.Fields(fence("sh"))
	if len(cmd) < 2 || cmd[0] != "FLOE_TOKEN=…" || cmd[1] != "floe-server" {
		t.Fatalf("README: the command line is %q, want FLOE_TOKEN=… floe-server …", cmd)
	}
	s.args = cmd[2:]
	s.block = fence("nginx")
	loc := regexp.MustCompile(`location (\S+) \{`).FindStringSubmatch(s.block)
	pass := regexp.MustCompile(`proxy_pass (\S+);`).FindStringSubmatch(s.block)
	if loc == nil || pass == nil {
		t.Fatalf("README: the nginx block names no location or no proxy_pass:\n%s", s.block)
	}
	s.prefix, s.upstream = loc[1], pass[1]
	s.caddy = fence("caddyfile")
	return s
}

// TestReadmeProxies reads the README's nginx location block and checks it
// gives the server what it needs: the prefix stripped (a location and a
// proxy_pass URL that both end with a slash), to the server's default
// address, the streams not buffered, a body bound no tighter than the
// server's; that the Caddyfile strips the prefix too; and that the
// command line parses and names the origin the pages have. When nginx or
// Caddy is installed, it runs its block in front of the server and a
// page's requests through it (nginx with gzip on): a stream's first event
// arrives before anything else happens, a run comes through, a stream
// resumes from Last-Event-ID and a body too big gets the server's own
// 413. Caddy passes the page's Host on: before the loopback guard
// answered the hosts of --origin, it refused every request, 421.
func TestReadmeProxies(t *testing.T) {
	s := readProxySection(t)
	if !strings.HasSuffix(s.prefix, "/") || s.upstream != "http://127.0.0.1:8787/" {
		t.Errorf("README: location %s, proxy_pass %s; want a prefix ending with / and http://127.0.0.1:8787/ (the trailing slash strips the prefix)", s.prefix, s.upstream)
	}
	if !strings.Contains(s.block, "proxy_buffering off;") {
		t.Error("README: the nginx block does not say proxy_buffering off")
	}
	size := regexp.MustCompile(`client_max_body_size (\d+)m;`).FindStringSubmatch(s.block)
	if size == nil {
		t.Error("README: the nginx block sets no client_max_body_size in megabytes")
	} else if n, _ := strconv.Atoi(size[1]); n<<20 <= api.MaxBody {
		t.Errorf("README: client_max_body_size %sm: want more than the server's %d bytes, so that its 413 answers", size[1], api.MaxBody)
	}
	if !strings.HasPrefix(s.caddy, "example.com {\n") || !strings.Contains(s.caddy, "handle_path "+s.prefix+"* {") || !strings.Contains(s.caddy, "reverse_proxy 127.0.0.1:8787\n") {
		t.Errorf("README: the Caddyfile is\n%s\nwant a site example.com, handle_path %s* (which strips the prefix) and reverse_proxy 127.0.0.1:8787", s.caddy, s.prefix)
	}
	cfg, _, err := parse(append(s.args, "--dir", ":memory:"), func(k string) string { return map[string]string{"FLOE_TOKEN": "tok"}[k] })
	if err != nil {
		t.Fatalf("README's command line %q: %v", s.args, err)
	}
	if len(cfg.Origins) != 1 || cfg.Token != "tok" {
		t.Fatalf("README's command line %q: origins %q, token %q; want one origin and the token", s.args, cfg.Origins, cfg.Token)
	}
	cfg.Delay = 0 // the scripted model at full speed
	origin := cfg.Origins[0]
	host := strings.TrimPrefix(strings.TrimPrefix(origin, "https://"), "http://")

	t.Run("nginx", func(t *testing.T) {
		bin, err := exec.LookPath("nginx")
		if err != nil {
			t.Skip("nginx is not installed")
		}
		upstream := serveLoopback(t, cfg)
		dir := t.TempDir()
		port := freePort(t)
		block := strings.Replace(s.block, "http://127.0.0.1:8787/", upstream+"/", 1)
		conf := fmt.Sprintf(`daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  gzip on;
  gzip_proxied any;
  gzip_types text/event-stream application/json;
  server {
    listen 127.0.0.1:%[2]d;
    %[3]s
  }
}
`, dir, port, block)
		runProxy(t, dir, port, bin, "-p", dir, "-c", writeFile(t, dir, "nginx.conf", conf))
		throughProxy(t, fmt.Sprintf("http://127.0.0.1:%d%s", port, strings.TrimSuffix(s.prefix, "/")), host, true)
	})
	t.Run("caddy", func(t *testing.T) {
		bin, err := exec.LookPath("caddy")
		if err != nil {
			t.Skip("caddy is not installed")
		}
		upstream := serveLoopback(t, cfg)
		dir := t.TempDir()
		port := freePort(t)
		site := strings.Replace(s.caddy, "127.0.0.1:8787", strings.TrimPrefix(upstream, "http://"), 1)
		site = strings.Replace(site, "example.com {", fmt.Sprintf("http://:%d {", port), 1) // any Host, as the page's
		conf := fmt.Sprintf("{\n\tadmin off\n\tauto_https off\n\tstorage file_system %s\n}\n%s", dir, site)
		runProxy(t, dir, port, bin, "run", "--adapter", "caddyfile", "--config", writeFile(t, dir, "Caddyfile", conf))
		throughProxy(t, fmt.Sprintf("http://127.0.0.1:%d%s", port, strings.TrimSuffix(s.prefix, "/")), host, false)
	})
}

// throughProxy drives a session at base as a page of host does, with the
// token "tok".
func throughProxy(t *testing.T, base, host string, gzipped bool) {
	c := pageClient(t, base, host)
	c.Token = "tok"
	id := c.Create("allow-all")
	st := c.Open("/api/sessions/"+id+"/stream", "", false)
	defer st.Close()
	if ev := st.MustNext(); !tt.TaskState("idle")(ev) { // not held back by a buffer
		t.Fatalf("first event %+v", ev)
	}
	if gzipped {
		// Go's client asks for gzip and unpacks it; asked for
		// explicitly, the answer stays packed and shows how it came.
		req, _ := http.NewRequest("GET", base+"/api/sessions/"+id+"/messages", nil)
		req.Header.Set("Authorization", "Bearer tok")
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := c.HTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Header.Get("Content-Encoding") != "gzip" {
			t.Errorf("the proxy did not compress: Content-Encoding %q", resp.Header.Get("Content-Encoding"))
		}
	}
	runAndResume(t, c, id, st)
	big := `{"input":"` + strings.Repeat("a", api.MaxBody) + `"}`
	if status, body := c.Do("POST", "/api/sessions/"+id+"/tasks", big, "Content-Type", "application/json"); status != 413 || !strings.Contains(string(body), "body_too_large") {
		t.Errorf("a body over 1 MiB: %d %.200s, want the server's 413", status, body)
	}
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// runProxy starts a proxy process and returns once it accepts connections
// on port; it is killed when the test ends.
func runProxy(t *testing.T, dir string, port int, bin string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	log, err := os.Create(filepath.Join(dir, "proxy.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited; log.Close() })
	// Ready when it accepts: a process reports that nowhere else.
	for deadline := time.Now().Add(tt.Safety); ; {
		if conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			conn.Close()
			return
		}
		select {
		case <-exited:
			out, _ := os.ReadFile(log.Name())
			t.Fatalf("%s exited: %s", bin, out)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(log.Name())
			t.Fatalf("%s does not accept on port %d: %s", bin, port, out)
		}
	}
}
