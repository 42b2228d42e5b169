package anthropic

import (
	"strconv"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/provider"
)

// The API's limits on one image: its base64 text, and its width and
// height, lower in a request of more than manyImages images. An image
// past them made the API refuse the request ("image exceeds 5 MB
// maximum", "At least one of the image dimensions exceed max allowed size
// for many-image requests: 2000 pixels"), and every later request of the
// session, whose history holds it.
const (
	maxImageBase64 = 5 << 20
	maxImageSide   = 8000
	maxManySide    = 2000
	manyImages     = 20
)

// oversize returns why the API would refuse an image of media type media
// and base64 data in a request of at most manyImages images, or "".
func oversize(media, data string) string {
	if len(data) > maxImageBase64 {
		return strconv.Itoa((len(data)+999)/1000) + " KB of base64, more than the 5 MB (5242880 bytes) an image Anthropic takes"
	}
	if w, h := dims(media, data); max(w, h) > maxImageSide {
		return strconv.Itoa(w) + "x" + strconv.Itoa(h) + " px, more than the " + strconv.Itoa(maxImageSide) + " px a side Anthropic takes"
	}
	return ""
}

// fewer returns msgs with images left out, the oldest first, so that
// they are at most manyImages when one is wider or higher than
// maxManySide px (a screenshot of 2560 px): the API refuses such an
// image in a request of more images, and sending the newest
// screenshots is worth more than sending many. It leaves them out as
// provider.ImageLimit does: down to half of manyImages when they pass
// it, the same ones in each later request.
func fewer(msgs []omni.Message) []omni.Message {
	if provider.ImageCount(msgs) <= manyImages {
		return msgs
	}
	wide := func(mime, data string) bool {
		w, h := dims(mediaType(mime, data), data)
		return max(w, h) > maxManySide
	}
	for i := range msgs {
		p := &msgs[i].Payload
		urls := p.Images()
		switch p.Type {
		case omni.ToolCallOutput:
		case omni.InlineData: // its data as it is, not a data: URL made of it
			urls = nil
			if m := p.MimeType(); provider.IsImage(m) && wide(m, p.Data()) {
				return provider.ImageLimit{Count: manyImages}.Apply(msgs)
			}
		default:
			urls = []string{provider.ImageOf(p)}
		}
		for _, u := range urls {
			if mime, data, ok := provider.ParseDataURL(u); ok && wide(mime, data) {
				return provider.ImageLimit{Count: manyImages}.Apply(msgs)
			}
		}
	}
	return msgs
}

// dims returns the width and height in pixels that the header of an image
// of media type media (PNG, GIF, WebP or JPEG) and base64 data gives; 0, 0
// when its bytes do not tell.
func dims(media, data string) (w, h int) {
	var b [32]byte // the header
	n := provider.Base64At(data, 0, b[:30])
	le := func(i, bits int) int { // the number of the bytes from i on, little-endian
		v := 0
		for k := bits/8 - 1; k >= 0; k-- {
			v = v<<8 | int(b[i+k])
		}
		return v
	}
	switch {
	case media == "image/jpeg": // the frame header's, after the segments before it
		return jpegSides(data)
	case media == "image/png" && n >= 24: // the IHDR chunk's, first
		return int(b[16]&0x7f)<<24 | int(b[17])<<16 | int(b[18])<<8 | int(b[19]), int(b[20]&0x7f)<<24 | int(b[21])<<16 | int(b[22])<<8 | int(b[23])
	case media == "image/gif" && n >= 10: // the logical screen's
		return le(6, 16), le(8, 16)
	case media != "image/webp" || n < 30:
	case string(b[12:16]) == "VP8 ": // a lossy frame's header: 14 bits each
		return le(26, 16) & 0x3fff, le(28, 16) & 0x3fff
	case string(b[12:16]) == "VP8L": // a lossless one's: 14 bits each, less one
		v := le(21, 32)
		return 1 + v&0x3fff, 1 + v>>14&0x3fff
	case string(b[12:16]) == "VP8X": // the extended format's canvas: 24 bits each, less one
		return 1 + le(24, 24), 1 + le(27, 24)
	}
	return 0, 0
}

// jpegSides returns the sides of a JPEG image of base64 data from its
// frame header, read as decoders read it (libjpeg, Go's): past the
// segments before it, bytes of none (extraneous data), fill bytes and
// restart markers; 0, 0 when there is none before the scan, or after the
// first 64 K markers, fill bytes and bytes of none (a walk of megabytes of
// fill bytes, in each request, took time to find nothing).
func jpegSides(data string) (w, h int) {
	var b [5]byte
	for pos, steps := 2, 0; steps < 1<<16 && provider.Base64At(data, pos, b[:2]) == 2; steps++ {
		if b[0] != 0xff { // extraneous
			pos++
			continue
		}
		m := b[1]
		for pos += 2; m == 0xff && steps < 1<<16 && provider.Base64At(data, pos, b[:1]) == 1; pos, steps = pos+1, steps+1 { // fill
			m = b[0]
		}
		switch {
		case m == 0 || m == 0xff || 0xd0 <= m && m <= 0xd7: // extraneous, the end, a restart
			continue
		case m == 0xd9 || m == 0xda || provider.Base64At(data, pos, b[:2]) != 2: // the end, the scan
			return 0, 0
		}
		n := int(b[0])<<8 | int(b[1])
		if 0xc0 <= m && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc {
			if provider.Base64At(data, pos+2, b[:5]) == 5 { // precision, height, width
				return int(b[3])<<8 | int(b[4]), int(b[1])<<8 | int(b[2])
			}
			return 0, 0
		}
		pos += n
	}
	return 0, 0
}
