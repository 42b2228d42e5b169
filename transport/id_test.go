package transport

import (
	"strconv"
	"strings"
	"testing"
)

func TestParseID(t *testing.T) {
	for _, tc := range []struct {
		in    string
		epoch string
		seq   uint64
		ok    bool
	}{
		{"ab12cd34-7", "ab12cd34", 7, true},
		{"a-b-c-0", "a-b-c", 0, true},
		{"-3", "", 3, true},
		{"abc", "", 0, false},
		{"abc-", "", 0, false},
		{"abc--3", "abc-", 3, true}, // split at the last "-"
		{"abc-3.0", "", 0, false},
		{"abc- 3", "", 0, false},
		{"abc-18446744073709551616", "", 0, false},
		{"abc-18446744073709551615", "abc", 18446744073709551615, true},
	} {
		epoch, seq, ok := ParseID(tc.in)
		if ok != tc.ok || (ok && (epoch != tc.epoch || seq != tc.seq)) {
			t.Errorf("ParseID(%q) = %q, %d, %v", tc.in, epoch, seq, ok)
		}
	}
}

// FuzzParseID checks ParseID against a plain reading of T-8 and that every
// id FormatID makes parses back.
func FuzzParseID(f *testing.F) {
	for _, s := range []string{"ab12cd34-7", "a-b-0", "x", "", "-", "e-01", "e-+1", "e--1", "e-1e3", "é-9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		epoch, seq, ok := ParseID(s)
		i := strings.LastIndex(s, "-")
		wantOK := false
		var want uint64
		if i >= 0 {
			d := s[i+1:]
			if d != "" && strings.Trim(d, "0123456789") == "" {
				n, err := strconv.ParseUint(d, 10, 64)
				want, wantOK = n, err == nil
			}
		}
		if ok != wantOK || (ok && (seq != want || epoch != s[:i])) {
			t.Fatalf("ParseID(%q) = %q, %d, %v; want %d, %v", s, epoch, seq, ok, want, wantOK)
		}
		if ok {
			if e2, s2, ok2 := ParseID(FormatID(epoch, seq)); !ok2 || e2 != epoch || s2 != seq {
				t.Fatalf("round trip of %q, %d failed", epoch, seq)
			}
		}
	})
}
