package floe_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Every DiagnosticKind the engine declares is the whole list: floe.d.ts
// names exactly those kinds, and no code reports a kind written as a string
// literal instead of one of the constants.
func TestDiagnosticKindsListed(t *testing.T) {
	api, err := os.ReadFile("engine/api.go")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, m := range regexp.MustCompile(`(?m)^\s+Diag\w+\s+DiagnosticKind = "(\w+)"`).FindAllStringSubmatch(string(api), -1) {
		kinds = append(kinds, m[1])
	}
	if len(kinds) < 7 {
		t.Fatalf("found %d DiagnosticKind constants in engine/api.go", len(kinds))
	}
	dts, err := os.ReadFile("static/floe.d.ts")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`export type DiagnosticKind = ([^;]+);`).FindStringSubmatch(string(dts))
	if m == nil {
		t.Fatal("floe.d.ts has no DiagnosticKind type")
	}
	var listed []string
	for _, q := range regexp.MustCompile(`"(\w+)"`).FindAllStringSubmatch(m[1], -1) {
		listed = append(listed, q[1])
	}
	slices.Sort(kinds)
	slices.Sort(listed)
	if !slices.Equal(kinds, listed) {
		t.Errorf("floe.d.ts DiagnosticKind %v, engine %v", listed, kinds)
	}
	literal := regexp.MustCompile(`(diag\(|Kind: |\)\()"(trace|approver|tool|llm|panic|subagent|clock)"`)
	for _, dir := range []string{"engine", "jsbridge", "web", "wasm", "playground"} {
		filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			src, _ := os.ReadFile(path)
			if loc := literal.FindIndex(src); loc != nil {
				t.Errorf("%s: a diagnostic kind written as a literal: %q", path, src[loc[0]:min(len(src), loc[1]+12)])
			}
			return nil
		})
	}
	mjs, _ := os.ReadFile("static/floe.mjs")
	for _, q := range regexp.MustCompile(`diag\("(\w+)"`).FindAllStringSubmatch(string(mjs), -1) {
		if !slices.Contains(kinds, q[1]) {
			t.Errorf("floe.mjs reports kind %q, not a DiagnosticKind", q[1])
		}
	}
}
