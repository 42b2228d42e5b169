package godebug

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// exported returns the exported functions, and the exported methods of
// exported types, declared in the Go files of dir (tests left out), each
// as its signature: "func (*Setting) Value() string".
func exported(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || !fn.Name.IsExported() {
				continue
			}
			recv := ""
			if fn.Recv != nil {
				var b bytes.Buffer
				printer.Fprint(&b, fset, fn.Recv.List[0].Type)
				if !ast.IsExported(strings.TrimPrefix(b.String(), "*")) {
					continue // a method of an unexported type: not the API
				}
				recv = "(" + b.String() + ") "
			}
			var b bytes.Buffer
			printer.Fprint(&b, fset, &ast.FuncType{Params: stripNames(fn.Type.Params), Results: stripNames(fn.Type.Results)})
			out = append(out, "func "+recv+fn.Name.Name+b.String()[len("func"):])
		}
	}
	slices.Sort(out)
	return out
}

// stripNames returns l without its parameter names.
func stripNames(l *ast.FieldList) *ast.FieldList {
	if l == nil {
		return nil
	}
	out := &ast.FieldList{}
	for _, f := range l.List {
		n := max(len(f.Names), 1)
		for range n {
			out.List = append(out.List, &ast.Field{Type: f.Type})
		}
	}
	return out
}

// TestAPI: the stand-in declares the exported functions and methods of the
// standard internal/godebug of the Go running the test, with the same
// signatures, and no others. When a Go release changes that API, this
// fails (and the browser build, whose overlay then no longer compiles,
// builds without it: scripts/build.sh).
func TestAPI(t *testing.T) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	std := exported(t, filepath.Join(strings.TrimSpace(string(out)), "src", "internal", "godebug"))
	ours := exported(t, ".")
	if !slices.Equal(std, ours) {
		t.Errorf("the standard internal/godebug declares\n%q\nthe stand-in\n%q", std, ours)
	}
}

// TestSetting: every setting has its default, "", and the name rules of
// the standard package.
func TestSetting(t *testing.T) {
	for _, c := range []struct{ name, want string }{{"asynctimerchan", "asynctimerchan"}, {"#gofsystrace", "gofsystrace"}, {"", ""}} {
		s := New(c.name)
		s.IncNonDefault()
		if s.Name() != c.want || s.Undocumented() != (c.name != c.want) || s.Value() != "" || s.String() != c.want+"=" {
			t.Errorf("New(%q): Name %q, Undocumented %v, Value %q, String %q", c.name, s.Name(), s.Undocumented(), s.Value(), s.String())
		}
	}
}

// TestModuleDefaults: "" is each setting's default for this module, as
// the standard package would give it, only while go.mod says go 1.23 or
// later (the defaults follow the go line: asynctimerchan=1 before 1.23)
// and sets no godebug of its own.
func TestModuleDefaults(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	minor := -1
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "godebug") {
			t.Errorf("go.mod sets %q, which the stand-in ignores", line)
		}
		if v, ok := strings.CutPrefix(line, "go 1."); ok {
			minor, _ = strconv.Atoi(strings.SplitN(v, ".", 2)[0])
		}
	}
	if minor < 23 {
		t.Errorf("go.mod's go line is 1.%d: before 1.23 the standard defaults differ from the stand-in's", minor)
	}
}
