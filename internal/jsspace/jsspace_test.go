package jsspace

import (
	"testing"
	"unicode"
)

// TestIs checks Is against the unicode package's Zs and the characters
// ECMAScript adds (WhiteSpace and LineTerminator), for every code point.
func TestIs(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune+1; r++ {
		want := unicode.Is(unicode.Zs, r)
		switch r {
		case '\t', '\n', '\v', '\f', '\r', 0xFEFF, 0x2028, 0x2029:
			want = true
		}
		if got := Is(r); got != want {
			t.Errorf("Is(%U) = %v, want %v", r, got, want)
		}
	}
	for _, r := range []rune{0x85, 0x180E, 0x200B, -1} {
		if Is(r) {
			t.Errorf("Is(%U) = true, want false", r)
		}
	}
}
