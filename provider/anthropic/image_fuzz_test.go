package anthropic

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	_ "image/gif"
	_ "image/jpeg"
	_ "image/png"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/floehq/floe/provider"
)

// FuzzWriteImage: any image URL is either written as an image block the
// API takes (a base64 source of one of its four media types, or a web
// URL) or as a text block of one line saying why it is not sent. A media type
// read from the bytes is the one their first bytes decode to; one read
// from the label is the label's, ASCII case, spaces and parameters aside
// (image/jpg as image/jpeg), and only of bytes too few to tell (fewer
// than 12).
func FuzzWriteImage(f *testing.F) {
	for _, s := range []string{
		"data:image/png;base64,iVBORw0KGgoAAAANSUhEUg", "data:image/png;base64,/9j/4AAQSkZJRgABAQ", "data:;base64,R0lGODlhAQABAIAAAP",
		"data:;base64,UklGRiQAAABXRUJQVlA4", "data:image/jpg;base64,AAAA", "DATA:IMAGE/PNG ; charset=x;BASE64,AAAA",
		"data:image/bmp;base64,AAAA", "data:image/png,AAAA", "https://x/a.png", "HTTP://x", "file:///a.png", "",
		"data:image\x0fpng;base64,AAAA", "data:;base64,UklGRiQAAABX", "/shots/" + strings.Repeat("é", 40),
	} {
		f.Add(s)
	}
	for _, c := range []struct {
		f    string
		w, h int
	}{{"png", 8001, 1}, {"gif", 1, 8001}, {"jpeg", 8001, 2}, {"png", 8000, 2}} {
		f.Add("data:image/" + c.f + ";base64," + encode(f, c.f, c.w, c.h))
	}
	f.Fuzz(func(t *testing.T, u string) {
		var w provider.JSONWriter
		writeImage(&w, u, false)
		var block struct {
			Type   string
			Text   string
			Source struct{ Type, Media_type, Data, URL string }
		}
		if err := json.Unmarshal(w.B, &block); err != nil || block.Type != "image" && block.Type != "text" {
			t.Fatalf("writeImage(%q) wrote %q: %v", u, w.B, err)
		}
		if block.Type == "text" {
			if !strings.HasPrefix(block.Text, "[image not sent: ") || strings.ContainsAny(block.Text, "\r\n") || !utf8.ValidString(block.Text) || len(block.Text) > 500 {
				t.Fatalf("writeImage(%q) wrote the text %q: want one line of UTF-8 saying the image is not sent", u, block.Text)
			}
			return
		}
		valid := utf8.ValidString(u) // else JSON has U+FFFD for its bytes of none
		mime, data, ok := provider.ParseDataURL(u)
		if !ok {
			if block.Source.Type != "url" || valid && block.Source.URL != u || !provider.IsWebURL(u) {
				t.Fatalf("writeImage(%q) wrote %q", u, w.B)
			}
			return
		}
		if block.Source.Type != "base64" || valid && block.Source.Data != data {
			t.Fatalf("writeImage(%q) wrote %q", u, w.B)
		}
		n := strings.IndexFunc(data, func(r rune) bool {
			return !strings.ContainsRune("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", r)
		})
		if n < 0 {
			n = len(data)
		}
		n = min(n, 16) // the first 12 bytes
		if n%4 == 1 {
			n--
		}
		head, _ := base64.RawStdEncoding.DecodeString(data[:n])
		magic := map[string]func([]byte) bool{
			"image/png":  func(b []byte) bool { return bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) },
			"image/jpeg": func(b []byte) bool { return bytes.HasPrefix(b, []byte("\xff\xd8\xff")) },
			"image/gif":  func(b []byte) bool { return bytes.HasPrefix(b, []byte("GIF8")) },
			"image/webp": func(b []byte) bool {
				return bytes.HasPrefix(b, []byte("RIFF")) && len(b) >= 12 && string(b[8:12]) == "WEBP"
			},
		}
		media := block.Source.Media_type
		if magic[media] == nil {
			t.Fatalf("writeImage(%q): media type %q", u, media)
		}
		if magic[media](head) {
			checkSides(t, u, data)
			return
		}
		label, _, _ := strings.Cut(mime, ";")
		label = strings.ToLower(strings.ReplaceAll(label, " ", ""))
		if label == "image/jpg" {
			label = "image/jpeg"
		}
		if label != media {
			t.Fatalf("writeImage(%q): media type %q, neither its bytes' (%q) nor its label's", u, media, head)
		}
		if len(head) == 12 {
			t.Fatalf("writeImage(%q): media type %q of its label, its first bytes (%q) of none of the four", u, media, head)
		}
	})
}

// checkSides fails t when the standard library reads sides from data that
// the API refuses.
func checkSides(t *testing.T, u, data string) {
	if i := strings.IndexByte(data, '='); i >= 0 {
		data = data[:i]
	}
	if len(data)%4 == 1 {
		data = data[:len(data)-1]
	}
	b, err := base64.RawStdEncoding.DecodeString(data)
	if err != nil {
		return
	}
	c, _, err := image.DecodeConfig(bytes.NewReader(b))
	if err == nil && max(c.Width, c.Height) > maxImageSide {
		t.Fatalf("writeImage(%q) sent an image of %dx%d px", u, c.Width, c.Height)
	}
}

// The media type of an image is read from its first bytes alone: a large
// image is not decoded, nor copied, to find it.
func TestMediaTypeOfALargeImage(t *testing.T) {
	data := "iVBORw0KGgo" + strings.Repeat("A", 16<<20)
	for _, mime := range []string{"image/png", "application/octet-stream"} {
		if n := testing.AllocsPerRun(10, func() { mediaType(mime, data) }); n != 0 {
			t.Errorf("mediaType(%q, 16 MB): %v allocations", mime, n)
		}
	}
	if got := mediaType("image/webp", "UklGR"+strings.Repeat("A", 16<<20)); got != "" {
		t.Errorf("mediaType of a large image of no type the API takes, labelled webp: %q", got)
	}
}
