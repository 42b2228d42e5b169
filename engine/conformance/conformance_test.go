package conformance

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// repoRoot is the repository root (the directory holding go.mod).
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("conformance: repository root (go.mod) not found above the working directory")
		}
		dir = parent
	}
}

// sharedDir locates the shared scenario directory: $FLOE_SHARED/conformance,
// by default <repo root>/../shared/conformance.
func sharedDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("FLOE_SHARED"); d != "" {
		return filepath.Join(d, "conformance")
	}
	return filepath.Join(repoRoot(t), "..", "shared", "conformance")
}

// projectDir locates the project's own scenarios: <repo root>/testdata/conformance.
func projectDir(t *testing.T) string { return filepath.Join(repoRoot(t), "testdata", "conformance") }

// runDir runs every scenario of dir with opts, one parallel subtest each;
// check, when set, looks further at each result.
func runDir(t *testing.T, dir string, opts Options, check func(*testing.T, Result)) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("conformance: scenarios expected in %s (the shared folder sits next to the repository, or set FLOE_SHARED to it)", dir)
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
			res := Run(context.Background(), s, opts)
			if !res.Pass {
				t.Errorf("%s %s: %s", res.ID, res.Name, res.Diff)
				for _, p := range res.Problems[1:] {
					t.Logf("also: %s", p)
				}
			}
			if check != nil {
				check(t, res)
			}
		})
	}
}

// TestSharedScenarios runs every scenario of the shared directory against
// the engine, one subtest per file.
func TestSharedScenarios(t *testing.T) { runDir(t, sharedDir(t), Options{}, nil) }
