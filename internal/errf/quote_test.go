package errf

import (
	"strconv"
	"testing"
	"unicode/utf8"
)

// quotedAlike reports whether strconv quotes every rune of s as Quote does:
// all but the runes strconv calls unprintable and Quote keeps.
func quotedAlike(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		if r >= utf8.RuneSelf && !(r == utf8.RuneError && n == 1) && !strconv.IsPrint(r) && !invisible(r) {
			return false
		}
	}
	return true
}

// TestQuoteRunes checks every rune: those strconv prints, and those Quote
// escapes, come out as strconv.Quote and strconv.QuoteRune write them; the
// rest (private use, unassigned, format characters of no width Quote does
// not list) are kept as they are.
func TestQuoteRunes(t *testing.T) {
	kept := 0
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		s := string(r)
		got, gotRune := Quote(s), QuoteRune(r)
		if quotedAlike(s) {
			if want := strconv.Quote(s); got != want {
				t.Fatalf("Quote(%U) = %s, want %s", r, got, want)
			}
			if want := strconv.QuoteRune(r); gotRune != want {
				t.Fatalf("QuoteRune(%U) = %s, want %s", r, gotRune, want)
			}
			continue
		}
		kept++
		if got != `"`+s+`"` || gotRune != `'`+s+`'` {
			t.Fatalf("Quote(%U) = %s, QuoteRune = %s: want the rune kept", r, got, gotRune)
		}
	}
	if kept == 0 {
		t.Fatal("no rune kept: the test compares nothing but strconv's own escapes")
	}
	for _, r := range []rune{0xa0, 0x200b, 0x202e, 0x2028, 0xfeff, 0x85} { // the invisible ones error messages must show
		if got := Quote(string(r)); got == `"`+string(r)+`"` {
			t.Errorf("Quote(%U) = %s: kept, want escaped", r, got)
		}
	}
	if got, want := QuoteRune(0xd800), strconv.QuoteRune(0xd800); got != want {
		t.Errorf("QuoteRune(surrogate) = %s, want %s", got, want)
	}
}

func FuzzQuote(f *testing.F) {
	for _, s := range []string{"", "plain", "tab\there \"q\" \\", "\x00\x7f\xff\xfe", "é\u00a0\u200b\u2028\ufeff", "🙂 \U000e0001", "'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Quote(s)
		if quotedAlike(s) {
			if want := strconv.Quote(s); got != want {
				t.Fatalf("Quote(%q) = %s, want %s", s, got, want)
			}
		}
		back, err := strconv.Unquote(got)
		if err != nil || back != s {
			t.Fatalf("Quote(%q) = %s: does not unquote to it (%q, %v)", s, got, back, err)
		}
	})
}
