package playground

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// A provider's base URL is fetched from the page, so the page's
// Content-Security-Policy decides which ones it may reach (its connect-src,
// else its default-src). The browser refuses a blocked fetch before any
// request leaves, with the same error as an unreachable server; the
// functions here tell the two apart from the policy the page was served
// with, and refuse at once what can never be fetched.

// CheckBaseURL refuses a provider base URL that the page cannot fetch
// whatever the server: not an absolute http:// or https:// URL. An empty
// URL is accepted (the provider's own API).
func CheckBaseURL(raw string) error {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return errors.New("Settings: the base URL " + quote(raw) + " is not an absolute URL; give one such as http://127.0.0.1:11434/v1.")
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		return errors.New("Settings: the base URL " + quote(raw) + " is not http:// or https://; the page can only fetch HTTP(S), e.g. http://127.0.0.1:11434/v1.")
	}
	if u.Host == "" {
		return errors.New("Settings: the base URL " + quote(raw) + " names no host, e.g. http://127.0.0.1:11434/v1.")
	}
	return nil
}

// CheckKey refuses an API key an HTTP header cannot carry: one holding a
// control character (a tab or a line break pasted with it) or a character
// above U+00FF (an ellipsis of a key shown cut short, a typographic quote),
// which fetch refuses at every request. The message names the character and
// where it is, never the key.
func CheckKey(key string) error {
	i := 0
	for _, r := range key {
		i++
		var what string
		switch {
		case r == '\t':
			what = "a tab"
		case r == '\n' || r == '\r':
			what = "a line break"
		case r < 0x20 || r == 0x7f:
			what = fmt.Sprintf("a control character (U+%04X)", r)
		case r > 0xff:
			what = fmt.Sprintf("%s (U+%04X)", quote(string(r)), r)
		default:
			continue
		}
		return fmt.Errorf("Settings: the API key holds %s at character %d, which an HTTP header cannot carry; paste the key again.", what, i)
	}
	return nil
}

// CheckConnect refuses, for the settings, a provider base URL that one of
// policies (the page's, as for [ConnectBlocked]) does not let the page at
// pageURL fetch, saying which addresses it may reach and what to do. It
// judges an http(s) URL that [CheckBaseURL] accepts; nil for an empty one.
func CheckConnect(policies []string, pageURL, raw string) error {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil
	}
	if msg, blocked := ConnectBlocked(policies, pageURL, raw); blocked {
		return errors.New("Settings: " + msg)
	}
	return nil
}

func quote(s string) string { return "\u201c" + s + "\u201d" }

