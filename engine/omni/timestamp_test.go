package omni

import (
	"testing"
	"time"
)

func TestFormatTimestamp(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(2026, 7, 18, 3, 10, 22, 531_999_999, time.UTC),
		time.Date(1999, 12, 31, 23, 59, 59, 0, time.FixedZone("x", -5*3600)),
		time.Date(2024, 2, 29, 0, 0, 0, 1_000_000, time.UTC),
		time.Unix(0, 0),
	} {
		if got, want := FormatTimestamp(tm), tm.UTC().Format(TimestampLayout); got != want {
			t.Errorf("FormatTimestamp(%v) = %s, want %s", tm, got, want)
		}
		if got, want := FormatDate(tm), tm.Format("2006-01-02"); got != want {
			t.Errorf("FormatDate(%v) = %s, want %s", tm, got, want)
		}
	}
}

func FuzzParseTimestamp(f *testing.F) {
	for _, s := range []string{
		"2026-07-18T03:10:22.531Z", "2026-07-18T03:10:22Z", "2026-07-18t03:10:22.5z",
		"2026-07-18T03:10:22.123456789+05:30", "2026-07-18T03:10:22-00:00", "2023-02-29T00:00:00Z",
		"2026-07-18T03:10:22.Z", "2026-07-18T03:10:22.1234567891Z", "2026-07-18 03:10:22Z", "",
		"2026-07-18T24:00:00Z", "2026-07-18T03:10:22+24:00", "2026-07-18T03:10:22+05:60",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseTimestamp(s)
		// RFC 3339 allows "t" and "z"; time.Parse wants them upper case.
		up := []byte(s)
		if len(up) > 10 && up[10] == 't' {
			up[10] = 'T'
		}
		if len(up) > 0 && up[len(up)-1] == 'z' {
			up[len(up)-1] = 'Z'
		}
		want, werr := time.Parse(time.RFC3339, string(up))
		if err == nil && werr != nil {
			t.Fatalf("%q: accepted, time.Parse says %v", s, werr)
		}
		if err == nil && !got.Equal(want) {
			t.Fatalf("%q: got %v, time.Parse %v", s, got, want)
		}
		if err != nil && werr == nil && len(s) == 24 && s[23] == 'Z' && s[19] == '.' {
			t.Fatalf("%q: canonical-length timestamp refused, time.Parse accepts", s)
		}
	})
}

// P-1: readers accept any RFC 3339 value, a fraction of any length among
// them (more than nine digits was refused, and a model's message with it
// ended its request malformed); nanoseconds are kept.
func TestParseTimestampLongFraction(t *testing.T) {
	for _, s := range []string{"2026-07-18T03:10:22.1234567890Z", "2026-07-18T03:10:22.123456789012345+00:00"} {
		got, err := ParseTimestamp(s)
		if want := time.Date(2026, 7, 18, 3, 10, 22, 123456789, time.UTC); err != nil || !got.Equal(want) {
			t.Errorf("ParseTimestamp(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
}
