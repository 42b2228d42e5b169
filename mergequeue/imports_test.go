package mergequeue_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the package pure Go and clock-free: time comes from
// the caller's context, never from the package itself. Of Floe's packages
// it takes only internal/lock, which imports no more than sync.
func TestImports(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		dir string
		ok  func(path string) bool
	}{
		{".", func(path string) bool {
			return path != "syscall/js" && path != "time" &&
				(!strings.HasPrefix(path, "github.com/floehq/floe/") || path == "github.com/floehq/floe/internal/lock")
		}},
		{"../internal/lock", func(path string) bool { return path == "sync" }},
	} {
		files, err := filepath.Glob(filepath.Join(c.dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", c.dir, err)
		}
		fset := token.NewFileSet()
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				if path, _ := strconv.Unquote(imp.Path.Value); !c.ok(path) {
					t.Errorf("%s imports %q", name, path)
				}
			}
		}
	}
}
