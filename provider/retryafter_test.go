package provider

import (
	"io"
	"strings"
	"testing"
	"time"
)

// Retry-After is a number of seconds or an HTTP date: IMF-fixdate, or
// the obsolete RFC 850 and asctime forms RFC 9110 §5.6.7 has recipients
// accept (they were not read: the wait was the backoff's). RFC 850's
// two-digit year is the latest year of those digits that is not more
// than 50 years ahead.
func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"0":                                 0,
		"20":                                20 * time.Second,
		" 7 ":                               7 * time.Second,
		"99999999999999999999":              maxParsedWait,
		"Mon, 02 Mar 2026 10:01:30 GMT":     90 * time.Second,
		"Tue, 31 Dec 2999 23:59:59 GMT":     maxParsedWait,
		"Mon, 02 Mar 2026 09:00:00 GMT":     0, // past
		"Monday, 02-Mar-26 10:00:45 GMT":    45 * time.Second,
		"Wednesday, 02-Mar-26 10:00:45 GMT": 45 * time.Second, // the weekday's name is not checked, as IMF-fixdate's is not
		"Sunday, 06-Nov-94 08:49:37 GMT":    0,                // 1994, not 2094
		"Monday, 02-Mar-76 10:00:00 GMT":    maxParsedWait,    // 2076: 50 years ahead, not more
		"Monday, 02-Mar-76 10:00:01 GMT":    0,                // 1976
		"Mon Mar  2 10:00:05 2026":          5 * time.Second,
		"Mon Mar 02 10:00:05 2026":          5 * time.Second,
		"Sun Nov  6 08:49:37 1994":          0,
	} {
		if d, ok := ParseRetryAfter(v, now); !ok || d != want {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v", v, d, ok, want)
		}
	}
	for _, v := range []string{"", "-1", "1.5", "soon", "+3", "Mon, 02 Mar 2026", "3 s", "Monday, 02-Mar-2026 10:00:45 GMT", "Mon, 02-Mar-26 10:00:45 GMT", "Monday, 02 Mar 2026 10:00:45 GMT", "Monday, 02-Mar-26 10:00:45 UTC", "Monday, 2-Mar-26 10:00:45 GMT", "Monday,02-Mar-26 10:00:45 GMT", "Mon Mar  2 10:00:05 2026 GMT", "Mon Mar 2 10:00:05 2026", "Mon Mar  x 10:00:05 2026", "Mon Mar   10:00:05 2026", "Mon Mzr  2 10:00:05 2026", "Mon Mar  2 10:60:05 2026", "Mon Mar  0 10:00:05 2026", "Mon, 02 Mar 2026 10:00:05 UTC", "Mon, 02 Mrz 2026 10:00:05 GMT", "Mon, 32 Mar 2026 10:00:05 GMT", "Mon, 02 Mar 2026 24:00:05 GMT", "Mon, 0x Mar 2026 10:00:05 GMT"} {
		if d, ok := ParseRetryAfter(v, now); ok {
			t.Errorf("ParseRetryAfter(%q) = %v, want not ok", v, d)
		}
	}
}

// A 429, 503 or 529 that says how long to wait (Retry-After, or OpenAI's
// retry-after-ms) gives its outcome that wait, which the engine's retry
// waits when it is longer than its backoff; one longer than
// MaxRetryAfter fails at once, permanent, naming the wait (retried after
// the backoff, the request was refused again until the retries ran out).
// Other statuses' Retry-After is only quoted.
func TestStatusFailureRetryAfter(t *testing.T) {
	defer func(f func() time.Time) { now = f }(now)
	now = func() time.Time { return time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		status    int
		header    map[string]string
		wait      time.Duration
		permanent bool
		contains  string
	}{
		{429, map[string]string{"retry-after": "20"}, 20 * time.Second, false, "(Retry-After: 20)"},
		{529, map[string]string{"retry-after": "Mon, 02 Mar 2026 10:01:00 GMT"}, time.Minute, false, "(Retry-After: Mon, 02 Mar 2026 10:01:00 GMT)"},
		{503, map[string]string{"retry-after": "120"}, 2 * time.Minute, false, ""},
		{429, map[string]string{"retry-after": "2", "retry-after-ms": "1500"}, 1500 * time.Millisecond, false, ""},
		{429, map[string]string{"retry-after": "soon"}, 0, false, "(Retry-After: soon)"},
		{429, map[string]string{"retry-after": "3600"}, 0, true, "x: HTTP 429: rate_limit_error: slow down (Retry-After: 3600): rate-limited: the server asks for a wait of 3600 s before another request, longer than a retry waits (at most 120 s)"},
		{503, map[string]string{"retry-after": "Tue, 03 Mar 2026 10:00:00 GMT"}, 0, true, "the server asks for a wait of 86400 s before another request"},
		{400, map[string]string{"retry-after": "20"}, 0, true, "(Retry-After: 20)"},
		{401, map[string]string{"retry-after": "3600"}, 0, false, "(Retry-After: 3600)"},
	} {
		f := StatusFailure("x", &Response{Status: tc.status, Header: tc.header, Body: io.NopCloser(strings.NewReader(`{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`))})
		o := f.Outcome()
		if o.RetryAfter != tc.wait || o.Permanent != tc.permanent || !strings.Contains(o.ErrorMessage, tc.contains) {
			t.Errorf("%d %v: outcome %+v; want wait %v, permanent %v, %q", tc.status, tc.header, o, tc.wait, tc.permanent, tc.contains)
		}
		if tc.permanent && tc.status != 400 && (o.Status != "failed" || strings.Contains(o.ErrorMessage, "rate-limited") != (tc.status == 429)) {
			t.Errorf("%d %v: outcome %+v, want failed", tc.status, tc.header, o)
		}
	}
}

