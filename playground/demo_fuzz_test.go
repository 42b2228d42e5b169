package playground

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseDemo: ParseDemo never panics; it refuses a file with an error
// that says what is at fault in the script or in which rule (and its
// line), or gives rules of a match, something to answer, calls of known
// tools whose arguments are a JSON object that fits the tool's schema,
// and a then only after calls.
func FuzzParseDemo(f *testing.F) {
	for _, s := range []string{
		`[{"match": "a", "say": "b"}]`,
		`[{"match": "/^count (\\w+)$/i", "think": "t", "calls": [{"tool": "count_lines", "args": {"paths": ["a"]}}], "then": "c"}]`,
		`[{"match": "x", "calls": [{"tool": "edit_file", "args": {"path": "p", "old_text": "o", "new_text": ""}}]}]`,
		`[{"match": "/a(/", "say": "b"}]`, `{"match": "a"}`, `[]`, `[1, {"match": "a"}]`,
		"[\n{\"match\": \"a\", \"say\": \"b\"},\n{\"match\": \"c\", \"sya\": 1}]",
	} {
		f.Add([]byte(s))
	}
	tools := demoTools()
	fault := regexp.MustCompile(`^(the demo script |rule \d+ \(line \d+\): )`)
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseDemo(data)
		if err != nil {
			if d != nil || !fault.MatchString(err.Error()) {
				t.Fatalf("ParseDemo(%q) = %v, %q: no script or rule named", data, d, err)
			}
			if msg := err.Error(); strings.ContainsAny(msg, "\r\n") || !utf8.ValidString(msg) {
				t.Fatalf("ParseDemo(%q): %q: want one line of UTF-8", data, msg)
			}
			return
		}
		if len(d.Rules) == 0 {
			t.Fatalf("ParseDemo(%q): no rules and no error", data)
		}
		for i, r := range d.Rules {
			if strings.TrimSpace(r.Match) == "" || strings.TrimSpace(r.Think+r.Say) == "" && len(r.Calls) == 0 || r.Then != "" && len(r.Calls) == 0 {
				t.Fatalf("ParseDemo(%q): rule %d = %+v", data, i+1, r)
			}
			for _, c := range r.Calls {
				s, ok := tools[c.Tool]
				var obj map[string]any
				if !ok || json.Unmarshal(c.Args, &obj) != nil || obj == nil || s.check(c.Args) != nil {
					t.Fatalf("ParseDemo(%q): rule %d's call %s %s", data, i+1, c.Tool, c.Args)
				}
			}
			d.find(r.Match) // a match of no panic
		}
	})
}
