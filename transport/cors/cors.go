// Package cors writes the CORS headers of the session API, for the native
// server (transport/api) and the Cloudflare front Worker alike.
package cors

import (
	"net/http"
	"strings"
)

// Headers allows r's Origin when origins lists it ("*" allows any): it
// sets Access-Control-Allow-Origin, the methods and headers the API takes
// (with, on a preflight, the other headers it asks for, which the API
// ignores), and, for an origin the list names,
// Access-Control-Allow-Credentials.
// With no origins, or a request without Origin, it writes nothing.
func Headers(w http.ResponseWriter, r *http.Request, origins []string) {
	origin := r.Header.Get("Origin")
	if origin == "" || len(origins) == 0 {
		return
	}
	allowed, named := false, false
	for _, o := range origins {
		if o == origin {
			allowed, named = true, true
			break
		}
		allowed = allowed || o == "*"
	}
	w.Header().Add("Vary", "Origin")
	if Preflight(r) {
		w.Header().Add("Vary", "Access-Control-Request-Headers")
	}
	if !allowed {
		return
	}
	hd := w.Header()
	hd.Set("Access-Control-Allow-Origin", origin)
	if named {
		// A page of an origin named in the list may send its cookies
		// (new EventSource(url, {withCredentials: true}), fetch with
		// credentials: "include"), as it must to pass a proxy in front
		// that signs its users in by a cookie; the browser refused the
		// answer without this. The API reads no cookie, and "*" does
		// not allow it: any page could then ride such a proxy's cookie.
		hd.Set("Access-Control-Allow-Credentials", "true")
	}
	hd.Set("Access-Control-Allow-Methods", "GET, POST, PATCH, DELETE, OPTIONS")
	hd.Set("Access-Control-Allow-Headers", allowHeaders(r))
	hd.Set("Access-Control-Max-Age", "600")
}

// baseHeaders are the request headers the API reads.
const baseHeaders = "Authorization, Content-Type, Last-Event-ID"

// allowHeaders answers a preflight's Access-Control-Request-Headers: the
// headers the API reads, and the others the page asked for, which the API
// ignores: a page whose fetch adds its tracing headers (traceparent,
// sentry-trace, as an error tracker's instrumentation does) was refused
// by its browser. Only names that are HTTP tokens are echoed, at most 32
// of them, so an answer cannot carry what the request smuggled in.
func allowHeaders(r *http.Request) string {
	asked := r.Header.Get("Access-Control-Request-Headers")
	if asked == "" {
		return baseHeaders
	}
	out := baseHeaders
	n := 0
	for _, h := range strings.Split(asked, ",") {
		// A token first, then in lower case: strings.ToLower made names
		// of other letters tokens ("x-\u212aey", with the Kelvin sign,
		// was echoed as x-key); and HTTP's white space alone is trimmed
		// (TrimSpace took U+00A0 too).
		h = strings.Trim(h, " \t")
		if h == "" || !token(h) || n == 32 {
			continue
		}
		h = strings.ToLower(h)
		if h == "authorization" || h == "content-type" || h == "last-event-id" {
			continue
		}
		out += ", " + h
		n++
	}
	return out
}

// token reports whether s is an HTTP token (RFC 9110 §5.6.2), as a header
// name is.
func token(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return len(s) <= 64
}

// Preflight reports whether r is a CORS preflight request, which the API
// answers with 204 and the headers alone, before authentication.
func Preflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
}

// ParseOrigins reads a comma-separated list of origins (--origin,
// FLOE_ORIGINS): each entry trimmed of spaces and of a trailing slash (an
// Origin header has none: "https://a.example/" as written from a browser's
// address bar would match nothing), empty entries dropped, so that
// "https://a.example, https://b.example" allows both.
func ParseOrigins(list string) []string {
	var out []string
	for _, o := range strings.Split(list, ",") {
		if o = strings.TrimRight(strings.TrimSpace(o), "/"); o != "" {
			out = append(out, o)
		}
	}
	return out
}

// Refused says why a browser's request must not be served, or "": its
// Origin header names neither an origin of origins ("*" allows any) nor
// the server itself (the host the request was sent to). A page of another
// origin can send a POST the browser does not preflight (a body without a
// Content-Type, or none) and so start a task or answer an approval, though
// it cannot read the answer; CORS alone does not stop that. A request
// without an Origin (not a browser's, or a same-origin GET) is served.
// The message names the origin; the caller adds how to allow it.
func Refused(r *http.Request, origins []string) string {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return ""
	}
	for _, o := range origins {
		if o == "*" || o == origin {
			return ""
		}
	}
	if _, host, ok := strings.Cut(origin, "://"); ok && host != "" && strings.EqualFold(host, r.Host) {
		return ""
	}
	return "Origin " + origin + " may not use this server"
}

// Refuse prepares the answer to a request Refused refuses: the CORS
// headers that let its page read the refusal, and, for a preflight, true
// (answer it 204 and stop), so that the request it precedes comes and gets
// the 403 that says why. Without them the page got only a network error
// ("Failed to fetch") whether the server refused its origin or was down;
// every request of that origin is still refused before anything else.
// They are the headers "*" gives, without Access-Control-Allow-Credentials
// (a request with cookies is not let read even its refusal).
func Refuse(w http.ResponseWriter, r *http.Request) (preflight bool) {
	Headers(w, r, []string{"*"})
	return Preflight(r)
}
