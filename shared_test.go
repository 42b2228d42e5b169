package floe_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Without the shared folder the scenario tests and ./build.sh test fail,
// saying where the scenarios are expected; they never skip silently.
func TestMissingSharedFails(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-shared")
	cmd := exec.Command("go", "test", "-count=1", "-run", "TestSharedScenarios|TestInteropScriptsWriteReferenceTraces", "./engine/conformance/")
	cmd.Env = append(os.Environ(), "FLOE_SHARED="+missing)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), filepath.Join(missing, "conformance")) || strings.Contains(string(out), "SKIP") {
		t.Errorf("go test with FLOE_SHARED=%s: err %v\n%s", missing, err, out)
	}
	cmd = exec.Command("bash", "scripts/test.sh")
	cmd.Env = append(os.Environ(), "FLOE_SHARED="+missing)
	out, err = cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "expected in "+missing+"/conformance") {
		t.Errorf("scripts/test.sh with FLOE_SHARED=%s: err %v\n%s", missing, err, out)
	}
}