// ParseRetryAfter never panics, and a wait it reads is within [0, a year].
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"20", "0", "99999999999999999999", "Mon, 02 Mar 2026 10:01:30 GMT", "-1", "1.5", " 7 "} {
		f.Add(s)
	}
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		if d, ok := ParseRetryAfter(v, now); d < 0 || d > maxParsedWait || !ok && d != 0 {
			t.Fatalf("ParseRetryAfter(%q) = %v, %v", v, d, ok)
		}
	})
}

// httpDate's arithmetic agrees with time.Date, leap days and the months
// before March included, in each of the three forms (RFC 850's for the
// years its two digits name at now).
func TestHTTPDate(t *testing.T) {
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC).Unix()
	for _, at := range []time.Time{
		time.Date(1994, 11, 6, 8, 49, 37, 0, time.UTC), time.Date(2000, 2, 29, 23, 59, 59, 0, time.UTC),
		time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2100, 3, 1, 12, 0, 0, 0, time.UTC),
		time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 31, 1, 2, 3, 0, time.UTC),
	} {
		forms := []string{"Mon, 02 Jan 2006 15:04:05 GMT", time.ANSIC}
		if at.Year() > 1976 && at.Year() <= 2076 {
			forms = append(forms, "Monday, 02-Jan-06 15:04:05 GMT")
		}
		for _, form := range forms {
			v := at.Format(form)
			if got, ok := httpDate(v, now); !ok || got != at.Unix() {
				t.Errorf("httpDate(%q) = %d, %v; want %d", v, got, ok, at.Unix())
			}
		}
	}
}

// Gemini says its wait in the 429's body, not in a header: the
// google.rpc.RetryInfo detail's retryDelay ("30s", "1.5s"), read as
// Retry-After is (it was not read: the retry came after the backoff's
// 2 s and was refused again). A header wins over it.
func TestStatusFailureRetryDelay(t *testing.T) {
	body := func(delay string) string {
		return `[{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED","details":[` +
			`{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"x"}]},` +
			`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"` + delay + `"}]}}]`
	}
	for _, tc := range []struct {
		status    int
		header    map[string]string
		body      string
		wait      time.Duration
		permanent bool
		contains  string
	}{
		{429, nil, body("30s"), 30 * time.Second, false, "RESOURCE_EXHAUSTED: Resource has been exhausted (retryDelay: 30s)"},
		{429, nil, body("1.5s"), 1500 * time.Millisecond, false, ""},
		{503, nil, body("0.000000001s"), time.Nanosecond, false, ""},
		{429, nil, body("120s"), 2 * time.Minute, false, ""},
		{429, nil, strings.Trim(body("45s"), "[]"), 45 * time.Second, false, ""}, // the native API's object
		{429, map[string]string{"retry-after": "7"}, body("30s"), 7 * time.Second, false, ""},
		{429, nil, body("3600s"), 0, true, "rate-limited: the server asks for a wait of 3600 s before another request"},
		{429, nil, body("99999999999999999999.5s"), 0, true, "longer than a retry waits"},
		{429, nil, body("30"), 0, false, ""},
		{429, nil, body("1.s"), 0, false, ""},
		{429, nil, body(".5s"), 0, false, ""},
		{429, nil, body("1.0000000001s"), 0, false, ""},
		{429, nil, body("-1s"), 0, false, ""},
		{400, nil, body("30s"), 0, true, ""},
	} {
		f := StatusFailure("x", &Response{Status: tc.status, Header: tc.header, Body: io.NopCloser(strings.NewReader(tc.body))})
		o := f.Outcome()
		if o.RetryAfter != tc.wait || o.Permanent != tc.permanent || !strings.Contains(o.ErrorMessage, tc.contains) {
			t.Errorf("%d %v %s: outcome %+v; want wait %v, permanent %v, %q", tc.status, tc.header, tc.body, o, tc.wait, tc.permanent, tc.contains)
		}
	}
}
