package floe_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The pure packages never depend on syscall/js, jsbridge or web (DESIGN.md
// rules of the house), and every file of jsbridge/ and web/ carries the
// js && wasm build constraint, but the bridge's record codec and its
// tests, which build natively to be fuzzed: the native jsbridge is that
// codec alone, without syscall/js.
func TestLayering(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./engine/...", "./mergequeue/...", "./clock/...", "./provider/...", "./transport/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "syscall/js" || strings.HasSuffix(dep, "/jsbridge") || strings.Contains(dep, "/jsbridge/") || strings.HasSuffix(dep, "floe/web") || strings.Contains(dep, "floe/web/") {
			t.Errorf("pure packages depend on %s", dep)
		}
	}
	native := []string{"jsbridge/records.go", "jsbridge/records_test.go"}
	for _, dir := range []string{"jsbridge", "web"} {
		filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || slices.Contains(native, filepath.ToSlash(path)) {
				return nil
			}
			src, err := os.ReadFile(path)
			if err != nil {
				t.Error(err)
				return nil
			}
			if !strings.Contains(string(src), "//go:build js && wasm") {
				t.Errorf("%s lacks //go:build js && wasm", path)
			}
			return nil
		})
	}
	out, err = exec.Command("go", "list", "-deps", "-test", "./jsbridge").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if slices.Contains(strings.Fields(string(out)), "syscall/js") {
		t.Error("the native jsbridge (its record codec) depends on syscall/js")
	}
	files, err := exec.Command("go", "list", "-f", "{{.GoFiles}} {{.TestGoFiles}}", "./jsbridge").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, files)
	}
	if got := strings.Fields(strings.NewReplacer("[", " ", "]", " ").Replace(string(files))); len(got) != len(native) {
		t.Errorf("the native jsbridge builds %v, want the files %v", got, native)
	}
}

// The provider packages the WebAssembly build links stay off the packages
// that would break floe.wasm's size budget (the native Transport in
// provider/nethttp and the replay runner are for native programs only).
func TestProviderWasmDeps(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./provider", "./provider/sse", "./provider/openai", "./provider/responses", "./provider/anthropic")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		switch dep {
		case "net/http", "fmt", "encoding/json", "regexp", "os", "reflect":
			t.Errorf("the browser-linked provider packages depend on %s", dep)
		}
	}
}

// The channel core goes into WebAssembly builds: no net/http, fmt,
// encoding/json or regexp (each costs 16–100 KB there).
func TestTransportCoreIsLean(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./transport").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		switch dep {
		case "net/http", "fmt", "encoding/json", "regexp", "syscall/js":
			t.Errorf("package transport depends on %s", dep)
		}
	}
}

// The session server and the Worker's object run the playground's scripted
// model and workspace, not its view: they link no Markdown parser (a Go
// service importing transport/server got goldmark with package playground).
func TestServerLinksNoMarkdown(t *testing.T) {
	for _, target := range []struct{ goos, pkg string }{{"", "./transport/server"}, {"", "./cmd/floe-server"}, {"js", "./wasm/worker/object"}} {
		cmd := exec.Command("go", "list", "-deps", target.pkg)
		if target.goos != "" {
			cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", target.pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.Contains(dep, "goldmark") || strings.HasSuffix(dep, "playground/markdown") {
				t.Errorf("%s depends on %s", target.pkg, dep)
			}
		}
	}
}
