package trace

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/internal/errf"
)

// A session is exported with its subagents' child sessions, each as the
// reference stores a session (PROTOCOL.md P-11): <yyyy-mm-dd>/<id>_NNN.jsonl,
// the child's date directory its own. The parent's Trace names each child
// in a subagent pointer (ENGINE.md E-15.3), which is how an import tells
// the parent from its children.

// ExportTree returns the Trace files of the stored session id, as
// [Export] names them, followed by those of its subagents' child
// sessions and theirs, depth first, as [Children] finds them. A child
// whose Trace is not stored, or not a subagent's, is left out; a Trace
// that does not read is exported byte for byte all the same, without the
// children it would name. ErrNotFound when id has no file. [ImportTree]
// takes the files back.
func ExportTree(ctx context.Context, store Store, id string, loc *time.Location) ([]File, error) {
	out, err := Export(ctx, store, id, loc)
	if err != nil {
		return nil, err
	}
	children, _ := Children(ctx, store, id) // those found before an unreadable Trace
	for _, child := range children {
		files, err := Export(ctx, store, child, loc)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, errf.Errorf("export subagent session %s: %w", QuoteID(child), err)
		}
		out = append(out, files...)
	}
	return out, nil
}

// ImportTree stores files exported by [ExportTree] — a session with
// its subagents' child sessions — and returns the parent's id. The files
// of each session are checked as [Import] checks them; one session
// must be the parent, which no other points at, and every other one a
// child it reaches through subagent pointers. A parent's files alone (an
// export without children) and one file of any name are imported as
// [Import] does. A subagent pointer may not name a session stored already
// that the files do not hold (ErrInvalid): deleting the imported session
// would delete it, exporting it export it. Nothing is stored unless every
// file passes and no session id is stored already (the error wraps
// [ErrExists]); the children are stored before the parent, and removed
// again if storing a later session fails.
func ImportTree(ctx context.Context, store Store, files []File) (string, error) {
	if native && store == nil {
		return "", nilStore("import", "")
	}
	groups, err := groupFiles(files)
	if err != nil {
		return "", err
	}
	if len(groups) == 0 {
		return Import(ctx, store, files) // its error: no files
	}
	// Every check runs on a scratch store first, so that a refused import
	// writes nothing.
	scratch := &MemStore{}
	ids := make([]string, len(groups))
	var pointed []string
	seen := map[string]bool{}
	for i := range groups {
		id, err := Import(ctx, scratch, groups[i].files)
		if err != nil {
			return "", err
		}
		ids[i] = id // one file of any name: its session_meta's
		recs, err := Records(ctx, scratch, id)
		if err != nil {
			return "", err
		}
		for _, r := range recs {
			if child, ok := SubagentPointer(r); ok && child != id && !seen[child] {
				seen[child] = true
				pointed = append(pointed, child)
			}
		}
	}
	// ids is sorted (groupFiles sorts the groups by id, which Import
	// checked) and searched by halves: an import of thousands of sessions
	// stays linear. child[i]: a pointer names ids[i]; outside: pointers
	// naming a session the files do not hold.
	child := make([]bool, len(ids))
	var outside []string
	for _, p := range pointed {
		if i := search(ids, p); i >= 0 {
			child[i] = true
		} else {
			outside = append(outside, p)
		}
	}
	root, err := parentOf(ids, child)
	if err != nil {
		return "", err
	}
	if err := pointsOutside(ctx, store, outside); err != nil {
		return "", err
	}
	if len(groups) == 1 {
		return Import(ctx, store, files)
	}
	children, err := Children(ctx, scratch, root)
	if err != nil {
		return "", err
	}
	order := make([]string, 0, len(ids))
	ordered := make([]bool, len(ids))
	for _, c := range children {
		if i := search(ids, c); i >= 0 {
			order = append(order, c)
			ordered[i] = true
		}
	}
	if len(order) != len(ids)-1 {
		var stray []string
		for i, id := range ids {
			if id != root && !ordered[i] {
				stray = append(stray, QuoteID(id))
			}
		}
		return "", errf.Errorf("import: %w: %s %s %s of %s or of its subagents (within %d levels)", ErrInvalid,
			plural(len(stray), "session", "sessions"), joinList(stray), plural(len(stray), "is not a subagent session", "are not subagent sessions"), QuoteID(root), MaxSubagentDepth)
	}
	order = append(order, root)
	for _, id := range order {
		_, err := store.Files(ctx, id)
		if err == nil {
			return "", errf.Errorf("import: session %s: %w; nothing was imported", QuoteID(id), ErrExists)
		}
		if !errors.Is(err, ErrNotFound) {
			return "", errf.Errorf("import: session %s: %w", QuoteID(id), err)
		}
	}
	for i, id := range order {
		if _, err := Import(ctx, store, groups[search(ids, id)].files); err != nil {
			// The sessions stored before it are removed again; those that
			// cannot be are named (the error said "nothing was imported"
			// while they stayed, listed as subagents' sessions).
			var left []string
			for _, done := range order[:i] {
				if err := store.Delete(ctx, done); err != nil && !errors.Is(err, ErrNotFound) {
					left = append(left, QuoteID(done))
				}
			}
			if len(left) > 0 {
				return "", errf.Errorf("import: store session %s: %w; %s stored and could not be removed again (delete %s); nothing else was imported", QuoteID(id), err,
					plural(len(left), "session "+left[0]+" was", "sessions "+joinList(left)+" were"), plural(len(left), "it", "them"))
			}
			return "", errf.Errorf("import: store session %s: %w; nothing was imported", QuoteID(id), err)
		}
	}
	return root, nil
}

