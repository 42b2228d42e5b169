package floe_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every fuzz target keeps a seed corpus in its package's testdata/fuzz, and
// the README's list of fuzz targets names it with its package, as
// "FuzzName ./dir/".
func TestFuzzTargetsDocumented(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	// The Testing section's list of fuzz targets, from "Fuzz targets," to
	// the sentence on this test, its line breaks and code marks taken out.
	doc := string(readme)
	start, end := strings.Index(doc, "Fuzz targets,"), strings.Index(doc, "A test (`fuzz_test.go`)")
	if start < 0 || end < start {
		t.Fatal("README: no list of fuzz targets (from \"Fuzz targets,\" to \"A test (`fuzz_test.go`)\")")
	}
	doc = doc[start:end]
	doc = strings.Join(strings.Fields(strings.ReplaceAll(doc, "`", "")), " ")
	decl := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(f \*testing\.F\)`)
	found := 0
	filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && path != ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
			name := m[1]
			found++
			seeds, _ := os.ReadDir(filepath.Join(dir, "testdata", "fuzz", name))
			if len(seeds) == 0 {
				t.Errorf("%s: %s has no seed corpus in %s", path, name, filepath.Join(dir, "testdata", "fuzz", name))
			}
			if !strings.Contains(doc, name+" ./"+filepath.ToSlash(dir)+"/") {
				t.Errorf("README: the fuzz targets do not name %s with ./%s/", name, dir)
			}
		}
		return nil
	})
	if found < 10 {
		t.Errorf("found %d fuzz targets", found)
	}
}
