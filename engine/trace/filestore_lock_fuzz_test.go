//go:build unix && !js

package trace

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzLockFile: whatever a session's lock file holds (this build's
// format, the Node build's, an older one without token or beat, anything),
// Lock judges it without panicking: held by another process (ErrBusy,
// the file left as it was, a message of one line of UTF-8) or gone (taken
// over: the file is this process's until released). And the file this
// build writes, whatever its host's name, reads back as this process's
// own.
func FuzzLockFile(f *testing.F) {
	for _, s := range []string{
		`{"pid":1,"host":"h","token":"k2j4x0lq8mbz1","beat":30}` + "\n", `{"pid":1,"host":"h","token":"t"}`, `{"pid":1,"host":"h"}`,
		`{"pid":1}`, `{}`, `{`, ``, `null`, `[]`, `{"pid":-1,"host":"h"}`, `{"pid":0}`, `{"pid":1.5,"host":"h"}`, `{"pid":"1"}`,
		`{"pid":4294967297,"host":"h"}`, `{"pid":1,"host":"h\nx","beat":1e-300}`, `{"pid":1,"host":"h","beat":3600}`,
		`{"pid":1,"host":"h","beat":3600.5}`, `{"pid":1,"host":"h","beat":-30}`, `{"pid":1,"host":"h","beat":"30"}`,
		`{"pid":99999999,"host":"\u0000"}`, "\xff\xfe", `{"pid":1,"host":"\ud800"}`, `{"pid":1,"host":"h\nx"}`, `{"pid":1,"host":"h\u2028x\u202e"}`,
	} {
		f.Add([]byte(s), uint16(0), "h")
	}
	f.Add([]byte(`{"pid":1,"host":"h","beat":30}`), uint16(301), "h\xff")
	f.Add([]byte(`{"pid":1,"host":"h","beat":0.5}`), uint16(6), "h\n\"x")
	f.Fuzz(func(t *testing.T, file []byte, age uint16, host string) {
		dir := t.TempDir()
		path := filepath.Join(dir, ".s1.lock")
		if err := os.WriteFile(path, file, 0o600); err != nil {
			t.Fatal(err)
		}
		then := time.Now().Add(-time.Duration(age) * time.Second)
		if err := os.Chtimes(path, then, then); err != nil {
			t.Fatal(err)
		}
		s := NewFileStore(dir, FileStoreOptions{})
		release, err := s.Lock("s1")
		data, _ := os.ReadFile(path)
		if err != nil {
			msg := err.Error()
			if !errors.Is(err, ErrBusy) || strings.ContainsAny(msg, "\r\n") || !utf8.ValidString(msg) {
				t.Fatalf("lock file %q: %q", file, msg)
			}
			if string(data) != string(file) {
				t.Fatalf("lock file %q, judged held, became %q", file, data)
			}
		} else {
			var h lockHolder
			if json.Unmarshal(data, &h) != nil || h.PID == nil || *h.PID != os.Getpid() || h.Token != lockToken {
				t.Fatalf("lock file %q, taken over, became %q", file, data)
			}
			release()
		}

		// A file this build writes (on a host of this name) is its own.
		defer func(h string) { lockHost = h }(lockHost)
		lockHost = asWritten(host)
		dir = t.TempDir()
		release, err = NewFileStore(dir, FileStoreOptions{}).Lock("s1")
		if err != nil {
			t.Fatalf("host %q: %v", host, err)
		}
		defer release()
		_, err = NewFileStore(dir, FileStoreOptions{}).Lock("s1")
		if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "this process") {
			t.Fatalf("host %q: a second Lock: %v, want this process named", host, err)
		}
	})
}
