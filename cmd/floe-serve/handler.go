package main

import (
	"net/http"
	"path"
	"strings"
)

// contentTypes fixes the MIME types that matter for Floe instead of relying
// on the host's mime.types, which differs between machines.
var contentTypes = map[string]string{
	".wasm": "application/wasm",
	".mjs":  "text/javascript; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".json": "application/json",
	".map":  "application/json",
	".ts":   "text/plain; charset=utf-8",
	".md":   "text/markdown; charset=utf-8",
	".svg":  "image/svg+xml",
	".png":  "image/png",
}

// CSP is the Content-Security-Policy of every page floe-serve serves
// (outside /tests/): scripts only from the origin, WebAssembly compiled
// from them, no inline script, no eval, no plugins, no framing. connect-src
// admits HTTPS and loopback servers so that the playground can reach the
// model provider its user chose (api.openai.com, api.anthropic.com, or a
// local Ollama / llama.cpp / LM Studio).
const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self' https: http://127.0.0.1:* http://localhost:*; worker-src 'self'; object-src 'none'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// FrameCSP is the policy of the playground's JavaScript sandbox
// (eval-frame.html, loaded in a frame for each run_js call): sandbox
// allow-scripts gives the document an opaque origin (none of the
// playground origin's storage, cookies or page in reach, no popups, no
// navigation of the page); it runs its own inline script (pinned by hash)
// and workers from blob: URLs, which inherit this policy: they may
// evaluate the code they are sent and do nothing else — no network, no
// imports. Only a page of the playground's origin may frame it.
const FrameCSP = "default-src 'none'; script-src 'sha256-9DbCcHIO3g7rc63p9gzd3JPaba/WXskqqPvcTQQoADk=' 'unsafe-eval'; " +
	"worker-src blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'; sandbox allow-scripts"

// cspFor returns the policy for a request path: FrameCSP for the sandbox
// frame, none under /tests/ (test fixtures stage their cases with inline
// scripts), CSP for everything else.
func cspFor(p string) string {
	switch {
	case path.Base(p) == "eval-frame.html":
		return FrameCSP
	case strings.HasPrefix(p, "/tests/"):
		return ""
	}
	return CSP
}

// Handler serves the files under dir. Every response carries
// Cache-Control: no-cache, so the browser revalidates (a cheap 304 when the
// file did not change) and never runs a stale floe.wasm after a rebuild.
// Paths with a segment starting with "." (such as .npmrc) are not served.
func Handler(dir string) http.Handler {
	files := http.FileServer(http.Dir(dir))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		for _, seg := range strings.Split(r.URL.Path, "/") {
			if strings.HasPrefix(seg, ".") {
				http.NotFound(w, r)
				return
			}
		}
		h := w.Header()
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Content-Type-Options", "nosniff")
		if csp := cspFor(path.Clean(r.URL.Path)); csp != "" {
			h.Set("Content-Security-Policy", csp)
		}
		if ct, ok := contentTypes[path.Ext(r.URL.Path)]; ok {
			h.Set("Content-Type", ct)
		}
		files.ServeHTTP(w, r)
	})
}
