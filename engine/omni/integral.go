package omni

import "math/bits"

// integral reports the value strconv.ParseFloat(string(b), 64) would give
// for the JSON number b when that value is an integer in int64 range, the
// way integer accepts 3.0, 3e2 or 1e-400 (0): it rounds the decimal to the
// nearest float64 (ties to even) exactly, without linking the float parser
// (about 5 kB of the WebAssembly build, brotli). b is a number the scanner
// has read; ok is false for any other value.
func integral(b []byte) (n int64, ok bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	// The significant digits d (no leading or trailing zeros) and the
	// exponent: the magnitude is 0.d × 10^point.
	var d []byte
	point, i, sawDigit := 0, 0, false
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		sawDigit = true
		if len(d) > 0 || b[i] != '0' {
			d = append(d, b[i])
			point++
		}
	}
	if !sawDigit {
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		j := i
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			if len(d) > 0 || b[i] != '0' {
				d = append(d, b[i])
			} else {
				point--
			}
		}
		if i == j {
			return 0, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		eneg := i < len(b) && b[i] == '-'
		if i < len(b) && (b[i] == '-' || b[i] == '+') {
			i++
		}
		j, e := i, 0
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			if e < 1e8 {
				e = e*10 + int(b[i]-'0')
			}
		}
		if i == j {
			return 0, false
		}
		if eneg {
			e = -e
		}
		point += e
	}
	if i != len(b) {
		return 0, false
	}
	for len(d) > 0 && d[len(d)-1] == '0' {
		d = d[:len(d)-1]
	}
	if len(d) == 0 {
		return 0, true // zero, -0 included
	}
	if point > 20 {
		return 0, false // at least 10^20: beyond int64 once rounded
	}
	// The integer part u and the fraction's digits frac (after the point).
	var u uint64
	var frac []byte
	if point <= 0 {
		if point < -1100 {
			return 0, true // below 2^-1075: rounds to zero
		}
		frac = make([]byte, -point, len(d)-point)
		for k := range frac {
			frac[k] = '0'
		}
		frac = append(frac, d...)
	} else {
		for k := 0; k < point; k++ {
			c := byte('0')
			if k < len(d) {
				c = d[k]
			}
			hi, lo := bits.Mul64(u, 10)
			lo, carry := bits.Add64(lo, uint64(c-'0'), 0)
			if hi != 0 || carry != 0 {
				return 0, false
			}
			u = lo
		}
		if point < len(d) {
			frac = d[point:]
		}
	}
	const limit = 1<<63 + 1<<10 // above this, every float64 nearby is over 2^63
	if u > limit {
		return 0, false
	}
	var r uint64 // the rounded magnitude
	switch k := bits.Len64(u) - 1; {
	case u == 0:
		// Below 1: zero when under half the smallest subnormal (2^-1075, a
		// tie going to zero), one when within half a unit (2^-54) of it.
		switch {
		case cmpFrac(frac, halfPow(1075)) <= 0:
			r = 0
		case cmpFrac(frac, oneMinus(halfPow(54))) >= 0:
			r = 1
		default:
			return 0, false
		}
	case k >= 52:
		// Units of at least 1: the fraction only breaks a tie.
		shift := uint(k - 52)
		unit := uint64(1) << shift
		q, rem := u>>shift, u&(unit-1)
		half := unit / 2
		up := false
		if shift == 0 {
			c := cmpFrac(frac, []byte("5"))
			up = c > 0 || c == 0 && q&1 == 1
		} else {
			up = rem > half || rem == half && (len(frac) > 0 || q&1 == 1)
		}
		if up {
			q++
		}
		r = q << shift
	default:
		// Units below 1 (2^(k-52)): an integer only within half a unit of
		// u or u+1; both have even significands, so ties go to them.
		h := halfPow(53 - k)
		switch {
		case cmpFrac(frac, h) <= 0:
			r = u
		case cmpFrac(frac, oneMinus(h)) >= 0:
			r = u + 1
		default:
			return 0, false
		}
	}
	if neg {
		if r > 1<<63 {
			return 0, false
		}
		return -int64(r), true // r == 2^63 wraps to the minimum, as meant
	}
	if r >= 1<<63 {
		return 0, false
	}
	return int64(r), true
}

// halfPow returns the decimal digits after the point of 2^-m (m of them).
func halfPow(m int) []byte {
	// 2^-m = 5^m / 10^m: 5^m, little-endian while it grows, padded to m.
	p := make([]byte, 1, m)
	p[0] = 1
	for range m {
		carry := byte(0)
		for k := range p {
			v := p[k]*5 + carry
			p[k], carry = v%10, v/10
		}
		if carry > 0 {
			p = append(p, carry)
		}
	}
	out := make([]byte, m)
	for k := range out {
		out[k] = '0'
	}
	for k, v := range p {
		out[m-1-k] = '0' + v
	}
	return out
}

// oneMinus returns the digits of 1 - x for the fraction digits x (x > 0):
// 10^len(x) - x, digit by digit.
func oneMinus(x []byte) []byte {
	out := make([]byte, len(x))
	last := len(x) - 1
	for last > 0 && x[last] == '0' {
		last--
	}
	for k := range out {
		switch {
		case k < last:
			out[k] = '0' + 9 - (x[k] - '0')
		case k == last:
			out[k] = '0' + 10 - (x[k] - '0')
		default:
			out[k] = '0'
		}
	}
	return out
}

// cmpFrac compares two fractions given as their digits after the point.
func cmpFrac(a, b []byte) int {
	for k := 0; k < len(a) || k < len(b); k++ {
		x, y := byte('0'), byte('0')
		if k < len(a) {
			x = a[k]
		}
		if k < len(b) {
			y = b[k]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}
