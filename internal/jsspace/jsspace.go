// Package jsspace tells the characters JavaScript's String.prototype.trim
// removes, written out: unicode.Is(unicode.Zs, r) linked the unicode
// package into floe.wasm, with its case-folding tables and their init.
package jsspace

// Is reports whether r is white space or a line terminator to JavaScript:
// tab, vertical tab, form feed, U+FEFF and every space separator (Unicode's
// category Zs), LF, CR, U+2028 and U+2029. Unlike unicode.IsSpace it keeps
// U+0085 and takes U+FEFF.
func Is(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x202F, 0x205F, 0x3000, 0xFEFF, 0x2028, 0x2029:
		return true
	}
	return r >= 0x2000 && r <= 0x200A // the rest of Zs
}
