package playground

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/floehq/floe/engine/trace"
)

// A browser saving an export again names it as a copy; the files import
// under the names they copy, the same file chosen twice once.
func TestImportFilesTakesCopiesNames(t *testing.T) {
	const id = "session-2026-01-02-03-04-05-0000abcd"
	for copy, want := range map[string]string{
		id + "_001 (1).jsonl":        id + "_001.jsonl",
		id + "_001(2).jsonl":         id + "_001.jsonl",
		id + "_001-1.jsonl":          id + "_001.jsonl",
		id + "_001 - Copy.jsonl":     id + "_001.jsonl",
		id + "_001 - Copy (3).jsonl": id + "_001.jsonl",
		id + "_012 (1).jsonl":        id + "_012.jsonl",
		id + "_001.jsonl":            "",
		"notes (1).jsonl":            "",
		id + "_001 (x).jsonl":        "",
		id + "_001 (1).txt":          "",
	} {
		got, ok := copiedName(copy)
		if ok != (want != "") || ok && got != want {
			t.Errorf("copiedName(%q) = %q, %v; want %q", copy, got, ok, want)
		}
	}

	files := []trace.File{{Name: id + "_001 (1).jsonl", Data: []byte("a")}, {Name: "child_001 (1).jsonl", Data: []byte("b")}, {Name: id + "_001.jsonl", Data: []byte("a")}}
	got, err := ImportFiles(files)
	want := []trace.File{{Name: id + "_001.jsonl", Data: []byte("a")}, {Name: "child_001.jsonl", Data: []byte("b")}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ImportFiles = %q, %v; want %q", got, err, want)
	}
	files[2].Data = []byte("c")
	if _, err := ImportFiles(files); err == nil || !strings.Contains(err.Error(), `"`+id+`_001 (1).jsonl" and "`+id+`_001.jsonl" are two different files named "`+id+`_001.jsonl"`) {
		t.Errorf("two versions of one file: %v", err)
	}
	// The name they share is quoted as theirs are: it may hold any bytes.
	files = []trace.File{{Name: "a\xff_001 (1).jsonl", Data: []byte("a")}, {Name: "a\xff_001.jsonl", Data: []byte("b")}}
	if _, err := ImportFiles(files); err == nil || !strings.HasSuffix(err.Error(), ` are two different files named "a\xff_001.jsonl": choose one of them`) {
		t.Errorf("two versions of a file of invalid UTF-8: %q", err)
	}
	got, err = ImportFiles([]trace.File{{Name: "lesson 1.jsonl", Data: []byte("a")}})
	if err != nil || len(got) != 1 || got[0].Name != "" {
		t.Errorf("one file of any name: %q, %v", got, err)
	}
}

// exportWithChild stores a session with a subagent's child session and
// returns the store, their ids and the export of both.
func exportWithChild(t *testing.T) (src *trace.MemStore, parent, child string, files []trace.File) {
	t.Helper()
	src = &trace.MemStore{}
	child = storeSession(t, src, childMeta(""))
	parent = storeSession(t, src, Meta(time.Now()), pointer(child))
	files, err := trace.ExportTree(context.Background(), src, parent, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	return src, parent, child, files
}

// A session with a subagent, exported and saved twice by a browser (its
// files renamed "… (1).jsonl"), imports whole.
func TestImportCopiesOfAnExport(t *testing.T) {
	ctx := context.Background()
	src, parent, _, files := exportWithChild(t)
	for i := range files {
		files[i].Name = strings.TrimSuffix(baseName(files[i].Name), ".jsonl") + " (1).jsonl"
	}
	chosen, err := ImportFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	dst := &trace.MemStore{}
	if id, err := trace.ImportTree(ctx, dst, chosen); err != nil || id != parent {
		t.Fatalf("import = %q, %v; want %q", id, err, parent)
	}
	if !reflect.DeepEqual(dump(t, dst), dump(t, src)) {
		t.Error("the imported sessions differ from the exported ones")
	}
}

// A subagent's session chosen alone is refused, storing nothing: stored,
// it would never be listed (nor opened, exported or deleted).
func TestImportSessionRefusesASubagentsSessionAlone(t *testing.T) {
	ctx := context.Background()
	_, parent, child, files := exportWithChild(t)
	dst := &trace.MemStore{}
	_, err := ImportSession(ctx, dst, files[1:], nil)
	if err == nil || !strings.Contains(err.Error(), "session "+trace.QuoteID(child)+" is a subagent's") {
		t.Fatalf("the child alone: %v", err)
	}
	if got := dump(t, dst); len(got) != 0 {
		t.Errorf("stored after a refused import: %d sessions", len(got))
	}
	if id, err := ImportSession(ctx, dst, files, nil); err != nil || id != parent {
		t.Fatalf("with its parent: %q, %v", id, err)
	}
}

// An import of a session, or of a subagent's session with it, that this
// page runs (its records not all stored yet) is refused naming it, and
// stores nothing: it took the id, and the run's records then went into
// the imported session.
func TestImportSessionRefusesASessionThePageRuns(t *testing.T) {
	ctx := context.Background()
	_, parent, child, files := exportWithChild(t)
	for _, running := range []string{parent, child} {
		dst := &trace.MemStore{}
		_, err := ImportSession(ctx, dst, files, func(id string) bool { return id == running })
		if want := "session " + trace.QuoteID(running) + " is busy: it runs in this page"; err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("%s running: %v, want %s…", running, err, want)
		}
		if got := dump(t, dst); len(got) != 0 {
			t.Errorf("stored after a refused import: %d sessions", len(got))
		}
	}
}

// Files over MaxImportBytes, one or all together, are refused before
// they are read, naming the file and its size and the bound: a file of
// hundreds of MB was read whole and ran the page out of memory.
func TestCheckImportSizes(t *testing.T) {
	const id = "session-2026-01-02-03-04-05-0000abcd"
	for _, tc := range []struct {
		files []ImportSize
		want  string
	}{
		{nil, ""},
		{[]ImportSize{{id + "_001.jsonl", 0}}, ""},
		{[]ImportSize{{id + "_001.jsonl", MaxImportBytes}}, ""},
		{[]ImportSize{{id + "_001.jsonl", 40 << 20}, {id + "_002.jsonl", 88 << 20}}, ""},
		{[]ImportSize{{id + "_001.jsonl", MaxImportBytes + 1}},
			`"` + id + `_001.jsonl" is 134217729 bytes (128.0 MiB), over the 134217728 bytes (128 MiB) an import reads: nothing was imported`},
		{[]ImportSize{{id + "_001.jsonl", 10}, {"big.jsonl", 300 << 20}},
			`"big.jsonl" is 314572800 bytes (300.0 MiB), over the 134217728 bytes (128 MiB) an import reads: nothing was imported`},
		{[]ImportSize{{id + "_001.jsonl", 64 << 20}, {id + "_002.jsonl", 64 << 20}, {id + "_003.jsonl", 1 << 20}},
			`the 3 files chosen are 135266304 bytes (129.0 MiB) together, over the 134217728 bytes (128 MiB) an import reads: nothing was imported`},
	} {
		err := CheckImportSizes(tc.files)
		if got := fmt.Sprint(err); tc.want == "" && err != nil || tc.want != "" && got != tc.want {
			t.Errorf("%v: %v, want %q", tc.files, err, tc.want)
		}
	}
}
