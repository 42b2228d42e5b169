package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResumeSummaryLine(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "conformance")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the project's scenarios are expected in %s: %v", dir, err)
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--resume", dir}, &stdout, &stderr)
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "conformance (native, resume): ") || !strings.HasSuffix(last, " passed, 0 failed") || code != 0 {
		t.Errorf("exit %d, last line %q, stderr %q", code, last, stderr.String())
	}
	for _, l := range lines[:len(lines)-1] {
		if !strings.HasPrefix(l, "PASS ") {
			t.Errorf("line %q", l)
		}
	}
}

func TestResumeFailureExitsOne(t *testing.T) {
	dir := t.TempDir()
	bad := `{"format": "omni-conformance/1", "id": "X1", "name": "broken"}`
	if err := os.WriteFile(filepath.Join(dir, "X1_broken.json"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--resume", dir}, &stdout, &stderr)
	out := stdout.String()
	if code != 1 || !strings.Contains(out, "FAIL X1_broken X1_broken.json\n    load: ") || !strings.HasSuffix(out, "conformance (native, resume): 0 passed, 1 failed\n") {
		t.Errorf("exit %d, output %q", code, out)
	}
}
