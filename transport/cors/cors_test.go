package cors

import (
	"net/http/httptest"
	"slices"
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
