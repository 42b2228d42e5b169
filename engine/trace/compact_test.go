package trace

import (
	"bytes"
	"encoding/json"
	"testing"
)

// compactJSON replaces json.Compact in the Writer; on valid JSON it must
// give the same bytes.
func FuzzCompactJSON(f *testing.F) {
	for _, s := range []string{
		`{"a": 1,\n "b": [1, 2]}`,
		"{\n\t\"s\": \"a \\\" b\\\\\",\r\n \"t\" : \"x\\ny\"\n}",
		`[ ]`, `"  "`, `{"k":"\\"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		var want bytes.Buffer
		if json.Compact(&want, src) != nil {
			return
		}
		if got := compactJSON(src); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("compactJSON(%q) = %q, want %q", src, got, want.Bytes())
		}
	})
}
