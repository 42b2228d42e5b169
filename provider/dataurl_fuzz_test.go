package provider

import (
	"strings"
	"testing"

	"github.com/floehq/floe/engine/omni"
)

// FuzzParseDataURL: any string is either refused or split into a media
// type and data that put back together give the string again (the scheme
// and ";base64" in the case it had), the media type holding no comma; a
// string refused has no "data:" scheme or no ";base64" just before its
// first comma.
func FuzzParseDataURL(f *testing.F) {
	for _, s := range []string{
		"data:image/png;base64,iVBORw0KGgo=", "DATA:image/png;BASE64,AAAA", "data:;base64,", "data:,abc",
		"data:image/png,abc", "data:image/png;base64", "data:a;base64,b,c", "data:;base64;base64,x", "dAtA:x;bAsE64,",
		"data:", "", "http://x/a.png", "data:text/plain;charset=utf-8;base64,aGk=", "data:\xff;base64,\x00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, u string) {
		mime, data, ok := ParseDataURL(u)
		comma := strings.IndexByte(u, ',')
		if !ok {
			if mime != "" || data != "" {
				t.Fatalf("ParseDataURL(%q) refused it with %q, %q", u, mime, data)
			}
			if len(u) >= 5 && strings.EqualFold(u[:5], "data:") && comma >= 5+7 && strings.EqualFold(u[comma-7:comma], ";base64") {
				t.Fatalf("ParseDataURL(%q) refused a base64 data: URL", u)
			}
			return
		}
		if strings.IndexByte(mime, ',') >= 0 {
			t.Fatalf("ParseDataURL(%q): media type %q has a comma", u, mime)
		}
		if len(u) != len("data:")+len(mime)+len(";base64,")+len(data) {
			t.Fatalf("ParseDataURL(%q) = %q, %q: not the whole URL", u, mime, data)
		}
		if rebuilt := u[:5] + mime + u[5+len(mime):5+len(mime)+8] + data; rebuilt != u ||
			!strings.EqualFold(u[:5], "data:") || !strings.EqualFold(u[5+len(mime):5+len(mime)+8], ";base64,") {
			t.Fatalf("ParseDataURL(%q) = %q, %q: does not round-trip", u, mime, data)
		}
		if got := DataURL(&omni.Payload{Type: omni.InlineData, Rest: &omni.Rest{MimeType: mime, Data: data}}); !strings.EqualFold(got[:5+len(mime)+8], u[:5+len(mime)+8]) || got[5+len(mime)+8:] != data {
			t.Fatalf("ParseDataURL(%q) = %q, %q: DataURL gives %q", u, mime, data, got)
		}
	})
}
