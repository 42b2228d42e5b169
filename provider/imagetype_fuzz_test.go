package provider

import (
	"encoding/base64"
	"strings"
	"testing"
	"unicode/utf8"
)

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// FuzzBase64At: the bytes Base64At decodes from byte off on are those
// decoding the whole of data gives there, up to its first character of
// another kind (at or after the characters that hold byte off), as many
// as dst holds; any off, below 0 or past the end, is no byte.
func FuzzBase64At(f *testing.F) {
	for _, s := range []string{"", "iVBORw0KGgo", "/9j/4AAQSkZJRgABAQ", "AAAA=AAAA", "QUJD\nREVG", "R0lGODlhAQABAIAAAP", "A", "AB", "ABC"} {
		f.Add(s, 0, 12)
		f.Add(s, 2, 5)
		f.Add(s, 7, 1)
	}
	f.Add("AAAA", -1, 3)
	f.Add("AAAAAAAA", -4, 3)
	f.Add("AAAA", int(^uint(0)>>1), 3)
	f.Fuzz(func(t *testing.T, data string, off, n int) {
		if n < 0 || n > 64 {
			return
		}
		dst := make([]byte, n)
		got := Base64At(data, off, dst)
		if got < 0 || got > n {
			t.Fatalf("Base64At(%q, %d, [%d]) = %d", data, off, n, got)
		}
		if off < 0 || off/3 >= len(data)/4+1 || off/3*4 >= len(data) {
			if got != 0 {
				t.Fatalf("Base64At(%q, %d, [%d]) = %d, want 0", data, off, n, got)
			}
			return
		}
		// The characters from the group holding byte off on, up to the
		// first of another kind.
		s := data[off/3*4:]
		if i := strings.IndexFunc(s, func(r rune) bool { return !strings.ContainsRune(alphabet, r) }); i >= 0 {
			s = s[:i]
		}
		if len(s)%4 == 1 {
			s = s[:len(s)-1]
		}
		all, err := base64.RawStdEncoding.DecodeString(s)
		if err != nil {
			t.Fatalf("decoding %q: %v", s, err)
		}
		want := all[min(off%3, len(all)):]
		want = want[:min(len(want), n)]
		if string(dst[:got]) != string(want) {
			t.Fatalf("Base64At(%q, %d, [%d]) = % x, want % x", data, off, n, dst[:got], want)
		}
	})
}

// FuzzImageType: ImageType gives one of the four media types the APIs
// take or "": the one the first bytes show, or, of bytes too few to tell,
// the label's; NotSent sends a data: URL exactly when ImageType gives one,
// else says why in one line of UTF-8 naming its media type by its head.
func FuzzImageType(f *testing.F) {
	for _, c := range [][2]string{
		{"image/png", "iVBORw0KGgoAAAANSUhEUg"}, {"image/png", "/9j/4AAQSkZJRgABAQ"}, {"", "R0lGODlhAQABAIAAAP"},
		{"image/webp", "UklGRiQAAABXRUJQVlA4"}, {"IMAGE/JPG ; q=1", "AAAA"}, {"image/bmp", "Qk02AAAAAAAAADYAAAAoAAAA"},
		{"image\x0fpng", "AAAA"}, {"image/webp", "UklGRiQAAABX"}, {strings.Repeat("é", 30), "AA"},
	} {
		f.Add(c[0], c[1])
	}
	types := map[string]string{"image/png": "\x89PNG\r\n\x1a\n", "image/jpeg": "\xff\xd8\xff", "image/gif": "GIF8", "image/webp": "RIFF"}
	f.Fuzz(func(t *testing.T, mime, data string) {
		got := ImageType(mime, data)
		var head [12]byte
		n := Base64At(data, 0, head[:])
		if got != "" {
			magic, ok := types[got]
			if !ok {
				t.Fatalf("ImageType(%q, %q) = %q", mime, data, got)
			}
			byBytes := strings.HasPrefix(string(head[:n]), magic) && (got != "image/webp" || n == 12 && string(head[8:]) == "WEBP")
			label, _, _ := strings.Cut(mime, ";")
			label = strings.ToLower(strings.ReplaceAll(label, " ", ""))
			if !byBytes && (n == 12 || label != got && !(got == "image/jpeg" && label == "image/jpg")) {
				t.Fatalf("ImageType(%q, %q) = %q: neither its bytes (% x) nor its label", mime, data, got, head[:n])
			}
		}
		u := "data:" + mime + ";base64," + data
		why := NotSent(u, "the API")
		if _, _, ok := ParseDataURL(u); !ok {
			return // a comma in mime
		}
		if (why == "") != (got != "") {
			t.Fatalf("NotSent(%q) = %q, ImageType %q", u, why, got)
		}
		if why != "" && (strings.ContainsAny(why, "\r\n") || !utf8.ValidString(why) || len(why) > 300) {
			t.Fatalf("NotSent(%q) = %q: want one line of UTF-8", u, why)
		}
	})
}
