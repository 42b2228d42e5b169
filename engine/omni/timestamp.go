package omni

import (
	"errors"
	"strconv"
	"time"
)

// Timestamps are formatted and parsed by hand: time.Format and time.Parse
// bring in about 60 KB of code that the WebAssembly build can do without.

// FormatTimestamp formats t as P-1 requires, the way JavaScript's
// Date.prototype.toISOString does: UTC, milliseconds, "Z"
// (2006-01-02T15:04:05.000Z).
func FormatTimestamp(t time.Time) string {
	t = t.UTC()
	b := make([]byte, 0, 24)
	b = appendDate(b, t)
	h, m, s := t.Clock()
	b = append(b, 'T')
	b = appendInt(b, h, 2)
	b = append(b, ':')
	b = appendInt(b, m, 2)
	b = append(b, ':')
	b = appendInt(b, s, 2)
	b = append(b, '.')
	b = appendInt(b, t.Nanosecond()/1e6, 3)
	return string(append(b, 'Z'))
}

// Stamper formats timestamps as FormatTimestamp does, reusing the last
// string within the same millisecond and, within the same minute,
// rewriting only its seconds and milliseconds (no calendar arithmetic).
// Not safe for concurrent use. The zero value is ready.
type Stamper struct {
	_   [0]func() // not comparable: a cache, no equality code
	ms  int64
	str string
	buf [24]byte // str, when it is 24 bytes: "2006-01-02T15:04:05.000Z"
}

// Format returns t's timestamp.
func (st *Stamper) Format(t time.Time) string {
	ms := t.UnixMilli()
	switch {
	case ms == st.ms && st.str != "":
	case ms >= 0 && st.ms >= 0 && ms/60000 == st.ms/60000 && len(st.str) == len(st.buf):
		sec, milli := ms/1000%60, ms%1000
		st.buf[17], st.buf[18] = byte('0'+sec/10), byte('0'+sec%10)
		st.buf[20], st.buf[21], st.buf[22] = byte('0'+milli/100), byte('0'+milli/10%10), byte('0'+milli%10)
		st.ms, st.str = ms, string(st.buf[:])
	default:
		st.ms, st.str = ms, FormatTimestamp(t)
		copy(st.buf[:], st.str)
	}
	return st.str
}

// FormatDate formats the date of t in its location as 2006-01-02 (the
// trace directory name of P-11).
func FormatDate(t time.Time) string { return string(appendDate(nil, t)) }

func appendDate(b []byte, t time.Time) []byte {
	y, mo, d := t.Date()
	if y < 0 || y > 9999 { // outside what the layout can say; clamp like a 4-digit year
		y = max(0, min(y, 9999))
	}
	b = appendInt(b, y, 4)
	b = append(b, '-')
	b = appendInt(b, int(mo), 2)
	b = append(b, '-')
	return appendInt(b, d, 2)
}

func appendInt(b []byte, v, width int) []byte {
	s := strconv.Itoa(v)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

var errTimestamp = errors.New("not an RFC 3339 date-time")

// ParseTimestamp parses an RFC 3339 date-time (P-1: readers accept any):
// full-date "T" full-time, optional fraction, "Z" or a ±hh:mm offset ("t"
// and "z" accepted in lower case, as RFC 3339 allows).
func ParseTimestamp(s string) (time.Time, error) {
	if isCanonicalTimestamp(s) { // the common case, already range-checked
		return time.Date(atoi(s[0:4]), time.Month(atoi(s[5:7])), atoi(s[8:10]),
			atoi(s[11:13]), atoi(s[14:16]), atoi(s[17:19]), atoi(s[20:23])*1e6, time.UTC), nil
	}
	if len(s) < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':' {
		return time.Time{}, errTimestamp
	}
	digits := func(part string) bool {
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				return false
			}
		}
		return true
	}
	for _, part := range []string{s[0:4], s[5:7], s[8:10], s[11:13], s[14:16], s[17:19]} {
		if !digits(part) {
			return time.Time{}, errTimestamp
		}
	}
	year, month, day := atoi(s[0:4]), atoi(s[5:7]), atoi(s[8:10])
	hour, minute, sec := atoi(s[11:13]), atoi(s[14:16]), atoi(s[17:19])
	if month < 1 || month > 12 || day < 1 || day > daysIn(month, year) || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, errTimestamp
	}
	rest, nsec := s[19:], 0
	if rest[0] == '.' {
		i := 1
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 1 {
			return time.Time{}, errTimestamp
		}
		frac := rest[1:min(i, 10)] // any number of digits; nanoseconds kept
		nsec = atoi(frac)
		for k := len(frac); k < 9; k++ {
			nsec *= 10
		}
		rest = rest[i:]
	}
	loc := time.UTC
	switch {
	case rest == "Z" || rest == "z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':' && digits(rest[1:3]) && digits(rest[4:6]):
		oh, om := atoi(rest[1:3]), atoi(rest[4:6])
		if oh > 23 || om > 59 {
			return time.Time{}, errTimestamp
		}
		off := (oh*60 + om) * 60
		if rest[0] == '-' {
			off = -off
		}
		loc = time.FixedZone("", off)
	default:
		return time.Time{}, errTimestamp
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, nsec, loc), nil
}

func atoi(s string) int {
	v := 0
	for i := 0; i < len(s); i++ {
		v = v*10 + int(s[i]-'0')
	}
	return v
}

func daysIn(month, year int) int {
	days := [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[month]
	if month == 2 && year%4 == 0 && (year%100 != 0 || year%400 == 0) {
		days = 29
	}
	return days
}