// ImportIDs returns the ids of the sessions [ImportTree] would store from
// files, without checking the files as it does: each file's name gives
// its session's id, and one file without a name its session_meta's. None
// where the names give none ([ImportTree] refuses those files). A caller
// that holds the sessions' locks takes them before it imports.
func ImportIDs(files []File) []string {
	groups, err := groupFiles(files)
	if err != nil || len(groups) == 0 {
		return nil
	}
	if len(groups) == 1 {
		id, _, err := order(files)
		if err == nil && id == "" {
			id, _ = check(files[0].Data)
		}
		if id == "" {
			return nil
		}
		return []string{id}
	}
	ids := make([]string, len(groups))
	for i := range groups {
		ids[i] = groups[i].id
	}
	return ids
}

// pointsOutside refuses subagent pointers of an import naming sessions
// it does not hold (outside) that store holds: a Trace made by hand would
// take one for its own child, to be deleted and exported with it.
func pointsOutside(ctx context.Context, store Store, outside []string) error {
	if len(outside) == 0 {
		return nil
	}
	infos, err := store.Sessions(ctx) // one read, however many pointers
	if err != nil {
		return errf.Errorf("import: list the stored sessions: %w", err)
	}
	stored := make(map[string]bool, len(infos))
	for _, s := range infos {
		stored[s.ID] = true
	}
	var named []string
	for _, p := range outside {
		if stored[p] {
			named = append(named, QuoteID(p))
		}
	}
	if len(named) == 0 {
		return nil
	}
	if len(named) > 5 {
		named = append(named[:5], "…")
	}
	return errf.Errorf("import: %w: a subagent pointer names %s, stored already and not among the files: a session imported takes no stored session for its subagent's (delete %s first to import it); nothing was imported",
		ErrInvalid, plural(len(named), "session "+named[0], "sessions "+joinList(named)), plural(len(named), "it", "them"))
}

// group is the files of one session of an import.
type group struct {
	id    string
	files []File
}

// groupFiles sorts files by the session id their names give, the groups
// by id (a file's index is Import's to order). One file of any name is one
// session, named by its session_meta (id ""). Sorted once, not a map: less
// code in the WebAssembly build.
func groupFiles(files []File) ([]group, error) {
	if len(files) == 1 {
		return []group{{files: files}}, nil
	}
	sorted := make([]group, len(files)) // one file each, then joined
	for i, f := range files {
		base := f.Name[strings.LastIndexByte(f.Name, '/')+1:]
		id, _, ok := ParseFileName(base)
		if !ok {
			return nil, errf.Errorf("import: %w: %q is not a trace file name <session_id>_<NNN>.jsonl", ErrInvalid, f.Name)
		}
		sorted[i] = group{id: id, files: files[i : i+1 : i+1]}
	}
	heapSort(len(sorted), func(i, j int) bool { return sorted[i].id < sorted[j].id }, func(i, j int) { sorted[i], sorted[j] = sorted[j], sorted[i] })
	var groups []group
	for _, g := range sorted {
		if n := len(groups); n > 0 && groups[n-1].id == g.id {
			groups[n-1].files = append(groups[n-1].files, g.files[0])
		} else {
			groups = append(groups, g)
		}
	}
	return groups, nil
}

