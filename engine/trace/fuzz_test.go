package trace_test

import (
	"bytes"
	"context"
	"reflect"
	"testing"

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
			return
		}
		back, err := trace.Export(context.Background(), store, id, nil)
		if err != nil || len(back) != len(files) {
			t.Fatalf("Export after Import: %d files, %v", len(back), err)
		}
	})
}
