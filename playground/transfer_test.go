package playground

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

// stamped returns m with a timestamp, as a Trace writer stores it.
func stamped(m omni.Message) omni.Message {
	m.Timestamp = time.Now().UTC().Format(omni.TimestampLayout)
	return m
}

func pointer(id string) omni.Message {
	return stamped(omni.Event(omni.Payload{Type: omni.Subagent, Rest: &omni.Rest{SessionID: id}}))
}

// childMeta returns the session_meta of a subagent's child session, with
// id as its session id ("": a new one).
func childMeta(id string) omni.Message {
	m := Meta(time.Now())
	m.Payload.Edit().Source = omni.SourceSubagent
	if id != "" {
		m.Payload.Edit().SessionID = id
	}
	return m
}

// storeSession stores a one-file session of records.
func storeSession(t *testing.T, store trace.Store, recs ...omni.Message) string {
	t.Helper()
	var data []byte
	for _, r := range recs {
		data = append(data, record(t, r)...)
	}
	id := recs[0].Payload.SessionID()
	if err := store.Create(context.Background(), id, [][]byte{data}); err != nil {
		t.Fatal(err)
	}
	return id
}

// dump returns every file of every session of store, by session id.
func dump(t *testing.T, store trace.Store) map[string][][]byte {
	t.Helper()
	ctx := context.Background()
	infos, err := store.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][][]byte{}
	for _, s := range infos {
		files, err := store.Files(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			data, err := store.ReadFile(ctx, s.ID, f.Index)
			if err != nil {
				t.Fatal(err)
			}
			out[s.ID] = append(out[s.ID], data)
		}
	}
	return out
}

// family stores a session with a subagent child (a scripted run) and a
// child of that child, the parent in two files; it returns the three ids.
func family(t *testing.T, store *trace.MemStore) (parent, child, grandchild string) {
	t.Helper()
	ctx := context.Background()
	meta := Meta(time.Now())
	parent = meta.Payload.SessionID()
	s, _, err := Open(Options{
		Meta: &meta, Trace: trace.NewWriter(store, parent, 1),
		SubagentTrace: func(id string) engine.TraceSink { return trace.NewWriter(store, id, 1) },
		OnSubagent:    func(id, _ string) { child = id },
	})
	if err != nil {
		t.Fatal(err)
	}
	run(t, s, "subagent: look around")
	if child == "" {
		t.Fatal("the run started no subagent")
	}
	gm := childMeta("")
	prompt := omni.UserText("look deeper")
	prompt.Payload.Edit().Sender = omni.SenderParentAgent
	grandchild = storeSession(t, store, gm, stamped(prompt))
	if _, err := store.Append(ctx, child, 1, record(t, pointer(grandchild))); err != nil {
		t.Fatal(err)
	}
	// A second file, as a compaction's rotation starts it.
	if _, err := store.Append(ctx, parent, 2, record(t, stamped(meta))); err != nil {
		t.Fatal(err)
	}
	return parent, child, grandchild
}

// An exported session with a child and a grandchild, imported into an
// empty store, comes back file for file (so record for record), shown
// with its subagents as before, listed alone and deleted with them; the
// files may come with or without their date directories.
func TestExportImportSubagentSessions(t *testing.T) {
	ctx := context.Background()
	src := &trace.MemStore{}
	parent, child, grandchild := family(t, src)

	files, err := trace.ExportTree(ctx, src, parent, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
	}
	date := `^\d{4}-\d\d-\d\d/`
	for i, want := range []string{parent + "_001", parent + "_002", child + "_001", grandchild + "_001"} {
		if i >= len(names) || !regexp.MustCompile(date+regexp.QuoteMeta(want)+`\.jsonl$`).MatchString(names[i]) {
			t.Fatalf("exported %v, want the parent's two files, then the child's, then the grandchild's, each <yyyy-mm-dd>/<id>_NNN.jsonl", names)
		}
	}
	if len(names) != 4 {
		t.Fatalf("exported %v, want 4 files", names)
	}

	flat := make([]trace.File, len(files))
	for i, f := range files {
		flat[i] = trace.File{Name: f.Name[strings.LastIndexByte(f.Name, '/')+1:], Data: f.Data}
	}
	for name, set := range map[string][]trace.File{"with date directories": files, "names only": flat} {
		t.Run(name, func(t *testing.T) {
			dst := &trace.MemStore{}
			id, err := trace.ImportTree(ctx, dst, set)
			if err != nil {
				t.Fatal(err)
			}
			if id != parent {
				t.Errorf("ImportSession returned %s, want the parent %s", id, parent)
			}
			if got, want := dump(t, dst), dump(t, src); !reflect.DeepEqual(got, want) {
				t.Fatalf("imported store differs from the exported one:\n got %q\nwant %q", got, want)
			}
			before, err := trace.History(ctx, src, parent)
			if err != nil {
				t.Fatal(err)
			}
			after, err := trace.History(ctx, dst, parent)
			if err != nil {
				t.Fatal(err)
			}
			if len(after) != len(before) {
				t.Fatalf("History after the import: %d records, want %d", len(after), len(before))
			}
			for i := range before {
				b, _ := before[i].MarshalJSON()
				a, _ := after[i].MarshalJSON()
				if !bytes.Equal(a, b) {
					t.Errorf("record %d: %s, want %s", i, a, b)
				}
			}
			var grand int
			for _, r := range after {
				if len(r.Origin) == 2 && r.Origin[0] == child && r.Origin[1] == grandchild {
					grand++
				}
			}
			if grand != 2 {
				t.Errorf("the grandchild's %d records are shown nested under the child, want 2", grand)
			}
			var p Sessions
			if list, err := p.List(ctx, dst); err != nil || len(list) != 1 || list[0].ID != parent {
				t.Errorf("listed %v (%v), want the parent alone", list, err)
			}
			if err := DeleteSession(ctx, dst, parent, nil); err != nil {
				t.Fatal(err)
			}
			if left := dump(t, dst); len(left) != 0 {
				t.Errorf("after deleting the parent, stored: %v", left)
			}
		})
	}
}

