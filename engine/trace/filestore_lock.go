//go:build !js

package trace

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"fmt"

	"github.com/floehq/floe/internal/errf"
)

// One writer per session across processes: the file <root>/.<id>.lock,
// made with O_EXCL, holds {"pid":…,"host":…,"token":…} — the format and
// the rules of the Node build's { dir } store, so a Go process and a Node
// process on one directory refuse each other too.
var (
	lockHost  = func() string { h, _ := os.Hostname(); return asWritten(h) }()
	lockToken = func() string {
		var b [8]byte
		rand.Read(b[:])
		return hex.EncodeToString(b[:])
	}()
)

type lockHolder struct {
	PID   *int   `json:"pid"`
	Host  string `json:"host"`
	Token string `json:"token"`
	// Beat is how often, in seconds, the holder touches its file while it
	// holds it; 0 (a file of an older build) = never.
	Beat float64 `json:"beat,omitempty"`
}

// lockBeat is how often a holder touches its lock file (its mtime), and
// lockStaleBeats how many beats missed make a holder that declared them
// gone, wherever it runs (tests shorten the beat).
var (
	lockBeat       = 30 * time.Second
	lockStaleBeats = 10.0
	lockBeaten     = func() {} // called after each touch (tests wait on it)
	lockNow        = time.Now  // the holder's clock, to tell its own beat late
)

// Lock holds session id for this process's writes, across processes: it
// makes the file <root>/.<id>.lock naming this process (pid, host), the
// one the Node build's { dir } store makes. Hold it around a resume and
// every run (or write) of the session, and call release when done. When
// another process (or another Lock of this one) holds it, Lock returns an
// error wrapping [ErrBusy] that names the holder and the file. A file left
// by a process that no longer runs on this host (killed) is taken over,
// and so is one whose holder declared a beat (it touches the file every
// lockBeat, 30 s, while it holds it) and has gone ten beats untouched:
// a holder on another host (a shared directory, a container made anew)
// or whose pid another process took. A file without a beat (an older
// build's) is never judged by its age: delete it once that process is
// gone. Where the file cannot be made, written or read (a
// read-only directory, a full disk, no permission, a directory in its
// place), Lock returns an error wrapping [ErrLockFile] and the system's
// error that names the file: the session is not locked.
// A holder taken for gone while alive (stopped or blocked for ten beats)
// learns it at its next beat, at its release, or at a write that finds its
// beat late: the store's writes of id then fail wrapping [ErrLockLost],
// and so does id's next Lock, once, its error wrapping [ErrBusy] as well
// (resume the session: the Trace holds the other process's records).
// release may be called more than once, from any goroutine; only its
// first call releases.
func (s *FileStore) Lock(id string) (release func(), err error) {
	if err := ValidateID(id); err != nil {
		return nil, opErr("lock", id, 0, err)
	}
	s.mu.Lock()
	lost := s.lost[id]
	delete(s.lost, id)
	s.mu.Unlock()
	if lost != nil {
		// Said once: a resume after it reads what the other process wrote.
		return nil, opErr("lock", id, 0, fmt.Errorf("%w: %w", ErrBusy, lost))
	}
	path := filepath.Join(s.root, "."+id+".lock")
	own, _ := json.Marshal(lockHolder{PID: ptr(os.Getpid()), Host: lockHost, Token: lockToken, Beat: lockBeat.Seconds()})
	own = append(own, '\n')
	for tries := 0; ; tries++ {
		what, err := makeLockFile(path, own)
		if errors.Is(err, fs.ErrNotExist) && tries == 0 {
			if err = os.MkdirAll(s.root, 0o700); err == nil {
				continue
			}
		}
		if err == nil {
			return s.hold(id, &heldLock{path: path, own: own, confirmed: lockNow()}), nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, opErr("lock", id, 0, &lockFileError{path, what, err})
		}
		var holder lockHolder
		data, err := os.ReadFile(path)
		lockRead()
		if errors.Is(err, fs.ErrNotExist) && tries < 3 {
			continue // released meanwhile
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			// Not a holder's file to judge (a directory, no permission):
			// it was taken for another process's.
			return nil, opErr("lock", id, 0, &lockFileError{path, "read", err})
		}
		json.Unmarshal(data, &holder)
		if tries < 3 && (holder.stale() || holder.silent(path)) {
			takeOver(path, data)
			continue
		}
		who := "a process"
		if holder.PID != nil {
			who = holder.name()
		}
		if holder.PID != nil && *holder.PID == os.Getpid() && holder.Host == lockHost && holder.Token == lockToken {
			// Not another process to wait for or to clean up after: a
			// Lock of this one that was not released.
			return nil, opErr("lock", id, 0, fmt.Errorf("%w: this process (%s) holds it already: an earlier Lock of it is not released (its lock file %s)", ErrBusy, who, path))
		}
		gone := "delete it if that process is gone"
		if holder.beats() {
			gone = "it is judged gone once its file goes " + strconv.FormatFloat(holder.Beat*lockStaleBeats, 'f', -1, 64) + " s untouched" // as the Node build says it
		}
		return nil, opErr("lock", id, 0, fmt.Errorf("%w: another process (%s) is running it (its lock file %s: %s)", ErrBusy, who, path, gone))
	}
}

