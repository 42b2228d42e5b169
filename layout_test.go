package floe_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// The README's Layout names every folder of the repository's root (but
// hidden ones) and every
// folder of tests/, so that a contributor finds what each holds: a folder
// added without its line there fails here.
func TestLayoutNamesEveryFolder(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(readme)
	start := strings.Index(doc, "\n## Layout\n")
	if start < 0 {
		t.Fatal("README: no Layout section")
	}
	block := doc[start:]
	open := strings.Index(block, "```\n")
	if open < 0 {
		t.Fatal("README: the Layout section has no code block")
	}
	block = block[open+4:]
	block = block[:strings.Index(block, "```")]
	out, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout (git ls-files: %v)", err)
	}
	top, tests := map[string]bool{}, map[string]bool{}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		parts := strings.Split(name, "/")
		if len(parts) > 1 && !strings.HasPrefix(parts[0], ".") {
			top[parts[0]] = true
		}
		if len(parts) > 2 && parts[0] == "tests" {
			tests[parts[1]] = true
		}
	}
	// A root folder starts a line of the block ("engine/", "cmd/floe-conform").
	for dir := range top {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(dir) + `/`).MatchString(block) {
			t.Errorf("README: the Layout does not name %s/ at the start of a line", dir)
		}
	}
	// A folder of tests/ is named as a word of tests/'s lines.
	i := strings.Index(block, "\ntests/")
	if i < 0 {
		t.Fatal("README: the Layout has no tests/ line")
	}
	entry := block[i+1:]
	if j := regexp.MustCompile(`\n\S`).FindStringIndex(entry); j != nil {
		entry = entry[:j[0]] // up to the next folder's line
	}
	for dir := range tests {
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(dir) + `\b`).MatchString(entry) {
			t.Errorf("README: the Layout's tests/ lines do not name tests/%s", dir)
		}
	}
	if len(top) < 10 || len(tests) < 5 {
		t.Errorf("found %d root folders and %d test folders", len(top), len(tests))
	}
}
