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
	forbidden := map[string]bool{"syscall/js": true, "time": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
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
			path, _ := strconv.Unquote(imp.Path.Value)
			if forbidden[path] || strings.HasPrefix(path, "github.com/floehq/floe/") && path != "github.com/floehq/floe/internal/lock" {
				t.Errorf("%s imports %q", name, path)
			}
		}
	}
}