func ptr(n int) *int { return &n }

// makeLockFile makes the lock file at path, exclusively, holding own;
// what names the step that failed ("made" or "written"). A file whose
// write failed (a full disk) is removed: left empty, it named no holder
// and refused every later Lock.
func makeLockFile(path string, own []byte) (what string, err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "made", err
	}
	_, err = f.Write(own)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return "written", err
}

// lockFileError is a lock file that cannot be made, written or read: it
// is [ErrLockFile], and unwraps to the system's error.
type lockFileError struct {
	path, what string
	err        error
}

func (e *lockFileError) Error() string {
	why := e.err
	var pe *fs.PathError
	if errors.As(why, &pe) && pe.Path == e.path {
		why = pe.Err // the path is said once
	}
	return "its lock file " + e.path + " cannot be " + e.what + ": " + why.Error()
}

func (e *lockFileError) Is(target error) bool { return target == ErrLockFile }
func (e *lockFileError) Unwrap() error        { return e.err }

// asWritten is host as a lock file holds it: JSON writes a byte of
// invalid UTF-8 as U+FFFD, and a name compared as the OS gave it was
// another host's (this process's own file taken for another's, a killed
// process's never found gone).
func asWritten(host string) string {
	b, _ := json.Marshal(host)
	json.Unmarshal(b, &host)
	return host
}

// lockRead is called after Lock read a holder's file (tests race it).
var lockRead = func() {}

// takeOver removes the stale lock file at path that held data. Another
// process may have taken it over since it was read (two started at once
// after a crash), its own file now in its place: removing that let both
// run the session. The file is moved aside, atomically, and put back
// unless it is the one judged stale (as the Node build does).
func takeOver(path string, data []byte) {
	aside := path + "." + lockToken
	if os.Rename(path, aside) != nil {
		return
	}
	if now, err := os.ReadFile(aside); err != nil || string(now) != string(data) {
		os.Link(aside, path) // not over a file made meanwhile
	}
	os.Remove(aside)
}

// stale: the holder is a process of this host that no longer runs (or this
// process's pid with another token: a container's pid 1 restarted).
func (h lockHolder) stale() bool {
	if h.PID == nil || *h.PID <= 0 || h.Host != lockHost {
		return false
	}
	if *h.PID == os.Getpid() {
		return h.Token != lockToken
	}
	return pidGone(*h.PID)
}

// heldLock is a lock this process holds: its file at path, holding own
// while no other process took it.
type heldLock struct {
	path string
	own  []byte

	mu        sync.Mutex
	confirmed time.Time // when the file was last found to be own (lockNow)
	lost      error     // wrapping ErrLockLost, once another process took it
}