// SplitPolicies splits a Content-Security-Policy header value, which may
// hold several policies separated by commas, into its policies.
func SplitPolicies(header string) []string {
	var out []string
	for _, p := range strings.Split(header, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// ConnectBlocked reports whether one of policies (each one serialized
// policy, from the page's header or a meta element) blocks a fetch of
// target from a page at pageURL and, if so, a message that says so, which
// addresses that policy lets the page reach, and what to do. A policy with
// neither connect-src nor default-src blocks nothing; an unparsable target
// or page URL is not judged (false).
func ConnectBlocked(policies []string, pageURL, target string) (msg string, blocked bool) {
	page, err := url.Parse(pageURL)
	if err != nil {
		return "", false
	}
	u, err := url.Parse(target)
	if err != nil || u.Scheme == "" {
		return "", false
	}
	for _, p := range policies {
		sources, ok := connectSources(p)
		if ok && !admits(sources, u, page) {
			return blockedMessage(target, sources, page), true
		}
	}
	return "", false
}

func admits(sources []string, u, page *url.URL) bool {
	for _, s := range sources {
		if sourceMatches(s, u, page) {
			return true
		}
	}
	return false
}

// blockedMessage says that the policy whose fetch sources are sources
// blocks target, which addresses it admits, and what would work.
func blockedMessage(target string, sources []string, page *url.URL) string {
	msg := "this page's Content-Security-Policy (connect-src) does not let it fetch " + target +
		": the page may reach " + describeSources(sources, page) + "."
	remote, _ := url.Parse("https://model.example.com/v1")
	loopback, _ := url.Parse("http://127.0.0.1:11434/v1")
	switch https, local := admits(sources, remote, page), admits(sources, loopback, page); {
	case https && local:
		msg += " Serve the model over HTTPS, or forward its port to this machine (ssh -L 11434:127.0.0.1:11434 host) and use http://127.0.0.1:11434/v1."
	case https:
		msg += " Serve the model over HTTPS."
	case local:
		msg += " Forward the model's port to this machine (ssh -L 11434:127.0.0.1:11434 host) and use http://127.0.0.1:11434/v1."
	}
	return msg
}

// connectSources returns the source list that governs fetches in policy:
// connect-src's, else default-src's (the first occurrence of each counts).
func connectSources(policy string) ([]string, bool) {
	var def []string
	haveDef := false
	seen := map[string]bool{}
	for _, d := range strings.Split(policy, ";") {
		f := strings.Fields(d)
		if len(f) == 0 {
			continue
		}
		name := strings.ToLower(f[0])
		if seen[name] {
			continue
		}
		seen[name] = true
		switch name {
		case "connect-src":
			return f[1:], true
		case "default-src":
			def, haveDef = f[1:], true
		}
	}
	return def, haveDef
}

func defaultPort(scheme string) string {
	switch scheme {
	case "http", "ws":
		return "80"
	case "https", "wss":
		return "443"
	}
	return ""
}

// schemeMatches is CSP's scheme-part match: a secure upgrade is allowed
// (http: admits https, ws: admits wss).
func schemeMatches(expr, scheme string) bool {
	switch expr {
	case "http":
		return scheme == "http" || scheme == "https"
	case "ws":
		return scheme == "ws" || scheme == "wss"
	}
	return expr == scheme
}

// sourceMatches matches one source expression against u for a page at
// page (CSP Level 3, "Does url match expression in origin"; path parts are
// matched as prefixes).
func sourceMatches(src string, u, page *url.URL) bool {
	scheme := strings.ToLower(u.Scheme)
	lower := strings.ToLower(src)
	switch {
	case lower == "'none'":
		return false
	case lower == "*":
		return scheme == "http" || scheme == "https" || scheme == "ws" || scheme == "wss" || scheme == strings.ToLower(page.Scheme)
	case lower == "'self'":
		ps := strings.ToLower(page.Scheme)
		if !strings.EqualFold(u.Hostname(), page.Hostname()) {
			return false
		}
		port, pport := u.Port(), page.Port()
		if port == "" {
			port = defaultPort(scheme)
		}
		if pport == "" {
			pport = defaultPort(ps)
		}
		if scheme == ps && port == pport {
			return true
		}
		// A secure upgrade of the page's own origin.
		return ps == "http" && (scheme == "https" || scheme == "wss") && (port == "443" || port == pport)
	case strings.HasPrefix(lower, "'"):
		return false // nonces, hashes, keywords that admit no URL
	case strings.HasSuffix(lower, ":") && !strings.Contains(lower, "/"):
		return schemeMatches(strings.TrimSuffix(lower, ":"), scheme)
	}
	rest := lower
	exprScheme := ""
	if i := strings.Index(rest, "://"); i >= 0 {
		exprScheme, rest = rest[:i], rest[i+3:]
	}
	hostPort, path := rest, ""
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		hostPort, path = rest[:i], rest[i:]
	}
	host, port := hostPort, ""
	if i := strings.LastIndexByte(hostPort, ':'); i >= 0 && !strings.HasSuffix(hostPort, "]") {
		host, port = hostPort[:i], hostPort[i+1:]
	}
	if exprScheme != "" {
		if !schemeMatches(exprScheme, scheme) {
			return false
		}
	} else {
		ps := strings.ToLower(page.Scheme)
		if !(scheme == ps || ps == "http" && (scheme == "https" || scheme == "ws" || scheme == "wss") || ps == "https" && scheme == "wss") {
			return false
		}
	}
	uh := strings.ToLower(u.Hostname())
	switch {
	case host == "*":
	case strings.HasPrefix(host, "*."):
		if !strings.HasSuffix(uh, host[1:]) {
			return false
		}
	default:
		if uh != strings.Trim(host, "[]") {
			return false
		}
	}
	if port != "*" {
		up := u.Port()
		if up == "" {
			up = defaultPort(scheme)
		}
		want := port
		if want == "" {
			want = defaultPort(exprScheme)
			if want == "" {
				want = defaultPort(scheme)
			}
		}
		// An http port-less or :80 expression admits https on 443.
		if up != want && !(want == "80" && up == "443" && scheme == "https") {
			return false
		}
	}
	if path != "" && path != "/" {
		p := u.EscapedPath()
		if strings.HasSuffix(path, "/") {
			return strings.HasPrefix(p, path)
		}
		return p == path
	}
	return true
}

// describeSources says in words which addresses a source list admits.
func describeSources(sources []string, page *url.URL) string {
	var parts []string
	for _, s := range sources {
		lower := strings.ToLower(s)
		switch {
		case lower == "'self'":
			parts = append(parts, "this page's own origin ("+page.Scheme+"://"+page.Host+")")
		case lower == "*":
			parts = append(parts, "any http or https address")
		case lower == "https:":
			parts = append(parts, "any https:// address")
		case lower == "http:":
			parts = append(parts, "any http:// or https:// address")
		case strings.HasPrefix(lower, "'"):
		case strings.HasSuffix(lower, ":*"):
			parts = append(parts, strings.TrimSuffix(s, ":*")+" on any port")
		default:
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return "no address at all"
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
