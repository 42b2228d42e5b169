package trace_test

import (
	"testing"

	"github.com/floehq/floe/engine"
)

// Resume rebuilds the pending summary with the engine's EXTRACT (ENGINE.md
// §18), the function compaction used when it wrote the Trace. These cases pin
// the behaviour resume depends on.
func TestExtractSummaryForResume(t *testing.T) {
	for _, tc := range []struct{ name, raw, want string }{
		{"square", "[summary]abc[/summary]", "abc"},
		{"surrounding text dropped", "Here it is:\n[summary] x y [/summary]\nthanks", "x y"},
		{"multi-line body", "[summary]line 1\nline 2[/summary]", "line 1\nline 2"},
		{"first non-empty block wins", "[summary]  [/summary][summary]second[/summary][summary]third[/summary]", "second"},
		{"square before angle", "<summary>angle</summary>[summary]square[/summary]", "square"},
		{"angle when no square qualifies", "[summary] [/summary]<summary>angle</summary>", "angle"},
		{"legacy angle", "<summary>old style</summary>", "old style"},
		{"nested open tag stripped", "[summary]a [summary]b[/summary]", "a b"},
		{"mixed tags stripped from body", "[summary]a <summary>b</summary> c[/summary]", "a b c"},
		{"tagless verbatim", "  just the text \n", "just the text"},
		{"empty blocks removed", "text [summary] [/summary] more", "text  more"},
		{"stray tags removed", "stray [/summary] tag <summary>", "stray  tag"},
		{"unclosed", "[summary]x", "x"},
		{"only empty blocks", "[summary]\n\n[/summary]<summary> </summary>", ""},
		{"empty", "", ""},
		{"case-sensitive", "[SUMMARY]x[/SUMMARY]", "[SUMMARY]x[/SUMMARY]"},
	} {
		if got := engine.ExtractSummary(tc.raw); got != tc.want {
			t.Errorf("%s: ExtractSummary(%q) = %q, want %q", tc.name, tc.raw, got, tc.want)
		}
	}
}
