//go:build js && wasm

// Command front is the stateless front Worker of the Cloudflare target,
// written in Go with github.com/syumai/workers: it checks the bearer token
// (the FLOE_TOKEN secret), routes /api/sessions/{id}/... to the Durable
// Object of that id (binding SESSIONS) and streams its answer back, and
// keeps the session list in the object named "index". FLOE_ORIGINS lists
// the origins CORS allows.
package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall/js"
	"time"

	"github.com/floehq/floe/transport/cors"
	"github.com/floehq/floe/transport/request"
	"github.com/syumai/workers"
	"github.com/syumai/workers/cloudflare"
)

func main() { workers.Serve(http.HandlerFunc(handle)) }

// indexName names the object that keeps the session list; no session may
// take it as its id, since a session's object is named by its id.
const indexName = "index"

func handle(w http.ResponseWriter, r *http.Request) {
	// A panic (the JavaScript glue refusing a request, say) is a JSON 500,
	// not a plain "Internal Server Error" and a Go program that exited.
	defer func() {
		if v := recover(); v != nil {
			msg := "the front Worker failed"
			if e, ok := v.(error); ok {
				msg += ": " + e.Error()
			} else if s, ok := v.(string); ok {
				msg += ": " + s
			}
			fail(w, 500, "internal", msg)
		}
	}()
	if r.Body == nil {
		r.Body = http.NoBody
	}
	// FLOE_ORIGINS: the origins CORS allows, comma-separated ("*" any), as
	// the native server's --origin; a page of another origin is refused
	// (403), as there, and can read why.
	origins := cors.ParseOrigins(cloudflare.Getenv("FLOE_ORIGINS"))
	if msg := cors.Refused(r, origins); msg != "" {
		if cors.Refuse(w, r) {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		fail(w, 403, "origin_not_allowed", msg+": add "+r.Header.Get("Origin")+" to FLOE_ORIGINS to allow pages of that origin")
		return
	}
	cors.Headers(w, r, origins)
	if cors.Preflight(r) {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if tok := cloudflare.Getenv("FLOE_TOKEN"); tok != "" {
		if !request.Authorized(r.Header.Get("Authorization"), tok) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="floe"`)
			fail(w, 401, "unauthorized", "missing or wrong bearer token")
			return
		}
	}
	ns, err := cloudflare.NewDurableObjectNamespace("SESSIONS")
	if err != nil {
		fail(w, 500, "internal", "no SESSIONS binding: "+err.Error())
		return
	}
	path := r.URL.Path
	if request.DotSegment(path) {
		// workerd resolves them on the way to the object: a path of one
		// session would reach another path of its object (its /_index/
		// routes, or another session's), which the front never judged.
		fail(w, 404, "not_found", request.NoRoute(path))
		return
	}
	switch {
	case path == "/api/sessions" && r.Method == http.MethodGet:
		relay(w, ns, indexName, mustRequest("GET", "/_index/list", nil))
	case path == "/api/sessions" && r.Method == http.MethodPost:
		create(w, r, ns)
	case path == "/api/sessions":
		w.Header().Set("Allow", "GET, POST")
		fail(w, 405, "method_not_allowed", "method not allowed; use GET, POST")
	case strings.HasPrefix(path, "/api/sessions/"):
		id, _, _ := strings.Cut(strings.TrimPrefix(path, "/api/sessions/"), "/")
		if path == "/api/sessions/" {
			fail(w, 404, "not_found", request.NoRoute(path))
			return
		}
		if id == "" || id == indexName {
			fail(w, 404, "session_not_found", "no session "+strconv.Quote(id))
			return
		}
		body, ok := readBody(w, r)
		if !ok {
			return
		}
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			body = nil // a Request of these methods may carry none (the native server ignores it)
		}
		req := mustRequest(r.Method, r.URL.RequestURI(), body)
		// The Origin was judged here (FLOE_ORIGINS); the object, at another
		// host, would refuse a page's.
		for k, vs := range r.Header {
			if k != "Authorization" && k != "Content-Length" && k != "Origin" && (body != nil || k != "Content-Type") {
				req.Header[k] = vs
			}
		}
		deleting := r.Method == http.MethodDelete && path == "/api/sessions/"+id
		if deleting {
			// Marked first: a Worker cut off after the object's 204 leaves
			// the mark, and the next list takes the row off (index).
			index(ns, "/_index/deleting", id)
		}
		status := relay(w, ns, id, req)
		if deleting && status == 204 {
			index(ns, "/_index/remove", id)
			// A session made again under the id between the object's 204
			// and the remove found it still listed, and the remove took it
			// off: asked after the remove, the object says whether one is.
			if asked(ns, id) == http.StatusOK {
				index(ns, "/_index/add", id)
			}
		}
	default:
		fail(w, 404, "not_found", request.NoRoute(path))
	}
}

// create makes a session: an id (the client's or a new one) is created in
// its object, then added to the index.
func create(w http.ResponseWriter, r *http.Request, ns *cloudflare.DurableObjectNamespace) {
	var req struct {
		ID           string `json:"id"`
		ApprovalMode string `json:"approvalMode"`
	}
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	if !request.Blank(body) {
		// As the native server (transport/api): a body is JSON.
		if msg := request.ContentType(r.Header.Get("Content-Type")); msg != "" {
			fail(w, 415, "unsupported_media_type", msg)
			return
		}
		if msg := request.Decode(body, &req); msg != "" {
			fail(w, 400, "bad_json", msg)
			return
		}
	}
	if req.ID == indexName {
		fail(w, 400, "bad_request", `id: "index" is reserved: it names the object that keeps the session list`)
		return
	}
	if req.ID == "" {
		req.ID = newID(time.Now())
	}
	fwd, _ := json.Marshal(req)
	// Marked first, a row the list does not show yet: a Worker cut off
	// after the object's 201 leaves the mark, and the next list asks the
	// object and shows the session (index).
	index(ns, "/_index/making", req.ID)
	switch relay(w, ns, req.ID, mustRequest("POST", "/api/sessions", fwd)) {
	case http.StatusCreated:
		index(ns, "/_index/add", req.ID)
		// A DELETE that came between the object's 201 and the add took
		// the id off the list before it was there: asked after the add,
		// the object says whether the session still is, and the list
		// keeps no session that is not (a DELETE of it would answer 404).
		if asked(ns, req.ID) == http.StatusNotFound {
			index(ns, "/_index/remove", req.ID)
		}
	case http.StatusConflict: // made before: listed, if it was not
		index(ns, "/_index/add", req.ID)
	case http.StatusBadGateway: // the object may have made it: the next list asks
	default: // refused (a bad id, a configuration): no session, no mark
		index(ns, "/_index/unmade", req.ID)
	}
}

// asked is the status the object of id answers for its session: 200, 404
// when it has none, 0 when it could not be asked (which neither takes an
// id off the list nor puts one back).
func asked(ns *cloudflare.DurableObjectNamespace, id string) int {
	s, err := stub(ns, id)
	if err != nil {
		return 0
	}
	resp, err := s.Fetch(mustRequest("GET", "/api/sessions/"+url.PathEscape(id), nil))
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// readBody reads r's body, up to 1 MiB; a larger one is 413, another
// failure 400, as on the native server.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			fail(w, 413, "body_too_large", "request body exceeds 1 MiB")
		} else {
			fail(w, 400, "bad_request", "reading body: "+err.Error())
		}
		return nil, false
	}
	return body, true
}

func newID(now time.Time) string {
	var b [4]byte
	rand.Read(b[:])
	return "session-" + now.UTC().Format("2006-01-02-15-04-05") + "-" + hex.EncodeToString(b[:])
}

// mustRequest makes a request to an object; a Request may carry no body
// with GET or HEAD, so an empty body is none.
func mustRequest(method, uri string, body []byte) *http.Request {
	if len(body) == 0 {
		req, _ := http.NewRequest(method, "https://session.floe"+uri, nil)
		return req
	}
	req, _ := http.NewRequest(method, "https://session.floe"+uri, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	return req
}

func stub(ns *cloudflare.DurableObjectNamespace, name string) (*cloudflare.DurableObjectStub, error) {
	return ns.Get(ns.IdFromName(name))
}

// relay sends req to the object of name and streams its answer to w; it
// returns the status.
func relay(w http.ResponseWriter, ns *cloudflare.DurableObjectNamespace, name string, req *http.Request) int {
	s, err := stub(ns, name)
	if err == nil {
		var resp *http.Response
		if resp, err = s.Fetch(req); err == nil {
			defer resp.Body.Close()
			for k, vs := range resp.Header {
				w.Header()[k] = vs
			}
			w.WriteHeader(resp.StatusCode)
			copyFlushing(w, resp.Body)
			return resp.StatusCode
		}
	}
	fail(w, 502, "object_failed", err.Error())
	return 502
}

func copyFlushing(w http.ResponseWriter, r io.Reader) {
	defer func() { recover() }() // a read of a stream the client abandoned can panic in the JS glue
	buf := make([]byte, 32<<10)
	fl, _ := w.(http.Flusher)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if fl != nil {
				fl.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}

// index adds id to the session list or removes it, or marks its row as
// being made or deleted (path: session_object.mjs's index). The request's
// answer is already given, so a failure goes to the Worker's log
// (console.error), naming the session and why: the list then shows a
// session that is not, or not one that is.
func index(ns *cloudflare.DurableObjectNamespace, path, id string) {
	body, _ := json.Marshal(map[string]string{"id": id})
	why := ""
	if s, err := stub(ns, indexName); err != nil {
		why = err.Error()
	} else if resp, err := s.Fetch(mustRequest("POST", path, body)); err != nil {
		why = err.Error()
	} else {
		if resp.StatusCode != http.StatusNoContent {
			var e struct {
				Error struct{ Message string }
			}
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
			if json.Unmarshal(b, &e) == nil && e.Error.Message != "" {
				why = e.Error.Message
			} else {
				why = "the object answered " + strconv.Itoa(resp.StatusCode)
			}
		}
		resp.Body.Close()
	}
	if why != "" {
		op := map[string]string{"/_index/add": "adding", "/_index/remove": "removing", "/_index/making": "marking as made", "/_index/deleting": "marking as deleted", "/_index/unmade": "unmarking"}[path]
		js.Global().Get("console").Call("error", "floe: the session list: "+op+" "+strconv.Quote(id)+": "+why)
	}
}

func fail(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store") // as the API's own answers
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": code, "message": msg}})
	w.Write(b)
}
