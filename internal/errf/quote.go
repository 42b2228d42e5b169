package errf

import "unicode/utf8"

// Quote returns s double-quoted and escaped as strconv.Quote escapes it for
// the characters error messages meet: control characters, DEL, invalid
// UTF-8 and the invisible format characters (no-break and other spaces,
// zero widths, bidi controls, the byte-order mark, line and paragraph
// separators) are escaped; every other character is kept as it is.
// strconv's test of printability and its tables are not linked.
func Quote(s string) string { return string(AppendQuote(make([]byte, 0, len(s)+2), s)) }

// QuoteRune returns r single-quoted, escaped as Quote escapes.
func QuoteRune(r rune) string {
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], r) // an invalid rune encodes U+FFFD
	return string(appendQuoted(append(make([]byte, 0, 8), '\''), string(buf[:n]), '\''))
}

// AppendQuote appends Quote(s) to b.
func AppendQuote(b []byte, s string) []byte { return appendQuoted(append(b, '"'), s, '"') }

const hexDigits = "0123456789abcdef"

func appendQuoted(b []byte, s string, q byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && n == 1:
				b = append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
			case invisible(r):
				b = append(b, '\\', 'u', hexDigits[r>>12], hexDigits[r>>8&15], hexDigits[r>>4&15], hexDigits[r&15])
			default:
				b = append(b, s[i:i+n]...)
			}
			i += n
			continue
		}
		i++
		switch c {
		case q, '\\':
			b = append(b, '\\', c)
		case '\a':
			b = append(b, `\a`...)
		case '\b':
			b = append(b, `\b`...)
		case '\f':
			b = append(b, `\f`...)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		case '\v':
			b = append(b, `\v`...)
		default:
			if c < ' ' || c == 0x7f {
				b = append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
			} else {
				b = append(b, c)
			}
		}
	}
	return append(b, q)
}

// invisible reports the characters past ASCII that Quote escapes, all below
// U+10000: the C1 controls and the no-break space, the soft hyphen, the
// other spaces, zero widths and joiners, bidi controls, line and paragraph
// separators, invisible operators, the byte-order mark and the
// interlinear annotation characters.
func invisible(r rune) bool {
	switch {
	case r <= 0xa0, r == 0xad, r == 0x1680, r == 0x180e,
		r >= 0x2000 && r <= 0x200f, r >= 0x2028 && r <= 0x202f,
		r >= 0x205f && r <= 0x206f, r == 0x3000, r == 0xfeff,
		r >= 0xfff9 && r <= 0xfffb:
		return true
	}
	return false
}
