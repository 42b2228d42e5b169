package ptest

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// LongStart begins every LongMessage.
const LongStart = "The server says: "

// LongMessage is a provider's error message of about n bytes, LongStart
// then two-byte characters, which a cut at a byte count may split.
func LongMessage(n int) string {
	return LongStart + strings.Repeat("é", n/2)
}

// CheckLongCut fails t unless an error message that quoted a
// LongMessage quotes its start, cut within a few KiB with the mark "…",
// no character split.
func CheckLongCut(t *testing.T, what, msg string) {
	t.Helper()
	if !strings.Contains(msg, LongStart+"éééé") || !strings.Contains(msg, "é…") || len(msg) > 2300 || !utf8.ValidString(msg) {
		t.Errorf("%s: a message of %d bytes: %.100q…%q", what, len(msg), msg, msg[max(0, len(msg)-40):])
	}
}