// hold registers l as the lock of session id, asked before each write of
// it, and starts its beat; it returns the lock's release.
func (s *FileStore) hold(id string, l *heldLock) (release func()) {
	s.mu.Lock()
	s.held[id] = l.check
	s.mu.Unlock()
	stop := l.beat()
	var once sync.Once // every Lock of this process writes the same bytes: a second call would remove a later Lock's file
	return func() {
		once.Do(func() {
			stop()
			s.mu.Lock()
			defer s.mu.Unlock()
			delete(s.held, id)
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.lost == nil {
				data, err := os.ReadFile(l.path)
				if err == nil && string(data) == string(l.own) {
					os.Remove(l.path)
					return
				}
				if err == nil || errors.Is(err, fs.ErrNotExist) {
					l.lose(data)
				}
			}
			if l.lost != nil {
				s.lost[id] = l.lost // the session's next Lock says so
			}
		})
	}
}

// beat touches the lock file every lockBeat until stop is called, while it
// still holds own: a holder another host runs (a shared directory, a
// container made anew with a new host name) or whose pid another process
// took cannot be judged by its pid, and its file's age then says it is
// gone. stop returns once the beat has ended: no touch comes after it.
func (l *heldLock) beat() (stop func()) {
	done, ended := make(chan struct{}), make(chan struct{})
	t := time.NewTicker(lockBeat)
	go func() {
		defer close(ended)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				l.mu.Lock()
				if l.lost == nil {
					l.confirm()
				}
				l.mu.Unlock()
				lockBeaten()
			}
		}
	}()
	return func() { close(done); <-ended }
}

// check returns the error of a lock another process took, wrapping
// ErrLockLost. It reads the file only when the holder's last beat is
// late: a process stopped (Ctrl-Z, a debugger) or blocked long enough for
// another to judge it gone writes next, before its beat runs again.
func (l *heldLock) check() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost == nil {
		now := lockNow()
		// Either clock: the monotonic one stands still while the machine
		// sleeps, and other hosts' do not.
		if late := 2 * lockBeat; now.Sub(l.confirmed) > late || now.Round(0).Sub(l.confirmed.Round(0)) > late {
			l.confirm()
		}
	}
	return l.lost
}

// confirm reads the lock file: still own, it is touched and confirmed;
// another holder's, or gone, the lock is lost. Any other failure to read
// it judges nothing. l.mu is held.
func (l *heldLock) confirm() {
	data, err := os.ReadFile(l.path)
	switch {
	case err == nil && string(data) == string(l.own):
		now := time.Now()
		os.Chtimes(l.path, now, now)
		l.confirmed = lockNow()
	case err == nil || errors.Is(err, fs.ErrNotExist):
		l.lose(data)
	}
}

// lose records that another process took the lock; data is what its file
// now holds (nil: none). l.mu is held.
func (l *heldLock) lose(data []byte) {
	who := "its lock file " + l.path + " is gone: removed, or released by the process that took it"
	var h lockHolder
	if json.Unmarshal(data, &h) == nil && h.PID != nil {
		who = h.name() + " holds its lock file " + l.path
	}
	l.lost = fmt.Errorf("%w (%s): this process had not touched it for longer than its beats allow (stopped or blocked) and was taken for gone; the session's records from then on are not written here: resume the session to continue from its Trace", ErrLockLost, who)
}

// name names the holder, whose PID is set: "pid N on host", its host
// quoted unless it is printable ASCII (a file may hold anything: a host
// with a line break made the error two lines).
func (h lockHolder) name() string {
	who := "pid " + strconv.Itoa(*h.PID)
	if h.Host == "" {
		return who
	}
	for i := 0; i < len(h.Host); i++ {
		if c := h.Host[i]; c <= ' ' || c >= 0x7f || c == '"' {
			return who + " on " + errf.Quote(h.Host)
		}
	}
	return who + " on " + h.Host
}

// beats: the holder said how often it touches its file (at most hourly).
func (h lockHolder) beats() bool { return h.Beat > 0 && h.Beat <= 3600 }

// silent: the holder said it touches its file every Beat seconds, and the
// file has gone lockStaleBeats beats untouched (a holder that no longer
// runs, wherever it ran). A file of an older build, without Beat, is
// never judged so.
func (h lockHolder) silent(path string) bool {
	if !h.beats() {
		return false
	}
	fi, err := os.Stat(path)
	return err == nil && time.Since(fi.ModTime()) > time.Duration(h.Beat*lockStaleBeats*float64(time.Second))
}
