package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sharedDir is the shared provider corpus: $FLOE_SHARED/providers, by
// default ../shared/providers beside the repository. The corpus is not
// part of the project, so the test fails (never skips) without it.
func sharedDir(t *testing.T) string {
	t.Helper()
	base := os.Getenv("FLOE_SHARED")
	if base == "" {
		base = filepath.Join("..", "..", "..", "shared")
	}
	dir := filepath.Join(base, "providers")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("provider corpus not found at %s: set FLOE_SHARED to the shared folder", dir)
	}
	return dir
}

func runDir(t *testing.T, dir string) (string, int, int) {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	passed, failed, err := run(context.Background(), dir, f)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := os.ReadFile(f.Name())
	return string(out), passed, failed
}

func TestProjectCases(t *testing.T) {
	out, passed, failed := runDir(t, filepath.Join("..", "..", "testdata", "providers"))
	if failed != 0 || passed == 0 {
		t.Fatalf("%d passed, %d failed:\n%s", passed, failed, out)
	}
	if !strings.HasSuffix(out, "providers: "+itoa(passed)+" passed, 0 failed\n") {
		t.Fatalf("summary line missing:\n%s", out)
	}
}

func TestSharedCases(t *testing.T) {
	out, passed, failed := runDir(t, sharedDir(t))
	if failed != 0 || passed == 0 {
		t.Fatalf("%d passed, %d failed:\n%s", passed, failed, out)
	}
}

// mutate writes a copy of every case of src into a temporary directory,
// with its body changed by change (cases it returns false for are left
// out), and returns the directory and the number of cases written.
func mutate(t *testing.T, src string, change func(c map[string]any, body string) (string, bool)) (string, int) {
	t.Helper()
	dir := t.TempDir()
	files, _ := filepath.Glob(filepath.Join(src, "*.json"))
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c map[string]any
		if err := json.Unmarshal(data, &c); err != nil {
			t.Fatal(err)
		}
		resp := c["response"].(map[string]any)
		body, ok := change(c, resp["body"].(string))
		if !ok {
			continue
		}
		resp["body"] = body
		delete(resp, "chunks") // the sizes no longer add up
		out, _ := json.Marshal(c)
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), out, 0o644); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no case to mutate")
	}
	return dir, n
}

// A case whose bytes are changed fails: every completed case with its
// first event's JSON broken, and every case whose text is expected with
// one letter of that text changed in the body.
func TestMutatedCasesFail(t *testing.T) {
	for _, src := range []string{sharedDir(t), filepath.Join("..", "..", "testdata", "providers")} {
		broken, n := mutate(t, src, func(c map[string]any, body string) (string, bool) {
			ex := c["expect"].(map[string]any)
			if st, _ := ex["outcome"].(map[string]any)["status"].(string); st != "completed" {
				return "", false
			}
			i := strings.Index(body, "data:")
			j := strings.IndexByte(body[i:], '{')
			if i < 0 || j < 0 {
				return "", false
			}
			return body[:i+j] + "{\"" + body[i+j+1:], true
		})
		out, passed, failed := runDir(t, broken)
		if passed != 0 || failed != n {
			t.Errorf("broken JSON in %s: %d passed, %d failed of %d, want all to fail:\n%s", src, passed, failed, n, out)
		}
		if !strings.Contains(out, "malformed") {
			t.Errorf("the failures do not name the malformed outcome:\n%s", out)
		}

		changed, n := mutate(t, src, func(c map[string]any, body string) (string, bool) {
			text, _ := c["expect"].(map[string]any)["text"].(string)
			// every occurrence of a word of the text that the body holds
			// verbatim, with its first letter changed
			for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !isLetters(string(r)) }) {
				if len(w) >= 4 && strings.Contains(body, w) {
					repl := "Q"
					if w[0] == 'Q' {
						repl = "Z"
					}
					return strings.ReplaceAll(body, w, repl+w[1:]), true
				}
			}
			return "", false
		})
		out, passed, failed = runDir(t, changed)
		if passed != 0 || failed != n {
			t.Errorf("changed text in %s: %d passed, %d failed of %d, want all to fail:\n%s", src, passed, failed, n, out)
		}
	}
}

func isLetters(s string) bool {
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
