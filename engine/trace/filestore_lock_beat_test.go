//go:build !js

package trace

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A holder touches its lock file every lockBeat while it holds it, and no
// more once released.
func TestFileStoreLockBeats(t *testing.T) {
	beaten := make(chan struct{}, 1)
	lockBeat, lockBeaten = time.Millisecond, func() {
		select {
		case beaten <- struct{}{}:
		default:
		}
	}
	t.Cleanup(func() { lockBeat, lockBeaten = 30*time.Second, func() {} })
	root := t.TempDir()
	release, err := NewFileStore(root, FileStoreOptions{}).Lock("s1")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, ".s1.lock")
	var h lockHolder
	if data, _ := os.ReadFile(path); json.Unmarshal(data, &h) != nil || h.Beat != 0.001 {
		t.Fatalf("lock file %q, want beat 0.001", data)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	for {
		<-beaten
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.ModTime().After(old.Add(time.Minute)) {
			break
		}
	}
	release()
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("release left the lock file: %v", err)
	}
}

// A holder that declared its beat and whose file has gone ten beats
// untouched is gone, though its pid cannot say so: on another host (a
// container made anew over the same directory), or this host's pid that
// another process now runs. One touched within them holds the session;
// one of an older build (no beat) is never judged by its file's age.
func TestFileStoreLockSilentHolder(t *testing.T) {
	host, _ := os.Hostname()
	running := os.Getppid()
	file := func(host string, beat float64) []byte {
		b, _ := json.Marshal(lockHolder{PID: &running, Host: host, Token: "k2j4x0lq8mbz1", Beat: beat})
		return append(b, '\n')
	}
	for _, tc := range []struct {
		name string
		file []byte
		age  time.Duration
		busy string // "" = taken over
	}{
		{"other host, silent", file("elsewhere", 30), 6 * time.Minute, ""},
		{"other host, beating", file("elsewhere", 30), 4 * time.Minute, "judged gone once its file goes 300 s untouched"},
		{"running pid, silent", file(host, 30), 6 * time.Minute, ""},
		{"running pid, beating", file(host, 30), time.Second, "judged gone once its file goes 300 s untouched"},
		{"older build", file("elsewhere", 0), 24 * time.Hour, "delete it if that process is gone"},
		{"a beat out of range", file("elsewhere", 1e9), 24 * time.Hour, "delete it if that process is gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			path := filepath.Join(root, ".s1.lock")
			if err := os.WriteFile(path, tc.file, 0o600); err != nil {
				t.Fatal(err)
			}
			at := time.Now().Add(-tc.age)
			if err := os.Chtimes(path, at, at); err != nil {
				t.Fatal(err)
			}
			release, err := NewFileStore(root, FileStoreOptions{}).Lock("s1")
			if tc.busy != "" {
				if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), tc.busy) {
					t.Fatalf("Lock: %v, want ErrBusy saying %q", err, tc.busy)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			release()
		})
	}
}
