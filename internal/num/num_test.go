package num

import (
	"strconv"
	"testing"
)

func TestDigits(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"0", 0, true}, {"007", 7, true}, {"1234567890", 1234567890, true},
		{"9223372036854775807", 1<<63 - 1, true},
		{"9223372036854775808", 0, false}, {"99999999999999999999", 0, false},
		{"", 0, false}, {"-1", 0, false}, {"+1", 0, false}, {"1_000", 0, false}, {" 1", 0, false}, {"1a", 0, false}, {"١", 0, false},
	} {
		got, ok := Digits(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("Digits(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
		if gotB, okB := Digits([]byte(c.in)); gotB != got || okB != ok {
			t.Errorf("Digits([]byte(%q)) = %d, %v; the string gave %d, %v", c.in, gotB, okB, got, ok)
		}
	}
}

// FuzzDigits checks Digits against strconv.Atoi on the inputs both take:
// ASCII digits alone.
func FuzzDigits(f *testing.F) {
	for _, s := range []string{"0", "42", "0001", "9223372036854775807", "9223372036854775808", "", "-3", "+3", "1_0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := Digits(s)
		digits := len(s) > 0
		for i := range len(s) {
			digits = digits && s[i] >= '0' && s[i] <= '9'
		}
		want, err := strconv.Atoi(s)
		wantOK := digits && err == nil
		if !wantOK {
			want = 0
		}
		if got != want || ok != wantOK {
			t.Fatalf("Digits(%q) = %d, %v; want %d, %v", s, got, ok, want, wantOK)
		}
	})
}
