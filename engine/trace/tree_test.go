package trace_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/floehq/floe/engine/trace"
)

// metaOf is the session_meta of session id, a subagent's child session's
// when child.
func metaOf(id string, child bool) string {
	m := strings.ReplaceAll(metaLine, `"s1"`, `"`+id+`"`)
	if child {
		m = strings.Replace(m, `"workspace":""}`, `"workspace":"","source":"subagent"}`, 1)
	}
	return m
}

// A session imported from a file names, in subagent pointers, sessions
// the store holds already: another session of the user's and another
// session's subagent child. Deleting, exporting or reading it must not
// reach them: it does not own them.
func TestTreeFollowsOnlyItsOwnChildren(t *testing.T) {
	ctx := context.Background()
	store := &trace.MemStore{}
	add := func(id string, lines ...string) {
		t.Helper()
		if _, err := store.Append(ctx, id, 1, []byte(strings.Join(lines, ""))); err != nil {
			t.Fatal(err)
		}
	}
	add("victim", metaOf("victim", false), line("my secret plan"), pointer("vchild"))
	add("vchild", metaOf("vchild", true), line("the child's secret"))

	// An import naming them is refused, naming them; nothing is stored.
	evil := metaOf("evil", false) + line("hi") + pointer("victim") + pointer("vchild")
	for _, files := range [][]trace.File{
		{{Name: "", Data: []byte(evil)}},
		{{Name: "evil_001.jsonl", Data: []byte(evil + pointer("other"))}, {Name: "other_001.jsonl", Data: []byte(metaOf("other", true) + line("x"))}},
	} {
		_, err := trace.ImportTree(ctx, store, files)
		if !errors.Is(err, trace.ErrInvalid) || !strings.Contains(err.Error(), `"victim"`) || !strings.Contains(err.Error(), `"vchild"`) {
			t.Errorf("import of %d files pointing at stored sessions: %v, want ErrInvalid naming both", len(files), err)
		}
		if _, err := store.Files(ctx, "evil"); !errors.Is(err, trace.ErrNotFound) {
			t.Errorf("the refused import stored its session: %v", err)
		}
	}

	// A session stored all the same (by an older build, or imported before
	// the session it names was) does not reach a session of the user's,
	// whose session_meta says it is no subagent's child. (A subagent's
	// child session names no parent: that the import is refused is what
	// keeps another session's child from an imported one.)
	add("evil", metaOf("evil", false), line("hi"), pointer("victim"))
	if got, err := records(ctx, store, "evil", true); err != nil || strings.Contains(got, "secret") {
		t.Errorf("History of the hostile session: %q, %v: it shows another session's records", got, err)
	}
	files, err := trace.ExportTree(ctx, store, "evil", nil)
	if err != nil || len(files) != 1 {
		t.Errorf("ExportTree of the hostile session: %d files, %v; want its own one", len(files), err)
	}
	children, err := trace.Children(ctx, store, "evil")
	if err != nil || has(children, "victim") {
		t.Errorf("Children of the hostile session: %v, %v", children, err)
	}
	if err := trace.DeleteTree(ctx, store, "evil"); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Files(ctx, "victim"); err != nil {
		t.Errorf("deleting the hostile session deleted the user's: %v", err)
	}
	// The parent's own child goes with it.
	if err := trace.DeleteTree(ctx, store, "victim"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"victim", "vchild"} {
		if _, err := store.Files(ctx, id); !errors.Is(err, trace.ErrNotFound) {
			t.Errorf("session %s after its tree was deleted: %v", id, err)
		}
	}
}

func has(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// The tree functions' edge cases, as their doc comments state them: a
// session not stored is ErrNotFound for each; one without children has
// none, and no error.
func TestTreeOfNoSessionAndOfNoChildren(t *testing.T) {
	ctx := context.Background()
	store := &trace.MemStore{}
	if _, err := trace.Children(ctx, store, "none"); !errors.Is(err, trace.ErrNotFound) {
		t.Errorf("Children of a session not stored: %v, want ErrNotFound", err)
	}
	if _, err := trace.ExportTree(ctx, store, "none", nil); !errors.Is(err, trace.ErrNotFound) {
		t.Errorf("ExportTree of a session not stored: %v, want ErrNotFound", err)
	}
	if err := trace.DeleteTree(ctx, store, "none"); !errors.Is(err, trace.ErrNotFound) {
		t.Errorf("DeleteTree of a session not stored: %v, want ErrNotFound", err)
	}
	if _, err := store.Append(ctx, "alone", 1, []byte(metaOf("alone", false)+line("hi")+pointer("gone"))); err != nil {
		t.Fatal(err)
	}
	if children, err := trace.Children(ctx, store, "alone"); len(children) != 0 || err != nil {
		t.Errorf("Children of a session whose one child is not stored: %v, %v; want none, nil", children, err)
	}
	if files, err := trace.ExportTree(ctx, store, "alone", nil); len(files) != 1 || err != nil {
		t.Errorf("ExportTree of a session without children: %d files, %v; want 1, nil", len(files), err)
	}
}

// An import of no files says so, as Import does (not that each of its 0
// sessions is another's subagent session).
func TestImportTreeOfNoFiles(t *testing.T) {
	_, err := trace.ImportTree(context.Background(), &trace.MemStore{}, nil)
	if !errors.Is(err, trace.ErrInvalid) || !strings.Contains(err.Error(), "no files") {
		t.Errorf("ImportTree of no files: %v, want ErrInvalid saying no files", err)
	}
}
