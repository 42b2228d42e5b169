package playground

import (
	"strings"
	"testing"
)

func TestCheckBaseURL(t *testing.T) {
	for _, ok := range []string{"", "  ", "http://127.0.0.1:11434/v1", "https://api.openai.com/v1", "HTTP://192.168.1.50:11434/v1"} {
		if err := CheckBaseURL(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []struct{ url, want string }{
		{"ftp://127.0.0.1:8852/v1", "is not http:// or https://"},
		{"file:///etc/passwd", "is not http:// or https://"},
		{"javascript:alert(1)", "is not http:// or https://"},
		{"127.0.0.1:11434/v1", "is not an absolute URL"},
		{"/v1", "is not an absolute URL"},
		{"http:///v1", "names no host"},
	} {
		err := CheckBaseURL(bad.url)
		if err == nil || !strings.Contains(err.Error(), bad.want) || !strings.HasPrefix(err.Error(), "Settings: ") {
			t.Errorf("%q: %v, want an error with %q", bad.url, err, bad.want)
		}
	}
}

// The policy floe-serve sends (cmd/floe-serve).
const servePolicy = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self' https: http://127.0.0.1:* http://localhost:*; worker-src 'self'; object-src 'none'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func TestConnectBlocked(t *testing.T) {
	page := "http://127.0.0.1:8080/"
	for _, c := range []struct {
		policies []string
		target   string
		blocked  bool
	}{
		{[]string{servePolicy}, "http://127.0.0.1:11434/v1/chat/completions", false},
		{[]string{servePolicy}, "http://localhost:1234/v1/chat/completions", false},
		{[]string{servePolicy}, "https://api.openai.com/v1/chat/completions", false},
		{[]string{servePolicy}, "https://192.168.1.50:11434/v1/chat/completions", false},
		{[]string{servePolicy}, "http://127.0.0.1:8080/static/x", false},
		{[]string{servePolicy}, "http://192.168.1.50:11434/v1/chat/completions", true},
		{[]string{servePolicy}, "http://ollama.lan/v1/chat/completions", true},
		{[]string{servePolicy}, "ftp://127.0.0.1:8852/v1/chat/completions", true},
		{nil, "http://192.168.1.50:11434/v1", false},
		{[]string{"script-src 'self'"}, "http://192.168.1.50:11434/v1", false},
		{[]string{"default-src 'self'"}, "http://192.168.1.50:11434/v1", true},
		{[]string{"default-src 'self'"}, "http://127.0.0.1:8080/v1", false},
		{[]string{"default-src *"}, "http://192.168.1.50:11434/v1", false},
		{[]string{"connect-src http://*.lan:11434"}, "http://ollama.lan:11434/v1", false},
		{[]string{"connect-src http://*.lan:11434"}, "http://ollama.lan:11435/v1", true},
		{[]string{"connect-src example.com"}, "https://example.com/v1", false},
		{[]string{"connect-src 'none'"}, "http://127.0.0.1:8080/v1", true},
		// Two policies (a header and a meta element): both must allow.
		{[]string{servePolicy, "connect-src https:"}, "http://127.0.0.1:11434/v1", true},
		{SplitPolicies("connect-src *, connect-src https:"), "http://127.0.0.1:11434/v1", true},
	} {
		msg, blocked := ConnectBlocked(c.policies, page, c.target)
		if blocked != c.blocked {
			t.Errorf("%q under %q: blocked %v, want %v (%s)", c.target, c.policies, blocked, c.blocked, msg)
		}
	}

	msg, _ := ConnectBlocked([]string{servePolicy}, page, "http://192.168.1.50:11434/v1/chat/completions")
	for _, want := range []string{
		"Content-Security-Policy (connect-src) does not let it fetch http://192.168.1.50:11434/v1/chat/completions",
		"this page's own origin (http://127.0.0.1:8080), any https:// address, http://127.0.0.1 on any port and http://localhost on any port",
		"Serve the model over HTTPS, or forward its port to this machine",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q\nlacks %q", msg, want)
		}
	}
	msg, _ = ConnectBlocked([]string{"default-src 'self'"}, page, "https://api.openai.com/v1")
	if strings.Contains(msg, "HTTPS") || strings.Contains(msg, "forward") || !strings.Contains(msg, "may reach this page's own origin (http://127.0.0.1:8080).") {
		t.Errorf("'self' only: %q", msg)
	}
}

func TestCheckConnect(t *testing.T) {
	page := "http://127.0.0.1:8080/"
	for _, c := range []struct {
		name     string
		policies []string
		url      string
		want     []string // "" parts: nil error
	}{
		{"loopback over http", []string{servePolicy}, "http://127.0.0.1:11434/v1", nil},
		{"localhost over http", []string{servePolicy}, " http://localhost:1234/v1 ", nil},
		{"anywhere over https", []string{servePolicy}, "https://192.168.1.50:11434/v1", nil},
		{"empty: the provider's own API", []string{servePolicy}, "", nil},
		{"no policy", nil, "http://192.168.1.50:11434/v1", nil},
		{"a LAN address over http", []string{servePolicy}, "http://192.168.1.50:11434/v1", []string{
			"Settings: this page's Content-Security-Policy (connect-src) does not let it fetch http://192.168.1.50:11434/v1",
			"may reach this page's own origin (http://127.0.0.1:8080), any https:// address",
			"Serve the model over HTTPS, or forward its port to this machine",
		}},
		{"a meta policy stricter than the header", []string{servePolicy, "connect-src 'self'"}, "https://api.openai.com/v1", []string{
			"does not let it fetch https://api.openai.com/v1: the page may reach this page's own origin (http://127.0.0.1:8080).",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := CheckConnect(c.policies, page, c.url)
			if c.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted, want a refusal")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nlacks %q", err, w)
				}
			}
		})
	}
}

// A key an HTTP header cannot carry is refused when the settings are
// saved, naming the character and where it is, never the key (fetch
// refused it at every request, naming the Authorization header only).
func TestCheckKey(t *testing.T) {
	for _, ok := range []string{"", "sk-proj-abc_DEF-123", "sk ant", "clé-é"} {
		if err := CheckKey(ok); err != nil {
			t.Errorf("CheckKey(%q) = %v", ok, err)
		}
	}
	for key, want := range map[string]string{
		"sk-abc\t":    "a tab at character 7",
		"sk\nabc":     "a line break at character 3",
		"sk\x00":      "a control character (U+0000) at character 3",
		"sk-proj-ab…": "“…” (U+2026) at character 11",
		"“sk-abc”":    "““” (U+201C) at character 1",
	} {
		err := CheckKey(key)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "API key") {
			t.Errorf("CheckKey(%q) = %v, want it to name %q", key, err, want)
			continue
		}
		if strings.Contains(err.Error(), "sk") {
			t.Errorf("CheckKey(%q) shows the key: %v", key, err)
		}
	}
}
