package trace

import (
	"errors"
	"runtime"
	"strconv"
	"unicode/utf8"

	"github.com/floehq/floe/internal/errf"
)

// Sentinel errors. Every error this package returns for a session or a file
// is an [*Error] that wraps one of these (or an underlying I/O error) and
// names the session and the file; test with [errors.Is].
var (
	// ErrNotFound: the session or the file does not exist.
	ErrNotFound = errors.New("not found")
	// ErrExists: Create refused a session id that is already stored.
	ErrExists = errors.New("session already exists")
	// ErrInvalid: a bad argument (session id, file index, record bytes).
	ErrInvalid = errors.New("invalid argument")
	// ErrNotResumable: the highest-index file holds no session_meta
	// (ENGINE.md E-17.1).
	ErrNotResumable = errors.New("not resumable")
	// ErrTooLarge: a file exceeds MaxFileBytes.
	ErrTooLarge = errors.New("file exceeds size limit")
	// ErrLockLost: this process held the session's lock across processes
	// ([FileStore.Lock], the Node build's { dir } lock) and another process
	// took it, having judged this one gone (stopped or blocked for longer
	// than its lock's beats allow): its writes of the session are refused.
	// The other process may have written the session since, so the
	// session's engine is stale: close it, and once Lock succeeds again,
	// [Resume] the session from its Trace.
	ErrLockLost = errors.New("another process took its lock")
	// ErrBusy: another process holds the session ([FileStore.Lock]).
	ErrBusy = errors.New("session busy")
	// ErrLockFile: the session's lock file cannot be made, written or read
	// ([FileStore.Lock]: a read-only directory, a full disk, no
	// permission, a directory in its place); the error names the file and
	// wraps the system's error. The session is not locked, and no holder
	// is known: it is not [ErrBusy].
	ErrLockFile = errors.New("lock file failed")
)

// MaxFileBytes caps the size of one Trace file that is read into memory.
const MaxFileBytes = 1 << 30

// Error reports a failed operation on one session or one of its files.
type Error struct {
	Op        string // "append", "read", "files", "create", "delete", "write", "resume", …
	SessionID string // "" when the operation has no session
	Index     int    // file index (1-based); 0 when the operation is not about one file
	Err       error
}

func (e *Error) Error() string {
	s := "trace: " + e.Op
	if e.SessionID != "" {
		s += " " + QuoteID(e.SessionID)
	}
	if e.Index != 0 {
		s += " file " + strconv.Itoa(e.Index)
	}
	return s + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

func opErr(op, id string, index int, err error) error {
	return &Error{Op: op, SessionID: id, Index: index, Err: err}
}

// native is false in the WebAssembly build, which leaves out the nil
// Store checks (2.5 kB of floe.wasm): its stores are the bridge's, never
// nil.
const native = runtime.GOARCH != "wasm"

// nilStore is the error of a function of the package handed a nil Store,
// which would panic at its first call of it.
func nilStore(op, id string) error {
	return opErr(op, id, 0, errf.Errorf("%w: the Store is nil", ErrInvalid))
}

// maxIDBytes keeps "<id>_NNN.jsonl" within common file-name limits.
const maxIDBytes = 200

// QuoteID quotes a session id for a message: whole when it is at most 200
// bytes (the longest valid id), else its first 64 bytes and its length, so
// that an error about an oversized id costs the same whatever its size.
func QuoteID(id string) string {
	if len(id) <= maxIDBytes {
		return errf.Quote(id)
	}
	cut := 64
	for cut > 0 && !utf8.RuneStart(id[cut]) {
		cut--
	}
	return errf.Quote(id[:cut]) + "… (" + strconv.Itoa(len(id)) + " bytes)"
}

// ValidateID reports whether id can name a session in every Store: non-empty,
// at most 200 bytes of valid UTF-8, no path separator, no control character,
// not starting with a dot.
func ValidateID(id string) error {
	if why := idProblem(id); why != "" {
		return errf.Errorf("%w: session id %s %s", ErrInvalid, QuoteID(id), why)
	}
	return nil
}

// idProblem says what makes id unfit to name a session, or "".
func idProblem(id string) string {
	switch {
	case id == "":
		return "is empty"
	case len(id) > maxIDBytes:
		return "is longer than 200 bytes"
	case !utf8.ValidString(id):
		return "is not valid UTF-8"
	case id[0] == '.':
		return "starts with a dot"
	}
	for _, r := range id {
		if r == '/' || r == '\\' || r < 0x20 || r == 0x7f {
			return "contains " + errf.QuoteRune(r)
		}
	}
	return ""
}

func validateIndex(index int) error {
	if index < 1 {
		return errf.Errorf("%w: file index %d (want ≥ 1)", ErrInvalid, index)
	}
	return nil
}

// validateRecords checks what Store.Append accepts: one or more whole lines.
func validateRecords(data []byte) error {
	if len(data) == 0 || data[len(data)-1] != '\n' {
		return errf.Errorf("%w: records must be whole lines ending in \\n", ErrInvalid)
	}
	return nil
}