// parentOf returns the one session of ids that no other points at (child).
func parentOf(ids []string, child []bool) (string, error) {
	var roots []string
	for i, id := range ids {
		if !child[i] {
			roots = append(roots, id)
		}
	}
	switch len(roots) {
	case 1:
		return roots[0], nil
	case 0:
		return "", errf.Errorf("import: %w: each of the %d sessions is another's subagent session: no parent session among the files", ErrInvalid, len(ids))
	}
	quoted := make([]string, len(roots))
	for i, r := range roots {
		quoted[i] = QuoteID(r)
	}
	return "", errf.Errorf("import: %w: the files hold %d sessions that no other points at (%s); import one session, with its subagents' sessions, at a time", ErrInvalid, len(roots), joinList(quoted))
}

// Children returns the ids of the child sessions the stored session id
// points at, and theirs, depth first, [MaxSubagentDepth] deep. A pointer is
// followed only to a session whose Trace starts with a subagent's
// session_meta (source "subagent", E-15.1): a pointer in a Trace imported
// from a file may name any session of the store, which its parent does not
// own. A child not stored, or not a subagent's, is left out without an
// error; one that does not read is left out too, and the first such error
// is returned with the ids found. ErrNotFound when id has no file; none
// and a nil error when it has no children.
func Children(ctx context.Context, store Store, id string) ([]string, error) {
	out, _, err := ChildrenUnstored(ctx, store, id)
	return out, err
}

// ChildrenUnstored returns [Children]'s ids, and the ids that subagent
// pointers of id and of those children name and that store holds no file
// of: a child session whose run has not stored its first record yet. A
// delete of id takes their locks too (the child's run holds its own), so
// that such a child does not write its Trace after its parent is gone.
func ChildrenUnstored(ctx context.Context, store Store, id string) (children, unstored []string, err error) {
	recs, err := Records(ctx, store, id)
	if err != nil {
		return nil, nil, err
	}
	var out []string
	seen := map[string]bool{id: true}
	var first error
	var walk func(recs []omni.Message, depth int)
	walk = func(recs []omni.Message, depth int) {
		for _, r := range recs {
			child, ok := SubagentPointer(r)
			if !ok || seen[child] {
				continue
			}
			seen[child] = true
			crecs, err := Records(ctx, store, child)
			if errors.Is(err, ErrNotFound) {
				unstored = append(unstored, child)
				continue
			}
			if err != nil {
				if first == nil {
					first = err
				}
				continue
			}
			if !subagentTrace(crecs) {
				continue
			}
			out = append(out, child)
			if depth+1 < MaxSubagentDepth {
				walk(crecs, depth+1)
			}
		}
	}
	walk(recs, 0)
	return out, unstored, first
}

// DeleteTree deletes the stored session id and the child sessions of its
// subagents, and theirs ([Children]): a child is part of its parent's
// run, and left alone it would be listed, and kept, for ever. A Trace
// that cannot be read is deleted all the same, without the children it
// would name; a child that cannot be read is left. ErrNotFound when id
// has no file. Each session is deleted after the sessions it points at,
// id last: a DeleteTree cut short (a page reloaded, a store failing)
// leaves only sessions the next one reaches from id.
func DeleteTree(ctx context.Context, store Store, id string) error {
	if native && store == nil {
		return nilStore("delete", id)
	}
	children, _ := Children(ctx, store, id)
	for i := range children { // depth first: a child's own come after it
		c := children[len(children)-1-i]
		if err := store.Delete(ctx, c); err != nil && !errors.Is(err, ErrNotFound) {
			return errf.Errorf("delete subagent session %s: %w", QuoteID(c), err)
		}
	}
	return store.Delete(ctx, id)
}

// joinList joins s with ", " (strings.Join's generic growth costs the
// WebAssembly build more than this).
func joinList(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
