package playground

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/floehq/floe/engine/trace"
)

// A session is exported with its subagents' child sessions, each as the
// reference stores a session (PROTOCOL.md P-11): <yyyy-mm-dd>/<id>_NNN.jsonl,
// the child's date directory its own. The parent's Trace names each child
// in a subagent pointer (ENGINE.md E-15.3), which is how an import tells
// the parent from its children.

// ExportSession returns the Trace files of the stored session id, as
// [trace.Export] names them, followed by those of its subagents' child
// sessions and theirs, depth first, as deep as [trace.History] follows them.
// A child whose Trace is not stored is left out; a Trace that does not
// read is exported byte for byte all the same, without the children it
// would name.
func ExportSession(ctx context.Context, store trace.Store, id string, loc *time.Location) ([]trace.File, error) {
	out, err := trace.Export(ctx, store, id, loc)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{id: true}
	var walk func(id string, depth int) error
	walk = func(id string, depth int) error {
		recs, err := trace.Records(ctx, store, id)
		if err != nil {
			return nil
		}
		for _, r := range recs {
			child, ok := trace.SubagentPointer(r)
			if !ok || seen[child] {
				continue
			}
			seen[child] = true
			files, err := trace.Export(ctx, store, child, loc)
			if errors.Is(err, trace.ErrNotFound) {
				continue
			}
			if err != nil {
				return fmt.Errorf("export subagent session %s: %w", child, err)
			}
			out = append(out, files...)
			if depth+1 < trace.MaxSubagentDepth {
				if err := walk(child, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(id, 0); err != nil {
		return nil, err
	}
	return out, nil
}

// ImportSession stores files exported by [ExportSession] — a session with
// its subagents' child sessions — and returns the parent's id. The files
// of each session are checked as [trace.Import] checks them; one session
// must be the parent, which no other points at, and every other one a
// child it reaches through subagent pointers. A parent's files alone (an
// export without children) and one file of any name are imported as
// [trace.Import] does. Nothing is stored unless every file passes and no
// session id is stored already (the error wraps [trace.ErrExists]); the
// children are stored before the parent, and removed again if storing a
// later session fails.
func ImportSession(ctx context.Context, store trace.Store, files []trace.File) (string, error) {
	groups, err := groupFiles(files)
	if err != nil {
		return "", err
	}
	if len(groups) <= 1 {
		return trace.Import(ctx, store, files)
	}
	// Every check runs on a scratch store first, so that a refused import
	// writes nothing.
	scratch := &trace.MemStore{}
	ids := make([]string, 0, len(groups))
	for id := range groups {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	pointed := map[string]bool{}
	for _, id := range ids {
		if _, err := trace.Import(ctx, scratch, groups[id]); err != nil {
			return "", err
		}
		recs, err := trace.Records(ctx, scratch, id)
		if err != nil {
			return "", err
		}
		for _, r := range recs {
			if child, ok := trace.SubagentPointer(r); ok && child != id {
				pointed[child] = true
			}
		}
	}
	root, err := parentOf(ids, pointed)
	if err != nil {
		return "", err
	}
	children, err := Children(ctx, scratch, root)
	if err != nil {
		return "", err
	}
	order := make([]string, 0, len(ids))
	for _, c := range children {
		if groups[c] != nil {
			order = append(order, c)
		}
	}
	if len(order) != len(ids)-1 {
		var stray []string
		for _, id := range ids {
			if id != root && !slices.Contains(order, id) {
				stray = append(stray, trace.QuoteID(id))
			}
		}
		return "", fmt.Errorf("import: %w: %s %s %s of %s or of its subagents (within %d levels)", trace.ErrInvalid,
			plural(len(stray), "session", "sessions"), strings.Join(stray, ", "), plural(len(stray), "is not a subagent session", "are not subagent sessions"), trace.QuoteID(root), trace.MaxSubagentDepth)
	}
	order = append(order, root)
	for _, id := range order {
		_, err := store.Files(ctx, id)
		if err == nil {
			return "", fmt.Errorf("import: session %s: %w; nothing was imported", trace.QuoteID(id), trace.ErrExists)
		}
		if !errors.Is(err, trace.ErrNotFound) {
			return "", fmt.Errorf("import: session %s: %w", trace.QuoteID(id), err)
		}
	}
	for i, id := range order {
		if _, err := trace.Import(ctx, store, groups[id]); err != nil {
			for _, done := range order[:i] {
				store.Delete(ctx, done) // best effort: the error below says what failed
			}
			return "", fmt.Errorf("import: store session %s: %w; nothing was imported", trace.QuoteID(id), err)
		}
	}
	return root, nil
}

// groupFiles sorts files by the session id their names give. One file of
// any name is one session, named by its session_meta (key "").
func groupFiles(files []trace.File) (map[string][]trace.File, error) {
	if len(files) == 1 {
		return map[string][]trace.File{"": files}, nil
	}
	groups := map[string][]trace.File{}
	for _, f := range files {
		base := f.Name[strings.LastIndexByte(f.Name, '/')+1:]
		id, _, ok := trace.ParseFileName(base)
		if !ok {
			return nil, fmt.Errorf("import: %w: %q is not a trace file name <session_id>_<NNN>.jsonl", trace.ErrInvalid, f.Name)
		}
		groups[id] = append(groups[id], f)
	}
	return groups, nil
}

// parentOf returns the one session of ids that no other points at.
func parentOf(ids []string, pointed map[string]bool) (string, error) {
	var roots []string
	for _, id := range ids {
		if !pointed[id] {
			roots = append(roots, id)
		}
	}
	switch len(roots) {
	case 1:
		return roots[0], nil
	case 0:
		return "", fmt.Errorf("import: %w: each of the %d sessions is another's subagent session: no parent session among the files", trace.ErrInvalid, len(ids))
	}
	quoted := make([]string, len(roots))
	for i, r := range roots {
		quoted[i] = trace.QuoteID(r)
	}
	return "", fmt.Errorf("import: %w: the files hold %d sessions that no other points at (%s); import one session, with its subagents' sessions, at a time", trace.ErrInvalid, len(roots), strings.Join(quoted, ", "))
}
