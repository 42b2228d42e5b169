package trace_test

import (
	"context"
	"errors"
	"fmt"
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

// Each session once: a child named by two pointers, one of them its own
// at itself, is read back, exported and imported once
// (README: readSession, deleteSession and exportSession follow a pointer
// at a session already reached no further).
func TestTreeReachesEachSessionOnce(t *testing.T) {
	ctx := context.Background()
	store := &trace.MemStore{}
	for id, data := range map[string]string{
		"p": metaOf("p", false) + line("the parent's words") + pointer("c") + pointer("c"),
		"c": metaOf("c", true) + line("the child's words") + pointer("c"),
	} {
		if _, err := store.Append(ctx, id, 1, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	if children, err := trace.Children(ctx, store, "p"); err != nil || strings.Join(children, ",") != "c" {
		t.Errorf("Children: %v, %v; want c once", children, err)
	}
	got, err := records(ctx, store, "p", true)
	if err != nil || strings.Count(got, "the child's words") != 1 || strings.Count(got, "the parent's words") != 1 {
		t.Errorf("History: %q, %v; want each session's records once", got, err)
	}
	files, err := trace.ExportTree(ctx, store, "p", nil)
	if err != nil || len(files) != 2 {
		t.Fatalf("ExportTree: %d files, %v; want the parent's and the child's", len(files), err)
	}
	if id, err := trace.ImportTree(ctx, &trace.MemStore{}, files); err != nil || id != "p" {
		t.Errorf("ImportTree of the export: %q, %v", id, err)
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

// ImportTree groups files given in any order, a session's files apart
// too, and names the sessions the parent does not reach.
func TestImportTreeFilesInAnyOrder(t *testing.T) {
	ctx := context.Background()
	file := func(id string, index int, data string) trace.File {
		return trace.File{Name: fmt.Sprintf("2026-11-30/%s_%03d.jsonl", id, index), Data: []byte(data)}
	}
	files := []trace.File{
		file("p", 2, metaOf("p", false)+line("two")+pointer("c2")),
		file("c2", 1, metaOf("c2", true)+line("c2-a")),
		file("c1", 2, metaOf("c1", true)+line("c1-b")),
		file("p", 1, metaOf("p", false)+line("one")+pointer("c1")),
		file("c1", 1, metaOf("c1", true)+line("c1-a")),
	}
	store := &trace.MemStore{}
	if id, err := trace.ImportTree(ctx, store, files); err != nil || id != "p" {
		t.Fatal(id, err)
	}
	got, err := records(ctx, store, "p", true)
	if want := "session_meta one subagent c1:session_meta c1:c1-a c1:session_meta c1:c1-b session_meta two subagent c2:session_meta c2:c2-a"; err != nil || got != want {
		t.Errorf("History:\n got %s, %v\nwant %s", got, err, want)
	}
	// a and b point at each other, not reached from p.
	files = append(files[:0:0], files...)
	files = append(files, file("b", 1, metaOf("b", true)+pointer("a")), file("a", 1, metaOf("a", true)+pointer("b")))
	_, err = trace.ImportTree(ctx, &trace.MemStore{}, files)
	if !errors.Is(err, trace.ErrInvalid) || !strings.Contains(err.Error(), `sessions "a", "b" are not subagent sessions of "p"`) {
		t.Errorf("sessions p does not reach: %v", err)
	}
}

// BenchmarkImportTree imports a session with n-1 subagents' child sessions
// (a parent that ran thousands of subagents): each step of the import is
// linear in the sessions, sorted once and searched by halves.
func BenchmarkImportTree(b *testing.B) {
	for _, n := range []int{1000, 8000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var parent strings.Builder
			parent.WriteString(metaOf("p", false) + line("go"))
			files := make([]trace.File, 0, n)
			for i := 1; i < n; i++ {
				id := fmt.Sprintf("c%05d", (i*7919)%n) // not in order
				parent.WriteString(pointer(id))
				files = append(files, trace.File{Name: "2026-11-30/" + id + "_001.jsonl", Data: []byte(metaOf(id, true) + line("hi"))})
			}
			files = append(files, trace.File{Name: "2026-11-30/p_001.jsonl", Data: []byte(parent.String())})
			b.ResetTimer()
			for range b.N {
				store := &trace.MemStore{}
				if id, err := trace.ImportTree(context.Background(), store, files); err != nil || id != "p" {
					b.Fatal(id, err)
				}
			}
		})
	}
}

// cutStore is a Store whose deletes fail after the first n: the page
// reloaded, or the program ended, in the middle of a DeleteTree.
type cutStore struct {
	trace.Store
	n int
}

func (s *cutStore) Delete(ctx context.Context, id string) error {
	if s.n == 0 {
		return errors.New("cut")
	}
	s.n--
	return s.Store.Delete(ctx, id)
}

// A DeleteTree cut short leaves sessions the next one reaches from the
// parent: a child is deleted after its own children, the parent last.
// (The parent went first: a cut left its children, listed as subagents'
// sessions and kept for ever, which no delete reached again.)
func TestDeleteTreeCutShortIsFinishedByTheNext(t *testing.T) {
	ctx := context.Background()
	tree := map[string]string{
		"p":  metaOf("p", false) + line("the parent") + pointer("c1") + pointer("c2"),
		"c1": metaOf("c1", true) + line("a child") + pointer("g1"),
		"g1": metaOf("g1", true) + line("a grandchild"),
		"c2": metaOf("c2", true) + line("another child"),
	}
	for n := range len(tree) {
		store := &trace.MemStore{}
		for id, data := range tree {
			if _, err := store.Append(ctx, id, 1, []byte(data)); err != nil {
				t.Fatal(err)
			}
		}
		if err := trace.DeleteTree(ctx, &cutStore{store, n}, "p"); err == nil {
			t.Fatalf("cut after %d deletes: DeleteTree succeeded", n)
		}
		if err := trace.DeleteTree(ctx, store, "p"); err != nil {
			t.Errorf("cut after %d deletes: the next DeleteTree: %v", n, err)
		}
		if left, err := store.Sessions(ctx); err != nil || len(left) != 0 {
			t.Errorf("cut after %d deletes, then deleted again: left %+v, %v", n, left, err)
		}
	}
}

// failStore is a Store whose Create fails for session create and whose
// Delete fails for the sessions in keep.
type failStore struct {
	trace.Store
	create string
	keep   map[string]bool
}

func (s *failStore) Create(ctx context.Context, id string, files [][]byte) error {
	if id == s.create {
		return errors.New("disk full")
	}
	return s.Store.Create(ctx, id, files)
}

func (s *failStore) Delete(ctx context.Context, id string) error {
	if s.keep[id] {
		return errors.New("read-only")
	}
	return s.Store.Delete(ctx, id)
}

// An import whose last session fails to store removes the sessions it
// stored before; one it cannot remove is named, and the error no longer
// says that nothing was imported.
func TestImportTreeFailedMidwayNamesWhatStays(t *testing.T) {
	ctx := context.Background()
	files := []trace.File{
		{Name: "2026-11-30/p_001.jsonl", Data: []byte(metaOf("p", false) + line("the parent") + pointer("c1") + pointer("c2"))},
		{Name: "2026-11-30/c1_001.jsonl", Data: []byte(metaOf("c1", true) + line("a child"))},
		{Name: "2026-11-30/c2_001.jsonl", Data: []byte(metaOf("c2", true) + line("another child"))},
	}
	for _, tc := range []struct {
		keep map[string]bool
		says string
		left int
	}{
		{nil, `import: store session "p": disk full; nothing was imported`, 0},
		{map[string]bool{"c2": true}, `import: store session "p": disk full; session "c2" was stored and could not be removed again (delete it); nothing else was imported`, 1},
		{map[string]bool{"c1": true, "c2": true}, `import: store session "p": disk full; sessions "c1", "c2" were stored and could not be removed again (delete them); nothing else was imported`, 2},
	} {
		mem := &trace.MemStore{}
		_, err := trace.ImportTree(ctx, &failStore{mem, "p", tc.keep}, files)
		if err == nil || err.Error() != tc.says {
			t.Errorf("keep %v: got %v, want %s", tc.keep, err, tc.says)
		}
		if left, _ := mem.Sessions(ctx); len(left) != tc.left {
			t.Errorf("keep %v: %d sessions stored, want %d", tc.keep, len(left), tc.left)
		}
	}
}

// ChildrenUnstored names, besides Children's, the sessions pointers name
// that the store holds no file of (a child whose run has not stored its
// first record yet), and not a stored session that is no subagent's.
func TestChildrenUnstored(t *testing.T) {
	ctx := context.Background()
	store := &trace.MemStore{}
	for id, data := range map[string]string{
		"p":     metaOf("p", false) + line("hi") + pointer("c") + pointer("new") + pointer("user"),
		"c":     metaOf("c", true) + line("the child's") + pointer("grand"),
		"user":  metaOf("user", false) + line("a session of the user's"),
		"other": metaOf("other", false) + line("unrelated"),
	} {
		if _, err := store.Append(ctx, id, 1, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	children, unstored, err := trace.ChildrenUnstored(ctx, store, "p")
	if err != nil || strings.Join(children, ",") != "c" || strings.Join(unstored, ",") != "grand,new" {
		t.Errorf("ChildrenUnstored: %v, %v, %v; want [c], [grand new]", children, unstored, err)
	}
	if children, err := trace.Children(ctx, store, "p"); err != nil || strings.Join(children, ",") != "c" {
		t.Errorf("Children: %v, %v; want [c]", children, err)
	}
	if _, _, err := trace.ChildrenUnstored(ctx, store, "none"); !errors.Is(err, trace.ErrNotFound) {
		t.Errorf("ChildrenUnstored of a session not stored: %v, want ErrNotFound", err)
	}
}

// ImportIDs gives the ids ImportTree would store: the files' names', one
// unnamed file's session_meta's; none where the names give none.
func TestImportIDs(t *testing.T) {
	for _, c := range []struct {
		files []trace.File
		want  string
	}{
		{[]trace.File{{Name: "", Data: []byte(line("first") + metaOf("meta-id", false))}}, "meta-id"},
		{[]trace.File{{Name: "2026-01-02/named_001.jsonl", Data: []byte(metaOf("other", false))}}, "named"},
		{[]trace.File{{Name: "b_001.jsonl"}, {Name: "d/a_002.jsonl"}, {Name: "a_001.jsonl"}}, "a,b"},
		{[]trace.File{{Name: "a_001.jsonl"}, {Name: "not a trace"}}, ""},
		{[]trace.File{{Name: "", Data: []byte("not json\n")}}, ""},
		{nil, ""},
	} {
		if got := strings.Join(trace.ImportIDs(c.files), ","); got != c.want {
			t.Errorf("ImportIDs(%d files, first %q): %q, want %q", len(c.files), c.files[0:min(1, len(c.files))], got, c.want)
		}
	}
}
