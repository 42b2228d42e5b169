package host

import (
	"errors"

	"github.com/floehq/floe/engine/trace"
)

// Error is a failure with the wire code of TRANSPORT.md §6 and the HTTP
// status that goes with it.
type Error struct {
	Status  int
	Code    string
	Message string
	cause   error // what the store said, where a caller tells causes apart
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Unwrap is the store's error the failure came from, if any: a
// session_busy's is its Lock's (a trace.FileStore's wraps trace.ErrBusy,
// and trace.ErrLockLost when another process took the lock while this one
// was stopped), and so is the store_failed of a Lock that failed (a
// trace.FileStore's wraps trace.ErrLockFile and the system's error), so
// errors.Is and errors.As see through to it.
func (e *Error) Unwrap() error { return e.cause }

func newErr(status int, code, msg string) *Error {
	return &Error{Status: status, Code: code, Message: msg}
}

// Errors callers compare with errors.Is (by code).
var (
	ErrTaskInProgress    = newErr(409, "task_in_progress", "a task is already running in this session")
	ErrNotRunning        = newErr(409, "not_running", "no task is running in this session")
	ErrNoCompaction      = newErr(409, "compaction_not_configured", "this session has no compaction configured")
	ErrNothingToCompact  = newErr(409, "nothing_to_compact", "the session's context holds no turn to compact")
	ErrAlreadyCompacted  = newErr(409, "already_compacted", "the context was just compacted")
	ErrNotFound          = newErr(404, "session_not_found", "no such session")
	ErrExists            = newErr(409, "session_exists", "a session with this id exists")
	ErrNoPendingApproval = newErr(404, "approval_not_found", "no approval is pending for this tool call")
	ErrBusy              = newErr(409, "session_busy", "another process is writing this session")
	ErrShuttingDown      = newErr(503, "shutting_down", "the server is shutting down: no task starts; send it again once the server is back")
)

// Is matches errors by code.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Code == e.Code
}

func badRequest(msg string) *Error { return newErr(400, "bad_request", msg) }

// notFound is ErrNotFound naming the session id asked for.
func notFound(id string) *Error {
	return newErr(404, ErrNotFound.Code, "no session "+trace.QuoteID(id))
}

// exists is ErrExists naming the session id.
func exists(id string) *Error {
	return newErr(409, ErrExists.Code, "a session "+trace.QuoteID(id)+" exists: resume it, or create the new one under another id")
}

// noPendingApproval is ErrNoPendingApproval naming the tool call.
func noPendingApproval(toolCallID string) *Error {
	return newErr(404, ErrNoPendingApproval.Code, "no approval is pending for tool call "+short(toolCallID))
}
