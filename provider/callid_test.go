package provider

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// CallID and AlnumID take any bound an adapter of one's own gives them:
// CallID panicked below 12 bytes (it cut the id at a negative length) and
// AlnumID above 11 characters (the hash filled 11). Each result fits its
// bound, is valid UTF-8, is the same for the same id, and two ids give two
// results; what the built-in adapters send (40 and 64 bytes, 9 characters)
// does not change.
func TestCallIDBounds(t *testing.T) {
	ids := []string{
		"call_1", "functions.get_weather:0", "呼び出し-その一", "呼び出し-その二",
		"chatcmpl-tool-0123456789abcdef0123456789abcdef",
		strings.Repeat("x", 100) + "1", strings.Repeat("x", 100) + "2",
	}
	for bound := 0; bound <= 70; bound++ {
		seen := map[string]string{}
		for _, id := range ids {
			got := CallID(id, bound)
			if len(got) > bound || !utf8.ValidString(got) || got != CallID(id, bound) {
				t.Fatalf("CallID(%q, %d) = %q", id, bound, got)
			}
			if other, ok := seen[got]; ok && bound >= 8 {
				t.Fatalf("CallID(%q, %d) = CallID(%q, %d) = %q", id, bound, other, bound, got)
			}
			seen[got] = id
			a := AlnumID(id, bound)
			if len(a) != bound || a != AlnumID(id, bound) || strings.Trim(a, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
				t.Fatalf("AlnumID(%q, %d) = %q", id, bound, a)
			}
		}
	}
	if got := CallID("chatcmpl-tool-0123456789abcdef0123456789abcdef", 40); got != "chatcmpl-tool-0123456789abcd_"+hashID("chatcmpl-tool-0123456789abcdef0123456789abcdef", 11) || len(got) != 40 {
		t.Errorf("CallID of vLLM's id to 40 bytes = %q", got)
	}
	if a, b := AlnumID("call_1", 9), AlnumID("call_1", 20); a != b[:9] {
		t.Errorf("AlnumID(…, 20) = %q does not extend AlnumID(…, 9) = %q", b, a)
	}
}
