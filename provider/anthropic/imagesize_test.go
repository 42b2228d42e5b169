package anthropic

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider"
	"github.com/floehq/floe/provider/internal/ptest"
)

// encode returns the base64 of an image of w×h px in format f.
func encode(t testing.TB, f string, w, h int) string {
	t.Helper()
	var b bytes.Buffer
	img := image.NewGray(image.Rect(0, 0, w, h))
	var err error
	switch f {
	case "png":
		err = png.Encode(&b, img)
	case "gif":
		err = gif.Encode(&b, img, nil)
	case "jpeg":
		err = jpeg.Encode(&b, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

// webp returns the base64 of the head of a WebP file of w×h px with a
// first chunk of kind ("VP8 ", "VP8L" or "VP8X"), as its format lays out.
func webp(kind string, w, h int) string {
	b := []byte("RIFF\x00\x00\x00\x00WEBP" + kind + "\x0a\x00\x00\x00")
	switch kind {
	case "VP8 ": // frame tag, start code, 14-bit sides
		b = append(b, 0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a)
		b = binary.LittleEndian.AppendUint16(b, uint16(w))
		b = binary.LittleEndian.AppendUint16(b, uint16(h))
	case "VP8L": // signature, then sides less one in 14 bits each
		v := uint32(w-1) | uint32(h-1)<<14
		b = binary.LittleEndian.AppendUint32(append(b, 0x2f), v)
	case "VP8X": // flags, then sides less one in 24 bits each
		b = append(b, 0, 0, 0, 0, byte(w-1), byte((w-1)>>8), byte((w-1)>>16), byte(h-1), byte((h-1)>>8), byte((h-1)>>16))
	}
	return base64.StdEncoding.EncodeToString(append(b, make([]byte, 32)...))
}

// The sides of an image are read from its header, in each of the four
// formats, a JPEG's after the segments before its frame.
func TestImageSides(t *testing.T) {
	for _, f := range []string{"png", "gif", "jpeg"} {
		for _, s := range [][2]int{{1, 1}, {300, 7}, {8001, 2}, {2, 8001}} {
			data := encode(t, f, s[0], s[1])
			if w, h := dims("image/"+f, data); w != s[0] || h != s[1] {
				t.Errorf("%s of %dx%d px: read %dx%d", f, s[0], s[1], w, h)
			}
		}
	}
	for _, kind := range []string{"VP8 ", "VP8L", "VP8X"} {
		for _, s := range [][2]int{{1, 1}, {2001, 7}, {16383, 3}} {
			if w, h := dims("image/webp", webp(kind, s[0], s[1])); w != s[0] || h != s[1] {
				t.Errorf("WebP %q of %dx%d px: read %dx%d", kind, s[0], s[1], w, h)
			}
		}
	}
	// A JPEG with segments before its frame: an APP1 of 60 KB (Exif),
	// fill bytes, a restart marker.
	j, _ := base64.StdEncoding.DecodeString(encode(t, "jpeg", 4000, 3))
	app := append([]byte{0xff, 0xe1, 0xea, 0x62}, make([]byte, 60000)...)
	j = append(append(append([]byte{}, j[:2]...), append(app, 0xff, 0xff)...), j[2:]...)
	if w, h := dims("image/jpeg", base64.StdEncoding.EncodeToString(j)); w != 4000 || h != 3 {
		t.Errorf("JPEG after an Exif segment: read %dx%d", w, h)
	}
	// Fill bytes count toward the 64 K steps of the walk: a frame after
	// 70,000 of them is not looked for (megabytes of them were walked).
	for _, c := range []struct{ fill, w, h int }{{60000, 4000, 3}, {70000, 0, 0}} {
		f := append(append([]byte{0xff, 0xd8}, bytes.Repeat([]byte{0xff}, c.fill)...), j[2:]...)
		if w, h := dims("image/jpeg", base64.StdEncoding.EncodeToString(f)); w != c.w || h != c.h {
			t.Errorf("JPEG after %d fill bytes: read %dx%d, want %dx%d", c.fill, w, h, c.w, c.h)
		}
	}
	for _, c := range []struct{ media, data string }{
		{"image/png", "iVBORw0KGgo"},            // too short
		{"image/jpeg", "/9j/2gAI"},              // a scan before any frame
		{"image/jpeg", "/9j/4AAQ" + "AAAA"},     // a segment past the end
		{"image/webp", webp("VP8Z", 9000, 9)},   // a chunk of no known kind
		{"image/png", "iVBORw0KGgo-AAAAAAAAAA"}, // not base64 after its head
	} {
		if w, h := dims(c.media, c.data); w != 0 || h != 0 {
			t.Errorf("dims(%q, %q) = %dx%d, want 0x0", c.media, c.data, w, h)
		}
	}
}

// An image the API refuses for its size goes as a text saying why: over
// 5 MB of base64, over 8000 px a side.
func TestImageOversize(t *testing.T) {
	big := "data:image/png;base64,iVBORw0KGgo" + strings.Repeat("A", 5<<20-11+1) // one byte over
	for _, c := range []struct{ img, want string }{
		{pngURL(t, 8001, 1), "[image not sent: 8001x1 px, more than the 8000 px a side Anthropic takes]"},
		{pngURL(t, 8000, 1), ""},
		{"data:image/webp;base64," + webp("VP8X", 3, 9000), "[image not sent: 3x9000 px, more than the 8000 px a side Anthropic takes]"},
		{big, "[image not sent: 5243 KB of base64, more than the 5 MB (5242880 bytes) an image Anthropic takes]"},
		{big[:len(big)-1], ""},
	} {
		w := &provider.JSONWriter{}
		writeImage(w, c.img, false)
		want := `{"type":"text","text":"` + c.want + `"}`
		if c.want == "" {
			want = `{"type":"image","source":{"type":"base64","media_type":"image/`
		}
		if !strings.HasPrefix(string(w.B), want) {
			t.Errorf("image %.40s…: wrote %.200s, want %s", c.img, w.B, want)
		}
	}
}

// A request of more than 20 images, one of them wider or higher than 2000
// px (which the API refuses in such a request), sends the newest: down to
// 10 when they pass 20, as MaxImages does, the same ones in the next
// request. One of more images, all within 2000 px, sends them all; and so
// does one of 20.
func TestManyImages(t *testing.T) {
	wide, small := pngURL(t, 2560, 1440), pngURL(t, 2000, 2000)
	history := func(imgs ...string) []omni.Message {
		h := []omni.Message{omni.UserText("Look.")}
		for i, u := range imgs {
			id := "call_" + string(rune('a'+i))
			out := omni.ToolOutput(id, "shot", omni.StatusCompleted)
			out.Payload.Edit().Images = []string{u}
			h = append(h, omni.ToolCallMsg(id, "screenshot", "{}"), out)
		}
		return h
	}
	count := func(msgs []omni.Message) (sent, omitted int) {
		w := &provider.JSONWriter{}
		writeMessages(w, fewer(msgs), "", "", false)
		return strings.Count(string(w.B), `"type":"image"`), strings.Count(string(w.B), "[image omitted: ")
	}
	for _, c := range []struct {
		imgs          []string
		sent, omitted int
	}{
		{append(repeat(small, 20), wide), 10, 11},
		{append(repeat(small, 20), wide, small), 11, 11}, // the next request: the same left out
		{repeat(wide, 20), 20, 0},
		{repeat(small, 30), 30, 0},
		{append([]string{wide}, repeat(small, 20)...), 10, 11},
		{append(repeat(small, 20), pngURL(t, 10, 2001)), 10, 11}, // a pixel past the README's 2000
	} {
		if sent, omitted := count(history(c.imgs...)); sent != c.sent || omitted != c.omitted {
			t.Errorf("%d images: %d sent and %d left out, want %d and %d", len(c.imgs), sent, omitted, c.sent, c.omitted)
		}
	}
	// A model's request does so.
	tr := &ptest.Transport{Replies: []ptest.Reply{{Chunks: events(start, msgDelta, stop)}}}
	m, err := New(Options{Transport: tr, Model: "claude-test"})
	if err != nil {
		t.Fatal(err)
	}
	m.LoadHistory(context.Background(), history(append(repeat(small, 20), wide)...))
	run(t, m, engine.GenerateParams{Tools: lookTool})
	if b := string(tr.Requests[0].Body); strings.Count(b, `"type":"image"`) != 10 {
		t.Errorf("a request of 21 images, one of 2560 px: %d sent", strings.Count(b, `"type":"image"`))
	}
}

func pngURL(t *testing.T, w, h int) string { return "data:image/png;base64," + encode(t, "png", w, h) }

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// An inline_data image is read where it lies: a request of more than 20
// of them, none wide, costs no allocation (a data: URL made of each was a
// copy of megabytes a request); one of them wide sends the newest, as
// TestManyImages says.
func TestManyInlineImages(t *testing.T) {
	inline := func(w, h int) omni.Message {
		data := encode(t, "png", w, h)
		return omni.Message{Type: omni.TypeModelMsg, Payload: omni.Payload{Type: omni.InlineData, Role: omni.RoleUser, Rest: &omni.Rest{MimeType: "IMAGE/png", Data: data + strings.Repeat("A", 1<<20-len(data)%4)}}}
	}
	msgs := []omni.Message{omni.UserText("Look.")}
	for range 21 {
		msgs = append(msgs, inline(1, 1))
	}
	if n := testing.AllocsPerRun(5, func() { fewer(msgs) }); n != 0 {
		t.Errorf("21 inline images, none wide: %v allocations", n)
	}
	msgs = append(msgs, inline(2560, 1440))
	w := &provider.JSONWriter{}
	writeMessages(w, fewer(msgs), "", "", false)
	if got := strings.Count(string(w.B), `"type":"image"`); got != 11 {
		t.Errorf("22 inline images, the last wide: %d sent, want 11 (10 when the 21st passed 20, and the 22nd)", got)
	}
}