// A parent's files alone (an export of the older kind, or of a session
// stored before its children were) import as before and show the subagent
// call without nested cards; so does one file of any name.
func TestImportParentOnly(t *testing.T) {
	ctx := context.Background()
	src := &trace.MemStore{}
	parent, _, _ := family(t, src)
	files, err := trace.Export(ctx, src, parent, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	dst := &trace.MemStore{}
	id, err := trace.ImportTree(ctx, dst, files)
	if err != nil || id != parent {
		t.Fatalf("ImportSession = %s, %v; want %s", id, err, parent)
	}
	stored := dump(t, dst)
	if len(stored) != 1 || !reflect.DeepEqual(stored[parent], dump(t, src)[parent]) {
		t.Fatalf("stored %q", stored)
	}
	recs, err := trace.History(ctx, dst, parent)
	if err != nil {
		t.Fatal(err)
	}
	tr := &Transcript{}
	for _, r := range recs {
		tr.ApplyRecord(r)
	}
	if got, want := cards(tr), "subagent(allow,completed)"; got != want {
		t.Errorf("cards %s, want %s", got, want)
	}

	other := storeSession(t, src, Meta(time.Now()), stamped(omni.UserText("hello")))
	one := dump(t, src)[other][0]
	id, err = trace.ImportTree(ctx, dst, []trace.File{{Name: "", Data: one}})
	if err != nil || id != other {
		t.Fatalf("one unnamed file: %s, %v; want %s", id, err, other)
	}
}

// failCreate is a store whose Create fails for one session id.
type failCreate struct {
	*trace.MemStore
	id string
}

func (s failCreate) Create(ctx context.Context, id string, files [][]byte) error {
	if id == s.id {
		return errors.New("disk full")
	}
	return s.MemStore.Create(ctx, id, files)
}

// A refused import stores nothing, whichever session is at fault, and says
// what was wrong.
func TestImportRefusedLeavesTheStore(t *testing.T) {
	ctx := context.Background()
	src := &trace.MemStore{}
	parent, child, _ := family(t, src)
	files, err := trace.ExportTree(ctx, src, parent, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	stray := storeSession(t, src, Meta(time.Now()), stamped(omni.UserText("unrelated")))
	strayFiles, err := trace.Export(ctx, src, stray, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	// Two sessions that point at each other, reached from no parent.
	bm := childMeta("")
	loop := &trace.MemStore{}
	a := storeSession(t, loop, childMeta(""), pointer(bm.Payload.SessionID()))
	b := storeSession(t, loop, bm, pointer(a))
	loopFiles, err := trace.ExportTree(ctx, loop, a, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if len(loopFiles) != 2 {
		t.Fatalf("the loop exported %d files, want 2", len(loopFiles))
	}

	with := func(extra ...trace.File) []trace.File { return append(append([]trace.File(nil), files...), extra...) }
	damaged := with()
	for i, f := range damaged {
		if strings.Contains(f.Name, child) {
			first, rest, _ := bytes.Cut(f.Data, []byte("\n"))
			damaged[i].Data = append(append(append([]byte(nil), first...), "\n{not json\n"...), rest...)
		}
	}
	cases := []struct {
		name  string
		files []trace.File
		store func(*trace.MemStore) trace.Store
		want  []string
		is    error
	}{
		{name: "a damaged line in a child's file", files: damaged,
			want: []string{child + "_001.jsonl", "line 2"}, is: trace.ErrInvalid},
		{name: "a child already stored", files: files,
			store: func(m *trace.MemStore) trace.Store {
				storeSession(t, m, childMeta(child))
				return m
			},
			want: []string{child, "session already exists", "nothing was imported"}, is: trace.ErrExists},
		{name: "a second parent", files: with(strayFiles...),
			want: []string{"2 sessions that no other points at", parent, stray}, is: trace.ErrInvalid},
		{name: "sessions no pointer of the parent reaches", files: with(loopFiles...),
			want: []string{"sessions " + trace.QuoteID(min(a, b)) + ", " + trace.QuoteID(max(a, b)) + " are not subagent sessions of", parent}, is: trace.ErrInvalid},
		{name: "a file that is not a trace file", files: with(trace.File{Name: "notes.txt", Data: []byte("hello\n")}),
			want: []string{`"notes.txt" is not a trace file name`}, is: trace.ErrInvalid},
		{name: "the parent's first file missing", files: files[1:],
			want: []string{parent, "numbered from 001"}, is: trace.ErrInvalid},
		{name: "storing the parent fails after its children", files: files,
			store: func(m *trace.MemStore) trace.Store { return failCreate{m, parent} },
			want:  []string{"store session", parent, "disk full", "nothing was imported"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := &trace.MemStore{}
			storeSession(t, mem, Meta(time.Now()), stamped(omni.UserText("already here")))
			var store trace.Store = mem
			if c.store != nil {
				store = c.store(mem)
			}
			before := dump(t, mem)
			id, err := trace.ImportTree(ctx, store, c.files)
			if err == nil {
				t.Fatalf("imported %s, want a refusal", id)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %q is not %v", err, c.is)
			}
			if after := dump(t, mem); !reflect.DeepEqual(after, before) {
				t.Errorf("the store changed:\n got %q\nwant %q", after, before)
			}
		})
	}
}
