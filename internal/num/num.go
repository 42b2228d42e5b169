// Package num reads decimal numbers without strconv's parsing, whose error
// type (strconv.NumError, its message quoted with strconv's table of
// printable characters) would otherwise be linked into floe.wasm for a
// file name's index and an event stream's retry field.
package num

import "math"

// Digits returns the value of s, one or more ASCII digits, and true; or 0
// and false when s is empty, holds anything but digits, or is past an int.
func Digits[T string | []byte](s T) (int, bool) {
	if len(s) == 0 {
		return 0, false
	}
	n := 0
	for i := range len(s) {
		d := int(s[i]) - '0'
		if d < 0 || d > 9 || n > (math.MaxInt-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}
