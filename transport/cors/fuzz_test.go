package cors

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzAllowHeaders: whatever a preflight's Access-Control-Request-Headers
// holds, the answer's Access-Control-Allow-Headers is the API's own
// headers, then at most 32 names the request asked for (each one of its
// comma-separated names, trimmed, in lower case), each an HTTP token of
// at most 64 characters: nothing the request smuggled in (CR, LF, a comma
// inside a name, a name the request did not hold).
func FuzzAllowHeaders(f *testing.F) {
	for _, s := range []string{
		"", "content-type", "authorization,content-type,traceparent,sentry-trace", " X-Request-ID , , bad header, b@d, x\r\ny",
		strings.Repeat("x-a,", 40), "x-\u212aey", "X-İd", "a\x00b", strings.Repeat("a", 65), "Last-Event-ID, LAST-EVENT-ID", "\u00a0x-a\u0085",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, asked string) {
		r := httptest.NewRequest("OPTIONS", "/api/sessions", nil)
		r.Header.Set("Origin", "https://a.example")
		r.Header.Set("Access-Control-Request-Method", "POST")
		r.Header["Access-Control-Request-Headers"] = []string{asked}
		w := httptest.NewRecorder()
		Headers(w, r, []string{"https://a.example"})
		got := w.Header().Get("Access-Control-Allow-Headers")
		rest, ok := strings.CutPrefix(got, baseHeaders)
		if !ok {
			t.Fatalf("asked %q: Allow-Headers %q", asked, got)
		}
		var names []string
		if rest != "" {
			names = strings.Split(strings.TrimPrefix(rest, ", "), ", ")
		}
		if len(names) > 32 {
			t.Fatalf("asked %q: %d names echoed", asked, len(names))
		}
		for _, n := range names {
			if n == "" || len(n) > 64 || strings.Trim(n, "abcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+-.^_`|~") != "" {
				t.Fatalf("asked %q: echoed %q, no token", asked, n)
			}
			found := false
			for _, a := range strings.Split(asked, ",") {
				a = strings.Trim(a, " \t")
				found = found || len(a) == len(n) && strings.EqualFold(a, n)
			}
			if !found {
				t.Fatalf("asked %q: echoed %q, which it did not ask for", asked, n)
			}
		}
	})
}
