package api

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/floehq/floe/transport"
	"github.com/floehq/floe/transport/cors"
	"github.com/floehq/floe/transport/host"
	"github.com/floehq/floe/transport/request"
)

// MaxBody bounds a request body (1 MiB).
const MaxBody = 1 << 20

// Options configure the handler.
type Options struct {
	// Token, when non-empty, is required as "Authorization: Bearer <Token>"
	// on every route (the scheme in any case).
	Token string
	// Origins lists the origins allowed by CORS ("*" allows any); empty = no
	// CORS headers. A request whose Origin header names another origin than
	// these and the server's own is refused (403), whatever its method.
	Origins []string
	// WriteTimeout bounds each write to a stream (at most 16 KiB) and each
	// flush: a client that does not take the bytes in time, because it
	// stopped reading, is disconnected. 0 = DefaultWriteTimeout; negative =
	// no bound.
	WriteTimeout time.Duration
	// Metrics, when set, counts the streams open and refused and the
	// events replayed (nil: none).
	Metrics *transport.Metrics
}

// Handler serves the API of reg.
type Handler struct {
	reg  *host.Registry
	opts Options
}

// New returns the handler.
func New(reg *host.Registry, opts Options) *Handler { return &Handler{reg: reg, opts: opts} }

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if msg := cors.Refused(r, h.opts.Origins); msg != "" {
		if cors.Refuse(w, r) {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		origin := r.Header.Get("Origin")
		writeError(w, http.StatusForbidden, "origin_not_allowed", msg+": start it with --origin "+origin+" to allow pages of that origin")
		return
	}
	cors.Headers(w, r, h.opts.Origins)
	if cors.Preflight(r) {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if !h.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="floe"`)
		writeError(w, http.StatusUnauthorized, "unauthorized", "missing or wrong bearer token")
		return
	}
	h.route(w, r)
}

func (h *Handler) authorized(r *http.Request) bool {
	if h.opts.Token == "" {
		return true
	}
	return request.Authorized(r.Header.Get("Authorization"), h.opts.Token)
}

// route dispatches /api/... paths.
func (h *Handler) route(w http.ResponseWriter, r *http.Request) {
	parts, ok := segments(r.URL.EscapedPath())
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", request.NoRoute(r.URL.Path))
		return
	}
	switch {
	case len(parts) == 1 && parts[0] == "events":
		if method(w, r, http.MethodGet) {
			h.userStream(w, r)
		}
	case len(parts) == 1 && parts[0] == "sessions":
		switch r.Method {
		case http.MethodGet:
			h.list(w, r)
		case http.MethodPost:
			h.create(w, r)
		default:
			notAllowed(w, "GET, POST")
		}
	case parts[0] == "sessions" && len(parts) == 2 && parts[1] != "":
		switch r.Method {
		case http.MethodGet:
			h.withHost(w, r, parts[1], h.info)
		case http.MethodPatch:
			h.withHost(w, r, parts[1], h.patch)
		case http.MethodDelete:
			h.delete(w, r, parts[1])
		default:
			notAllowed(w, "GET, PATCH, DELETE")
		}
	case parts[0] == "sessions" && len(parts) == 3:
		h.sessionRoute(w, r, parts[1], parts[2])
	case parts[0] == "sessions" && len(parts) == 4 && parts[2] == "approvals" && parts[3] != "":
		if method(w, r, http.MethodPost) {
			h.withHost(w, r, parts[1], func(w http.ResponseWriter, r *http.Request, s *host.Host) {
				h.approve(w, r, s, parts[3])
			})
		}
	default:
		writeError(w, http.StatusNotFound, "not_found", request.NoRoute(r.URL.Path))
	}
}

// segments returns the segments of an escaped path /api/..., each
// unescaped on its own, or false for another path. A "/" sent escaped
// (%2F) stays in its segment: a model may put one in a tool call id, which
// the unescaped path split in two (no route matched, and the run waited
// for its decision for ever), and a session segment holding one names no
// session, not the one before the "/". Escaped letters are the letters, in
// "api" too.
func segments(escaped string) ([]string, bool) {
	parts := strings.Split(escaped, "/")
	for i, seg := range parts {
		u, err := url.PathUnescape(seg)
		if err != nil {
			return nil, false
		}
		parts[i] = u
	}
	// "api" is read unescaped as the others are: /%61pi/ is /api/.
	if len(parts) < 3 || parts[0] != "" || parts[1] != "api" {
		return nil, false
	}
	return parts[2:], true
}

type hostHandler func(http.ResponseWriter, *http.Request, *host.Host)

var sessionRoutes = map[string]struct {
	method string
	fn     func(*Handler) hostHandler
}{
	"stream":    {http.MethodGet, func(h *Handler) hostHandler { return h.stream }},
	"messages":  {http.MethodGet, func(h *Handler) hostHandler { return h.messages }},
	"tasks":     {http.MethodPost, func(h *Handler) hostHandler { return h.task }},
	"steer":     {http.MethodPost, func(h *Handler) hostHandler { return h.steer }},
	"abort":     {http.MethodPost, func(h *Handler) hostHandler { return h.abort }},
	"retry-now": {http.MethodPost, func(h *Handler) hostHandler { return h.retryNow }},
	"compact":   {http.MethodPost, func(h *Handler) hostHandler { return h.compact }},
}

func (h *Handler) sessionRoute(w http.ResponseWriter, r *http.Request, id, action string) {
	rt, ok := sessionRoutes[action]
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", request.NoRoute(r.URL.Path))
		return
	}
	if method(w, r, rt.method) {
		h.withHost(w, r, id, rt.fn(h))
	}
}

func (h *Handler) withHost(w http.ResponseWriter, r *http.Request, id string, fn hostHandler) {
	s, err := h.reg.Get(r.Context(), id)
	if err != nil {
		writeErr(w, err)
		return
	}
	fn(w, r, s)
}

// method reports whether r uses the route's one method, else answers 405.
// HEAD is refused like any other method: no route of TRANSPORT.md §6 takes
// it, and on a stream it would subscribe and never end.
func method(w http.ResponseWriter, r *http.Request, want string) bool {
	if r.Method == want {
		return true
	}
	notAllowed(w, want)
	return false
}

func notAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "method not allowed; use "+allow)
}
