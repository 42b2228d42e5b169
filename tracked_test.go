package floe_test

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// No build output is committed (build.sh makes it): no tracked file is a
// WebAssembly module or a native executable. A stray `go build` in the
// root once committed one, holding the build machine's paths.
func TestNoBuildOutputTracked(t *testing.T) {
	out, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout (git ls-files: %v)", err)
	}
	magics := map[string][]byte{
		"a WebAssembly module": []byte("\x00asm"),
		"an ELF executable":    []byte("\x7fELF"),
		"a Mach-O executable":  {0xcf, 0xfa, 0xed, 0xfe},
		"a Windows executable": []byte("MZ"),
	}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		f, err := os.Open(name)
		if err != nil {
			continue // deleted in the working tree
		}
		head := make([]byte, 4)
		n, _ := f.Read(head)
		f.Close()
		for what, magic := range magics {
			if bytes.HasPrefix(head[:n], magic) {
				t.Errorf("%s is %s: build output is made by build.sh, not committed", name, what)
			}
		}
	}
}
