package trace

import (
	"bytes"
	"context"
	"errors"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/internal/errf"
	"github.com/floehq/floe/internal/lock"
)

// Errors of Writer.Write for messages that must not reach a Trace.
var (
	// ErrUnstamped: the message has no timestamp (the engine stamps every
	// record before writing it).
	ErrUnstamped = errors.New("message has no timestamp")
	// ErrNotRecordable: partial_* or origin-tagged messages are never
	// written (ENGINE.md E-16.1).
	ErrNotRecordable = errors.New("message is not recordable")
)

// Writer writes one session's Trace to a [Store]: each message becomes one
// JSONL line appended to the current file. It implements [engine.TraceSink].
//
// Writes are serialized; a record is never split; Rotate moves to the next
// file index without creating anything, so no empty file ever appears
// (ENGINE.md E-16.8, E-13.11). When the file being continued ends in a torn
// line, the first append heals it (PROTOCOL.md P-13). A Writer is safe for
// concurrent use.
type Writer struct {
	store Store
	id    string
	idErr error // ValidateID(id), or a nil store: checked once, so a write's cost never grows with the id

	mu    lock.Mutex
	index int
	buf   []byte
}

var _ engine.TraceSink = (*Writer)(nil)

// Written describes one append made by a Writer: the file it went to,
// whether it created that file, whether it healed a torn tail first, and
// the records it wrote.
type Written struct {
	// Index is the number of the file appended to, counted from 1.
	Index int
	// NewFile is true when this append created the file.
	NewFile bool
	// HealNewline is true when a "\n" was written first, ending a torn
	// last line left by an interrupted write (P-13).
	HealNewline bool
	// Records are the records appended, as written (stamped).
	Records []omni.Message
}

// NewWriter returns a Writer that appends to file index of the session,
// counted from 1 (an index below 1 is taken as 1, the first file). Each
// Write's ctx bounds the Store call it makes. A Writer of a nil store
// fails every write with an error wrapping ErrInvalid (and engine.New
// refuses it), as does one of an invalid session id.
func NewWriter(store Store, sessionID string, index int) *Writer {
	if index < 1 {
		index = 1
	}
	err := ValidateID(sessionID)
	if store == nil {
		err = errf.Errorf("%w: the Writer's Store is nil (trace.NewWriter(nil, …))", ErrInvalid)
	}
	return &Writer{store: store, id: sessionID, index: index, idErr: err}
}

// CheckSession reports why w cannot take the records of session id, or
// nil: engine.New asks it, so that a Writer that could only fail (a nil
// one, one of a nil Store, an id that cannot name Trace files, another
// session's id) is an error there rather than a diagnostic at every write.
func (w *Writer) CheckSession(id string) error {
	switch {
	case w == nil:
		return errf.Errorf("%w: a nil *trace.Writer", ErrInvalid)
	case w.idErr != nil:
		return w.idErr
	case id != w.id:
		return errf.Errorf("%w: the Writer writes session %s, the session is %s", ErrInvalid, QuoteID(w.id), QuoteID(id))
	}
	return nil
}

// SessionID returns the session the Writer writes.
func (w *Writer) SessionID() string { return w.id }

// Index returns the file index the next Write goes to.
func (w *Writer) Index() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.index
}

// Write implements [engine.TraceSink]: it appends msg as one line.
func (w *Writer) Write(ctx context.Context, msg omni.Message) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := w.write(ctx, &msg)
	return err
}

// Rotate implements [engine.TraceSink]: the next Write goes to file
// index+1. Nothing is created until then.
func (w *Writer) Rotate() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.index++
	return nil
}

// WriteRecord is Write that also reports where and how the record was
// appended. The message must be stamped and recordable.
func (w *Writer) WriteRecord(ctx context.Context, msg omni.Message) (Written, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	res, err := w.write(ctx, &msg)
	if err != nil {
		return Written{}, err
	}
	return Written{Index: w.index, NewFile: res.Created, HealNewline: res.Healed, Records: []omni.Message{msg}}, nil
}

// write encodes msg into the Writer's reused buffer and appends it; w.mu
// is held. It allocates nothing of its own.
func (w *Writer) write(ctx context.Context, msg *omni.Message) (AppendResult, error) {
	if w.idErr != nil {
		return AppendResult{}, opErr("write", w.id, w.index, w.idErr)
	}
	if msg.Timestamp == "" {
		return AppendResult{}, opErr("write", w.id, w.index, errf.Errorf("%w: %s", ErrUnstamped, describe(msg)))
	}
	if !msg.Recordable() {
		return AppendResult{}, opErr("write", w.id, w.index, errf.Errorf("%w: %s", ErrNotRecordable, describe(msg)))
	}
	line, err := encodeLine(w.buf[:0], msg)
	if err != nil {
		return AppendResult{}, opErr("write", w.id, w.index, errf.Errorf("%s: %w", describe(msg), err))
	}
	w.buf = line
	if cap(w.buf) > maxKeptBuffer {
		w.buf = nil // do not pin the memory of one huge record
	}
	return w.store.Append(ctx, w.id, w.index, line)
}

// maxKeptBuffer bounds the encode buffer a Writer keeps between writes.
const maxKeptBuffer = 1 << 20

// encodeLine appends msg's JSON and "\n" to dst. Raw JSON kept verbatim in
// a message (fidelity, unknown keys) may hold newlines as whitespace; such a
// record is compacted so that it stays one line.
func encodeLine(dst []byte, msg *omni.Message) ([]byte, error) {
	start := len(dst)
	dst = msg.AppendJSON(dst)
	if bytes.IndexByte(dst[start:], '\n') >= 0 {
		dst = append(dst[:start], compactJSON(dst[start:])...)
	}
	return append(dst, '\n'), nil
}

// compactJSON returns a copy of the valid JSON text src without the
// whitespace outside strings, as json.Compact does (a JSON string never
// holds a raw newline, so only that whitespace can break a line). It is
// written out to keep encoding/json's scanner out of the WebAssembly build.
func compactJSON(src []byte) []byte {
	out := make([]byte, 0, len(src))
	inString, escaped := false, false
	for _, c := range src {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		}
		out = append(out, c)
	}
	return out
}

// describe names a message in an error: its payload type.
func describe(m *omni.Message) string {
	if m.Type == omni.TypeSessionMeta {
		return m.Type
	}
	return m.Type + " " + m.Payload.Type
}
