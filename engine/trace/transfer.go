package trace

import (
	"context"
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
			dir = t.In(loc).Format("2006-01-02")
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
// session_meta; the last file must hold a session_meta (E-17.1). Errors
// name the file and the line; an id that is already stored is refused with
// ErrExists and nothing is written.
func Import(ctx context.Context, store Store, files []File) (string, error) {
	if len(files) == 0 {
		return "", opErr("import", "", 0, errf.Errorf("%w: no files", ErrInvalid))
	}
	id, ordered, err := order(files)
	if err != nil {
		return "", opErr("import", "", 0, err)
	}
	data := make([][]byte, len(ordered))
	for i, f := range ordered {
		meta, err := check(f)
		if err != nil {
			return "", opErr("import", id, i+1, err)
		}
		if id == "" { // one unnamed file
			id = meta
		}
		if meta == "" && i == len(ordered)-1 {
			return "", opErr("import", id, i+1, errf.Errorf("%w: %s: no session_meta in the last file", ErrNotResumable, nameOf(f)))
		}
		if meta != "" && meta != id {
			return "", opErr("import", id, i+1, errf.Errorf("%w: %s: session_meta names session %q", ErrInvalid, nameOf(f), meta))
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
		base := f.Name[strings.LastIndexByte(f.Name, '/')+1:]
		sid, index, ok := ParseFileName(base)
		switch {
		case !ok:
			return "", nil, errf.Errorf("%w: %q is not a trace file name <session_id>_<NNN>.jsonl", ErrInvalid, f.Name)
		case id != "" && sid != id:
			return "", nil, errf.Errorf("%w: %q belongs to session %q, not %q", ErrInvalid, f.Name, sid, id)
		case index < 1 || index > len(files):
			return "", nil, errf.Errorf("%w: %q: file index %d, want 1 to %d (the files must be numbered from 001 without gaps)", ErrInvalid, f.Name, index, len(files))
		case ordered[index-1].Name != "":
			return "", nil, errf.Errorf("%w: %q and %q are both file %d", ErrInvalid, ordered[index-1].Name, f.Name, index)
		}
		id = sid
		ordered[index-1] = f
	}
	return id, ordered, nil
}

// check reads one file strictly and returns the session id of its first
// session_meta ("" if none).
func check(f File) (string, error) {
	p, err := ReadFile(f.Data)
	if err != nil {
		return "", errf.Errorf("%s: %w", nameOf(f), err)
	}
	if len(p.Skipped) > 0 {
		s := p.Skipped[0]
		return "", errf.Errorf("%w: %s: line %d: %w", ErrInvalid, nameOf(f), s.Line, s.Err)
	}
	for i := range p.Records {
		if p.Records[i].Type == omni.TypeSessionMeta {
			return p.Records[i].Payload.SessionID, nil
		}
	}
	if len(p.Records) == 0 {
		return "", errf.Errorf("%w: %s: no record", ErrInvalid, nameOf(f))
	}
	return "", nil
}

func nameOf(f File) string {
	if f.Name == "" {
		return "the trace"
	}
	return f.Name
}
