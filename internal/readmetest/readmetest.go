// Package readmetest keeps a README's code the same as the test code
// that runs it: a test file marks the lines with "// README <name> begin"
// and "// README <name> end", and [Check] wants a fenced block of the
// README that holds them word for word (one tab of indentation less).
// Tests only.
package readmetest

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

var fenced = regexp.MustCompile("(?s)```go\n(.*?)```")

// Check fails t unless readme (a path) has a ```go block that is the
// lines of src (a path) between the markers of name.
func Check(t testing.TB, readme, src, name string) {
	t.Helper()
	doc, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	code, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := "\t// README "+name+" begin\n", "\t// README "+name+" end\n"
	_, body, ok := strings.Cut(string(code), begin)
	body, _, ok2 := strings.Cut(body, end)
	if !ok || !ok2 {
		t.Fatalf("%s: no lines between %q and %q", src, begin, end)
	}
	var want strings.Builder
	for line := range strings.Lines(body) {
		want.WriteString(strings.TrimPrefix(line, "\t"))
	}
	for _, m := range fenced.FindAllStringSubmatch(string(doc), -1) {
		if m[1] == want.String() {
			return
		}
	}
	t.Errorf("%s: no ```go block is %s's %q lines, word for word:\n%s", readme, src, name, want.String())
}
