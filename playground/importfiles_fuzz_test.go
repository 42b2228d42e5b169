package playground

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/floehq/floe/engine/trace"
)

// FuzzImportFiles: a copy's name (copiedName) is read only from a name
// that is no trace file's, ending ".jsonl", as a trace file's name that
// starts the same and is shorter; ImportFiles of two files, named a and b,
// gives files of distinct names, each with the data of a file chosen
// under it or a copy's name of it, or refuses two files of one name and
// different data, naming both.
func FuzzImportFiles(f *testing.F) {
	const id = "session-2026-01-02-03-04-05-0000abcd"
	for _, c := range [][2]string{
		{id + "_001 (1).jsonl", id + "_001.jsonl"}, {id + "_001(2).jsonl", "x"}, {id + "_001-1.jsonl", id + "_002.jsonl"},
		{id + "_001 - Copy.jsonl", id + "_001 - Copy (3).jsonl"}, {"notes (1).jsonl", "a/b_001.jsonl"}, {"(1).jsonl", "-1.jsonl"},
		{"_001 (1).jsonl", "a_001 - Copy - Copy.jsonl"}, {"a_001 ().jsonl", "a_001-.jsonl"}, {"", ""},
	} {
		f.Add(c[0], c[1], true)
		f.Add(c[0], c[1], false)
	}
	f.Fuzz(func(t *testing.T, a, b string, same bool) {
		for _, name := range []string{a, b} {
			got, ok := copiedName(name)
			if !ok {
				continue
			}
			if _, _, parses := trace.ParseFileName(name); parses || !strings.HasSuffix(name, ".jsonl") {
				t.Fatalf("copiedName(%q) = %q: of a name that is a trace file's, or no .jsonl", name, got)
			}
			sid, _, parses := trace.ParseFileName(got)
			if !parses || len(got) >= len(name) || !strings.HasPrefix(name, sid+"_") {
				t.Fatalf("copiedName(%q) = %q: no trace file name it copies", name, got)
			}
			if _, again := copiedName(got); again {
				t.Fatalf("copiedName(%q) = %q, itself a copy's name", name, got)
			}
		}
		da, db := []byte("a"), []byte("b")
		if same {
			db = da
		}
		files := []trace.File{{Name: a, Data: da}, {Name: b, Data: db}}
		out, err := ImportFiles(files)
		as := func(name string) string {
			if n, ok := copiedName(baseName(name)); ok {
				return n
			}
			return name
		}
		if err != nil {
			if msg := err.Error(); same || as(a) != as(b) || !strings.Contains(msg, "two different files") || strings.ContainsAny(msg, "\r\n") || !utf8.ValidString(msg) {
				t.Fatalf("ImportFiles(%q, %q) = %v", a, b, err)
			}
			return
		}
		seen := map[string]bool{}
		for _, o := range out {
			if seen[o.Name] {
				t.Fatalf("ImportFiles(%q, %q) = %q: a name twice", a, b, out)
			}
			seen[o.Name] = true
			if !(o.Name == as(a) && string(o.Data) == string(da)) && !(o.Name == as(b) && string(o.Data) == string(db)) {
				t.Fatalf("ImportFiles(%q, %q) = %q", a, b, out)
			}
		}
		if want := 2; as(a) == as(b) && len(out) != 1 || as(a) != as(b) && len(out) != want {
			t.Fatalf("ImportFiles(%q, %q) = %d files", a, b, len(out))
		}
	})
}
