//go:build unix && !js

package trace

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Two processes started at once after a crash both find the dead
// process's lock: the first takes it over (its own file in its place)
// between the second's read of the stale file and its removal of it. The
// second removed the first's fresh file then, and both ran the session.
func TestFileStoreLockTakeOverRace(t *testing.T) {
	root := t.TempDir()
	s := NewFileStore(root, FileStoreOptions{})
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	dead := cmd.Process.Pid // ended: its pid runs no process
	path := filepath.Join(root, ".race.lock")
	stale := `{"pid":` + strconv.Itoa(dead) + `,"host":"` + lockHost + `","token":"dead"}` + "\n"
	fresh := `{"pid":` + strconv.Itoa(os.Getppid()) + `,"host":"` + lockHost + `","token":"other"}` + "\n"
	if err := os.WriteFile(path, []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}
	raced := false
	lockRead = func() {
		if !raced {
			raced = true // the other process, now: removes the stale file, makes its own
			os.Remove(path)
			os.WriteFile(path, []byte(fresh), 0o600)
		}
	}
	t.Cleanup(func() { lockRead = func() {} })
	release, err := s.Lock("race")
	if err == nil {
		release()
		t.Fatal("both processes hold the session")
	}
	if !raced || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getppid())) {
		t.Fatalf("raced %v: %v", raced, err)
	}
	if got, _ := os.ReadFile(path); string(got) != fresh {
		t.Fatalf("the other process's lock file holds %q", got)
	}
}
