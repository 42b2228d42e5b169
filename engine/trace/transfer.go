package trace

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"time"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/internal/errf"
)

// File is one Trace file for export and import. Name is the reference
// path "<yyyy-mm-dd>/<session_id>_<NNN>.jsonl" (PROTOCOL.md P-11).
type File struct {
	Name string
	Data []byte
}

// Export returns every file of a session, byte for byte, in index order,
// named in the reference layout. The date directory is the date, in loc
// (nil = time.Local), of the first record of the session's first file, as
// FileStore names it; when that record has no readable timestamp, the
// file's modification time.
func Export(ctx context.Context, store Store, sessionID string, loc *time.Location) ([]File, error) {
	if native && store == nil {
		return nil, nilStore("export", sessionID)
	}
	infos, err := store.Files(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	out := make([]File, 0, len(infos))
	dir := ""
	for _, fi := range infos {
		data, err := store.ReadFile(ctx, sessionID, fi.Index)
		if err != nil {
			return nil, err
		}
		if dir == "" {
			t, ok := firstTimestamp(data)
			if !ok {
				t = fi.Modified
			}
			if loc == nil {
				loc = time.Local
			}
			dir = omni.FormatDate(t.In(loc))
		}
		out = append(out, File{Name: dir + "/" + FileName(sessionID, fi.Index), Data: data})
	}
	return out, nil
}

// Import checks files as the Trace of one session and stores it with
// [Store.Create]; it returns the session id. Each name must be a reference
// file name, optionally under a directory; the files must be numbered 1…n
// (in any order). A single file with an empty name is file 1 of the
// session named by its session_meta. Every file must read without a
// malformed line other than a torn last line (P-12, the importer's
// choice), hold at least one record, and name no other session in a
// session_meta; the last file must hold a session_meta (E-17.1); every
// tool call and output must carry a tool_call_id, unique among the calls of
// its request ([Parsed.CheckCalls]). Errors
// name the file and the line; an id that is already stored is refused with
// ErrExists and nothing is written.
func Import(ctx context.Context, store Store, files []File) (string, error) {
	if native && store == nil {
		return "", nilStore("import", "")
	}
	if len(files) == 0 {
		return "", opErr("import", "", 0, errf.Errorf("%w: no files", ErrInvalid))
	}
	id, ordered, err := order(files)
	if err != nil {
		return "", opErr("import", "", 0, errf.Errorf("%w: %s", ErrInvalid, err))
	}
	data := make([][]byte, len(ordered))
	for i, f := range ordered {
		meta, err := check(f.Data)
		if id == "" { // one unnamed file
			id = meta
		}
		switch {
		case err != nil:
		case meta == "" && i == len(ordered)-1:
			err = errf.Errorf("%w: no session_meta in the last file", ErrNotResumable)
		case meta != "" && meta != id:
			err = errf.Errorf("%w: session_meta names session %s", ErrInvalid, QuoteID(meta))
		}
		if err != nil {
			name := "the trace"
			if f.Name != "" {
				name = errf.Quote(f.Name) // any bytes: an imported file's name
			}
			return "", opErr("import", id, i+1, errf.Errorf("%s: %w", name, err))
		}
		data[i] = f.Data
	}
	if err := ValidateID(id); err != nil {
		return "", opErr("import", id, 0, err)
	}
	return id, store.Create(ctx, id, data)
}

// order sorts files by index and checks that they are one session's files
// 1…n. The id is "" for one unnamed file.
func order(files []File) (string, []File, error) {
	if len(files) == 1 && files[0].Name == "" {
		return "", files, nil
	}
	id := ""
	ordered := make([]File, len(files))
	for _, f := range files {
		sid, index, ok := ParseFileName(f.Name[strings.LastIndexByte(f.Name, '/')+1:])
		why := ""
		switch {
		case !ok:
			why = " is not a trace file name <session_id>_<NNN>.jsonl"
		case id != "" && sid != id:
			why = " belongs to another session than " + QuoteID(id)
		case index > len(files) || ordered[index-1].Name != "":
			why = ": the files must be numbered from 001 without gaps or repeats"
		}
		if why != "" {
			return "", nil, errors.New(errf.Quote(f.Name) + why)
		}
		id = sid
		ordered[index-1] = f
	}
	return id, ordered, nil
}

// check reads one file strictly and returns the session id of its first
// session_meta ("" if none).
func check(data []byte) (string, error) {
	p, err := ReadFile(data)
	if err != nil {
		return "", err
	}
	if len(p.Skipped) > 0 {
		return "", errf.Errorf("line %d: %w (%w)", p.Skipped[0].Line, p.Skipped[0].Err, ErrInvalid)
	}
	if err := p.CheckCalls(); err != nil {
		return "", err
	}
	meta, seen := "", false
	for i := range p.Records {
		if p.Records[i].Type != omni.TypeSessionMeta {
			continue
		}
		switch id := p.Records[i].Payload.SessionID(); {
		case id == "":
			return "", errf.Errorf("%w: a session_meta names no session (session_id is empty)", ErrInvalid)
		case !seen:
			meta, seen = id, true
		case id != meta:
			return "", errf.Errorf("%w: a session_meta names session %s after one of %s", ErrInvalid, QuoteID(id), QuoteID(meta))
		}
	}
	if seen {
		return meta, nil
	}
	if len(p.Records) == 0 {
		if p.TornTail {
			// Its one line is read as the torn tail of an interrupted
			// append, which readers skip: name why it is not a record.
			n := lastNonBlank(data)
			_, err := omni.Decode(trimJS(bytes.Split(data, []byte{'\n'})[n-1]))
			return "", errf.Errorf("%w: no record: line %d is not a Trace record: %w", ErrInvalid, n, err)
		}
		return "", errf.Errorf("%w: no record", ErrInvalid)
	}
	return "", nil
}
