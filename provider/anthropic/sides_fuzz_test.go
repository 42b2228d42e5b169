package anthropic

import (
	"bytes"
	"encoding/base64"
	"image"
	"testing"
)

// FuzzImageSides: the sides dims reads from the header of an image are the
// ones the standard library's decoder reads (PNG, GIF, JPEG), whenever
// it reads any: fewer, and an image past the API's 8000 px was sent.
func FuzzImageSides(f *testing.F) {
	for _, c := range []struct {
		f    string
		w, h int
	}{{"png", 3, 2}, {"gif", 1, 8001}, {"jpeg", 8001, 2}, {"jpeg", 17, 300}} {
		b, _ := base64.StdEncoding.DecodeString(encode(f, c.f, c.w, c.h))
		f.Add(b)
	}
	for _, kind := range []string{"VP8 ", "VP8L", "VP8X"} {
		b, _ := base64.StdEncoding.DecodeString(webp(kind, 300, 9000))
		f.Add(b)
	}
	f.Add([]byte("\xff\xd8\xff\xff\xff\xc0\x00\x11\x08\x00\x02\x00\x03"))
	f.Add([]byte("\xff\xd8\x00\x00\xff\xe1\x00\x04ab\xff\xd0\xff\xc2\x00\x11\x08\x01\x02\x03\x04"))
	f.Fuzz(func(t *testing.T, b []byte) {
		data := base64.StdEncoding.EncodeToString(b)
		media := mediaType("", data)
		w, h := dims(media, data)
		if w < 0 || h < 0 {
			t.Fatalf("dims(%q, % x) = %dx%d", media, b[:min(len(b), 64)], w, h)
		}
		c, format, err := image.DecodeConfig(bytes.NewReader(b))
		if err != nil || "image/"+format != media {
			return
		}
		if w != c.Width || h != c.Height {
			t.Fatalf("dims(%q, % x) = %dx%d, the decoder reads %dx%d", media, b[:min(len(b), 64)], w, h, c.Width, c.Height)
		}
	})
}
