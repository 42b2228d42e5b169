package engine

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCheckImageURL holds checkImageURL to the rule its error states: an
// image_url is a web URL (http or https, the scheme in any case, then a
// host: no "/" first, nothing blank or a control character) or a data:
// URL (any case) with a comma before its data; anything else is refused
// as invalid input naming it, in one line of UTF-8.
func FuzzCheckImageURL(f *testing.F) {
	for _, s := range []string{
		"https://example.com/a.png", "HTTP://x", "data:image/png;base64,iVBORw==", "DATA:,", "data:image/svg+xml,%3Csvg%3E",
		"not a url", "/shots/a.png", "https://", "http:///a.png", "https://x/a b.png", "data:image/png;base64", "",
		"file:///" + strings.Repeat("é", 100), "http\x1a//x", "data\x1a,x", "hTtPs://x\x7f", "ftp://x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, u string) {
		err := checkImageURL(3, u)
		fold := func(prefix string) bool { return len(u) >= len(prefix) && strings.EqualFold(u[:len(prefix)], prefix) }
		want := false
		switch {
		case fold("data:"):
			want = strings.Contains(u, ",")
		case fold("http://") || fold("https://"):
			host := u[strings.Index(u, "//")+2:]
			want = host != "" && host[0] != '/' && strings.IndexFunc(host, func(r rune) bool { return r <= ' ' || r == 0x7f }) < 0
		}
		if err == nil {
			if !want {
				t.Fatalf("checkImageURL(%q) accepted it", u)
			}
			return
		}
		if want {
			t.Fatalf("checkImageURL(%q): %v", u, err)
		}
		msg := err.Error()
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(msg, "input[3].payload.image_url: ") || strings.ContainsAny(msg, "\r\n") || !utf8.ValidString(msg) {
			t.Fatalf("checkImageURL(%q): %q", u, msg)
		}
	})
}
