package conformance

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sharedDir locates the shared scenario directory: $FLOE_SHARED/conformance,
// by default <repo root>/../shared/conformance.
func sharedDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("FLOE_SHARED"); d != "" {
		return filepath.Join(d, "conformance")
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "conformance")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("conformance: repository root (go.mod) not found; set FLOE_SHARED")
		}
		dir = parent
	}
}

// TestSharedScenarios runs every scenario of the shared directory against
// the engine, one subtest per file.
func TestSharedScenarios(t *testing.T) {
	dir := sharedDir(t)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Skipf("conformance: no scenario directory at %s (set FLOE_SHARED to the shared directory)", dir)
	}
	scenarios, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(scenarios) == 0 {
		t.Fatalf("conformance: no *.json scenario in %s", dir)
	}
	for _, s := range scenarios {
		name := strings.TrimSuffix(filepath.Base(s.Path), ".json")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res := Run(context.Background(), s, Options{})
			if !res.Pass {
				t.Errorf("%s %s: %s", res.ID, res.Name, res.Diff)
				for _, p := range res.Problems[1:] {
					t.Logf("also: %s", p)
				}
			}
		})
	}
}
