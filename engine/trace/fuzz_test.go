package trace_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

// FuzzRead: ReadFile never panics; its accounting is consistent; every
// record re-encodes, re-decodes equal and survives a Writer round trip;
// replaying the records never panics. Seeds: testdata/fuzz/FuzzRead, cut
// from reference traces.
func FuzzRead(f *testing.F) {
	f.Add([]byte(recA + "\n" + torn + "\n" + recB))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := trace.ReadFile(data)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Count(data, []byte("\n")) + 1
		torn := 0
		if p.TornTail {
			torn = 1
		}
		if got := len(p.Records) + len(p.Skipped) + torn; got > lines {
			t.Fatalf("%d records + %d skipped + %d torn > %d lines", len(p.Records), len(p.Skipped), torn, lines)
		}
		for i, s := range p.Skipped {
			if s.Err == nil || s.Line < 1 || s.Line > lines || i > 0 && s.Line <= p.Skipped[i-1].Line {
				t.Fatalf("bad skipped line %+v", s)
			}
		}
		store := &trace.MemStore{}
		w := trace.NewWriter(store, "f", 1)
		var written []omni.Message
		for _, m := range p.Records {
			enc := m.AppendJSON(nil)
			again, err := omni.Decode(enc)
			if err != nil {
				t.Fatalf("re-decode of %s: %v", enc, err)
			}
			if !reflect.DeepEqual(again, m) {
				t.Fatalf("round trip changed the record:\n was %#v\n now %#v", m, again)
			}
			if m.Timestamp != "" && m.Recordable() {
				if err := w.Write(context.Background(), m); err != nil {
					t.Fatalf("Write: %v", err)
				}
				written = append(written, m)
			}
		}
		if len(written) > 0 {
			back, _ := store.ReadFile(context.Background(), "f", 1)
			q, err := trace.ReadFile(back)
			if err != nil || len(q.Skipped) > 0 || q.TornTail || !reflect.DeepEqual(q.Records, written) {
				t.Fatalf("writer round trip: %d of %d records, skipped %v, torn %v", len(q.Records), len(written), q.SkippedLines(), q.TornTail)
			}
		}
		trace.Replay(p.Records, resumeAt)
	})
}

// FuzzImport: Import never panics, whatever the files' names and bytes;
// what it takes, Export gives back, record for record. Seeds:
// testdata/fuzz/FuzzImport.
func FuzzImport(f *testing.F) {
	meta := `{"timestamp":"2026-01-02T03:04:05.000Z","type":"session_meta","payload":{"session_id":"s","provider":"p","model_id":"m","model_context_window":1,"system_prompt":"","agent_state":"","workspace":""}}` + "\n"
	for _, name := range []string{"", "s_001.jsonl", "2026-01-02/s_000.jsonl", "s_0001.jsonl", "s_002.jsonl", "x_001.jsonl", "_001.jsonl"} {
		f.Add(name, []byte(meta+recA+"\n"), "")
		f.Add(name, []byte(recA+"\n"), "s_002.jsonl")
	}
	f.Fuzz(func(t *testing.T, name string, data []byte, second string) {
		files := []trace.File{{Name: name, Data: data}}
		if second != "" {
			files = append(files, trace.File{Name: second, Data: []byte(meta)})
		}
		store := &trace.MemStore{}
		id, err := trace.Import(context.Background(), store, files)
		if err != nil {
			msg := err.Error()
			if !errors.Is(err, trace.ErrInvalid) && !errors.Is(err, trace.ErrNotResumable) && !errors.Is(err, trace.ErrTooLarge) ||
				strings.ContainsAny(msg, "\r\n") || !utf8.ValidString(msg) {
				t.Fatalf("Import(%q, %q): %q: want one line of UTF-8 wrapping why", name, second, msg)
			}
			return
		}
		back, err := trace.Export(context.Background(), store, id, nil)
		if err != nil || len(back) != len(files) {
			t.Fatalf("Export after Import: %d files, %v", len(back), err)
		}
		// Each file comes back under its session's name and number, its
		// bytes as imported.
		for i, b := range back {
			sid, index, ok := trace.ParseFileName(path.Base(b.Name))
			if !ok || sid != id || index != i+1 {
				t.Fatalf("Export after Import of session %q: file %d named %q", id, i+1, b.Name)
			}
			want := files[0]
			for _, f := range files {
				if _, n, _ := trace.ParseFileName(path.Base(f.Name)); n == index {
					want = f
				}
			}
			if !bytes.Equal(b.Data, want.Data) {
				t.Fatalf("Export after Import: %q holds %q, imported %q as %q", b.Name, b.Data, want.Name, want.Data)
			}
		}
	})
}

// FuzzReadParts: a file read a part at a time, as Resume reads it, cut
// anywhere (cuts gives the parts' lengths, the rest is the last part),
// gives what ReadFile, CheckCalls and Replay give the file whole: the same
// records and lines, skipped lines, torn tail, first refused call and
// replayed state. Seeds: testdata/fuzz/FuzzReadParts.
func FuzzReadParts(f *testing.F) {
	f.Add([]byte(recA+"\n"+torn+"\n"+recB), []byte{3, 0, 200, 1})
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		var parts [][]byte
		rest := data
		for _, c := range cuts {
			n := min(int(c), len(rest))
			parts, rest = append(parts, rest[:n]), rest[n:]
		}
		parts = append(parts, rest)
		got, gotReplay, gotErr := trace.ReadInParts(parts, fixedNow())
		want, err := trace.ReadFile(data)
		if err != nil {
			t.Fatal(err)
		}
		wantErr := want.CheckCalls()
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("read in %d parts: error %v; whole: %v", len(parts), gotErr, wantErr)
		}
		if wantErr != nil {
			return
		}
		if len(got.Records)+len(want.Records) > 0 && (!reflect.DeepEqual(got.Records, want.Records) || !reflect.DeepEqual(got.Lines, want.Lines)) {
			t.Fatalf("read in %d parts: records of lines %v; whole: %v", len(parts), got.Lines, want.Lines)
		}
		if got.TornTail != want.TornTail || fmt.Sprint(got.Skipped) != fmt.Sprint(want.Skipped) {
			t.Fatalf("read in %d parts: skipped %v, torn %v; whole: %v, %v", len(parts), got.Skipped, got.TornTail, want.Skipped, want.TornTail)
		}
		if r := trace.Replay(want.Records, fixedNow()); !reflect.DeepEqual(gotReplay, r) {
			t.Fatalf("read in %d parts, the replay differs:\n got %+v\nwant %+v", len(parts), gotReplay, r)
		}
	})
}
