package provider

import "github.com/floehq/floe/internal/errf"

// NoImage is the text an image goes as to a model that takes none (the
// NoImages option of the adapters).
const NoImage = "[image not sent: the model takes no images]"

// NotSent returns the text an image goes as instead of itself when the
// API, which who names, would refuse it, or "" for an image to send: a
// data: URL of base64 whose media type is none of PNG, JPEG, GIF and WebP
// (ImageType: the bytes of a BMP, an SVG, a TIFF, whatever the label), a
// data: URL of another encoding, a URL neither http nor https. Sent, such
// an image made the API refuse the request, and every later request of
// the session, whose history holds it.
func NotSent(u, who string) string {
	mime, data, ok := ParseDataURL(u)
	switch {
	case ok && ImageType(mime, data) == "":
		return "[image not sent: media type " + quoteHead(mime) + " (bytes of no PNG, JPEG, GIF or WebP image): " + who + " takes image/jpeg, image/png, image/gif and image/webp]"
	case !ok && !IsWebURL(u):
		return "[image not sent: " + quoteHead(u) + " is no http or https URL, nor a data:<media type>;base64,… URL, which " + who + " takes]"
	}
	return ""
}

// quoteHead quotes s, cut after 40 bytes ("…" then), at the start of a
// character: a text names a long URL or media type by its head.
func quoteHead(s string) string {
	cut := 40
	if len(s) <= cut {
		return errf.Quote(s)
	}
	for cut > 0 && s[cut]&0xc0 == 0x80 { // not the start of a character
		cut--
	}
	return errf.Quote(s[:cut]) + "…"
}

// ImageType returns the media type of an image of base64 data: the one
// its first bytes show (PNG, JPEG, GIF, WebP); else, when they are too
// few to tell (fewer than 12 decode), the one it is labelled with (mime,
// its case and parameters aside; image/jpg as image/jpeg) when it is one
// of those four; else "". Only the first 16 characters are decoded.
func ImageType(mime, data string) string {
	var head [12]byte // the first bytes of data, as many as its first characters hold
	n := Base64At(data, 0, head[:])
	for _, t := range imageTypes {
		if n >= len(t.magic) && string(head[:len(t.magic)]) == t.magic && (t.magic != "RIFF" || n == 12 && string(head[8:]) == "WEBP") {
			return t.media
		}
	}
	// The label, of bytes too few to tell: of bytes enough, of none of
	// the four (a BMP, an AVIF), the APIs refuse the image whatever the
	// label says.
	b := make([]byte, 0, 16)
	for i := 0; n < len(head) && i < len(mime) && mime[i] != ';'; i++ {
		if c := mime[i]; 'A' <= c && c <= 'Z' {
			b = append(b, c+'a'-'A')
		} else if c != ' ' {
			b = append(b, c) // not c|0x20, which made "image\x0fpng" image/png
		}
	}
	for _, t := range imageTypes {
		if string(b) == t.media || string(b) == t.alias {
			return t.media
		}
	}
	return ""
}

// imageTypes are the media types the APIs take: the bytes they start with
// (WebP: RIFF, then WEBP at byte 8), and the name one goes by (another for
// JPEG). Their base64 text was compared, which took bytes of other images
// for WebP ("RIFG", a base64 character holding two bits of the next byte).
var imageTypes = [...]struct{ media, magic, alias string }{
	{"image/png", "\x89PNG\r\n\x1a\n", "image/png"},
	{"image/jpeg", "\xff\xd8\xff", "image/jpg"},
	{"image/gif", "GIF8", "image/gif"},
	{"image/webp", "RIFF", "image/webp"},
}

// Base64At decodes into dst the bytes of base64 data from byte off on, as
// many as dst holds and data has before its next character of another
// kind (padding) from there, and returns how many: none for an off below
// 0 or past the end. Only the characters that hold those bytes are read
// (a character of another kind before them is not seen).
func Base64At(data string, off int, dst []byte) int {
	if off < 0 || off > len(data) { // past the end: no byte (off/3*4 would overflow near MaxInt)
		return 0
	}
	n, skip, acc, bits := 0, off%3, uint(0), 0
	for i := off / 3 * 4; i < len(data) && n < len(dst); i++ {
		c := data[i]
		switch {
		case 'A' <= c && c <= 'Z':
			c -= 'A'
		case 'a' <= c && c <= 'z':
			c = c - 'a' + 26
		case '0' <= c && c <= '9':
			c = c - '0' + 52
		case c == '+':
			c = 62
		case c == '/':
			c = 63
		default:
			return n
		}
		if acc, bits = acc<<6|uint(c), bits+6; bits >= 8 {
			bits -= 8
			if skip > 0 {
				skip--
				continue
			}
			dst[n] = byte(acc >> bits)
			n++
		}
	}
	return n
}
