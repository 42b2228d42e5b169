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
		if ct, ok := contentTypes[path.Ext(r.URL.Path)]; ok {
			h.Set("Content-Type", ct)
		}
		files.ServeHTTP(w, r)
	})
}
