package cors

import (
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

func TestParseOrigins(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"https://a.example,https://b.example", []string{"https://a.example", "https://b.example"}},
		{"https://a.example, https://b.example", []string{"https://a.example", "https://b.example"}},
		{" * ", []string{"*"}},
		{"https://a.example,,", []string{"https://a.example"}},
		{" , ", nil},
		{" http://app.example/ , https://b.example//", []string{"http://app.example", "https://b.example"}},
	} {
		if got := ParseOrigins(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("ParseOrigins(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// The second origin of a list written with a space is allowed.
	r := httptest.NewRequest("GET", "/api/sessions", nil)
	r.Header.Set("Origin", "https://b.example")
	w := httptest.NewRecorder()
	Headers(w, r, ParseOrigins("https://a.example, https://b.example"))
	if got := w.Header().Get("Access-Control-Allow-Origin"); got != "https://b.example" {
		t.Errorf("Access-Control-Allow-Origin = %q, want https://b.example", got)
	}
}

// An origin the list names may send cookies (EventSource's
// withCredentials, fetch's credentials: "include"); one "*" lets in may
// not, nor one not allowed.
func TestCredentials(t *testing.T) {
	for _, tc := range []struct {
		origins []string
		origin  string
		acao    string
		creds   string
	}{
		{[]string{"https://a.example"}, "https://a.example", "https://a.example", "true"},
		{[]string{"*", "https://a.example"}, "https://a.example", "https://a.example", "true"},
		{[]string{"*"}, "https://a.example", "https://a.example", ""},
		{[]string{"https://b.example"}, "https://a.example", "", ""},
	} {
		r := httptest.NewRequest("GET", "/api/sessions/s/stream", nil)
		r.Header.Set("Origin", tc.origin)
		w := httptest.NewRecorder()
		Headers(w, r, tc.origins)
		if acao, creds := w.Header().Get("Access-Control-Allow-Origin"), w.Header().Get("Access-Control-Allow-Credentials"); acao != tc.acao || creds != tc.creds {
			t.Errorf("origins %q, Origin %s: Allow-Origin %q, Allow-Credentials %q; want %q, %q", tc.origins, tc.origin, acao, creds, tc.acao, tc.creds)
		}
	}
}

// A preflight's other headers (a tracer's traceparent) are allowed too, as
// HTTP tokens only; the API's own are always allowed.
func TestAllowHeaders(t *testing.T) {
	for _, tc := range []struct{ asked, want string }{
		{"", "Authorization, Content-Type, Last-Event-ID"},
		{"content-type", "Authorization, Content-Type, Last-Event-ID"},
		{"authorization,content-type,traceparent,sentry-trace", "Authorization, Content-Type, Last-Event-ID, traceparent, sentry-trace"},
		{" X-Request-ID , , bad header, b@d, x\r\ny", "Authorization, Content-Type, Last-Event-ID, x-request-id"},
	} {
		r := httptest.NewRequest("OPTIONS", "/api/sessions", nil)
		r.Header.Set("Origin", "https://a.example")
		r.Header.Set("Access-Control-Request-Method", "POST")
		if tc.asked != "" {
			r.Header.Set("Access-Control-Request-Headers", tc.asked)
		}
		w := httptest.NewRecorder()
		Headers(w, r, []string{"https://a.example"})
		if got := w.Header().Get("Access-Control-Allow-Headers"); got != tc.want {
			t.Errorf("asked %q: Allow-Headers %q, want %q", tc.asked, got, tc.want)
		}
		if vary := w.Header().Values("Vary"); !slices.Contains(vary, "Access-Control-Request-Headers") {
			t.Errorf("asked %q: Vary %q lacks Access-Control-Request-Headers", tc.asked, vary)
		}
	}
	many := strings.Repeat("x-a,", 40)
	r := httptest.NewRequest("OPTIONS", "/api/sessions", nil)
	r.Header.Set("Origin", "https://a.example")
	r.Header.Set("Access-Control-Request-Method", "POST")
	r.Header.Set("Access-Control-Request-Headers", many)
	w := httptest.NewRecorder()
	Headers(w, r, []string{"*"})
	if got := strings.Count(w.Header().Get("Access-Control-Allow-Headers"), "x-a"); got != 32 {
		t.Errorf("40 names asked: %d echoed, want 32", got)
	}
}

// The refusal of an origin the list does not allow is readable by its
// page, but never with Access-Control-Allow-Credentials: that is for the
// origins the list names.
func TestRefuseGivesNoCredentials(t *testing.T) {
	for _, method := range []string{"GET", "OPTIONS"} {
		r := httptest.NewRequest(method, "/api/sessions", nil)
		r.Header.Set("Origin", "https://evil.example")
		if method == "OPTIONS" {
			r.Header.Set("Access-Control-Request-Method", "POST")
		}
		if Refused(r, []string{"https://a.example"}) == "" {
			t.Fatal("https://evil.example was not refused")
		}
		w := httptest.NewRecorder()
		Refuse(w, r)
		if got := w.Header().Get("Access-Control-Allow-Origin"); got != "https://evil.example" {
			t.Errorf("%s: Allow-Origin %q: the page cannot read its refusal", method, got)
		}
		if got := w.Header().Get("Access-Control-Allow-Credentials"); got != "" {
			t.Errorf("%s: a refused origin gets Access-Control-Allow-Credentials %q", method, got)
		}
	}
}
