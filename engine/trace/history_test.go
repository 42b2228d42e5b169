package trace_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

// line is a user prompt record of the given text.
func line(text string) string {
	return strings.Replace(promptLine, "hello there", text, 1)
}

// pointer is a subagent pointer record (E-15.3) naming child.
func pointer(child string) string {
	return `{"timestamp":"2026-11-30T23:30:00.003Z","type":"event_msg","payload":{"type":"subagent","session_id":"` + child + `"}}` + "\n"
}

func records(ctx context.Context, store trace.Store, id string, history bool) (string, error) {
	read := trace.Records
	if history {
		read = trace.History
	}
	recs, err := read(ctx, store, id)
	if err != nil {
		return "", err
	}
	var out []string
	for _, r := range recs {
		s := r.Payload.Text
		if s == "" {
			s = string(r.Payload.Type)
			if s == "" {
				s = string(r.Type)
			}
		}
		if len(r.Origin) > 0 {
			s = strings.Join(r.Origin, "/") + ":" + s
		}
		out = append(out, s)
	}
	return strings.Join(out, " "), nil
}

// Records reads every file in order, tolerantly; History also puts each
// stored child's records, origin prepended, after the pointer that names
// it, its own children's too, and leaves out a child that is not stored.
func TestRecordsAndHistory(t *testing.T) {
	ctx := context.Background()
	store := &trace.MemStore{}
	add := func(id string, index int, lines ...string) {
		t.Helper()
		if _, err := store.Append(ctx, id, index, []byte(strings.Join(lines, ""))); err != nil {
			t.Fatal(err)
		}
	}
	// A malformed line in the first file, a torn last line in the second.
	if err := store.Create(ctx, "s1", [][]byte{
		[]byte(metaLine + line("one") + "{not json\n" + pointer("c1") + line("two")),
		[]byte(metaLine + line("three") + pointer("gone") + pointer("c2") + `{"timestamp":"2026-11-30T23:30`),
	}); err != nil {
		t.Fatal(err)
	}
	add("c1", 1, metaOf("c1", true), line("c1-a"), pointer("g1"), line("c1-b"))
	add("g1", 1, metaOf("g1", true), line("g1-a"))
	add("c2", 1, metaOf("c2", true), line("c2-a"))
	// A pointer naming an id no store can hold is passed over, as a child
	// not stored is: reading, exporting and deleting the session go on.
	add("bad", 1, metaLine, line("x"), pointer("../escape"), pointer("c2"))
	if got, err := records(ctx, store, "bad", true); err != nil || got != "session_meta x subagent subagent c2:session_meta c2:c2-a" {
		t.Errorf("History with a bad pointer: %q, %v", got, err)
	}
	if files, err := trace.ExportTree(ctx, store, "bad", nil); err != nil || len(files) != 2 {
		t.Errorf("ExportTree with a bad pointer: %d files, %v", len(files), err)
	}

	got, err := records(ctx, store, "s1", false)
	if err != nil {
		t.Fatal(err)
	}
	want := "session_meta one subagent two session_meta three subagent subagent"
	if got != want {
		t.Errorf("Records:\n got %s\nwant %s", got, want)
	}
	got, err = records(ctx, store, "s1", true)
	if err != nil {
		t.Fatal(err)
	}
	want = "session_meta one subagent c1:session_meta c1:c1-a c1:subagent c1/g1:session_meta c1/g1:g1-a c1:c1-b two " +
		"session_meta three subagent subagent c2:session_meta c2:c2-a"
	if got != want {
		t.Errorf("History:\n got %s\nwant %s", got, want)
	}
	// A session without a pointer comes back as Records gives it.
	if got, _ := records(ctx, store, "c2", true); got != "session_meta c2-a" {
		t.Errorf("History of c2: %s", got)
	}
	for _, history := range []bool{false, true} {
		if _, err := records(ctx, store, "none", history); !errors.Is(err, trace.ErrNotFound) {
			t.Errorf("history %v of a session not stored: %v, want ErrNotFound", history, err)
		}
	}
}

// countingStore counts the files read.
type countingStore struct {
	trace.MemStore
	reads int
}

func (s *countingStore) ReadFile(ctx context.Context, id string, index int) ([]byte, error) {
	s.reads++
	return s.MemStore.ReadFile(ctx, id, index)
}

// A session already read is not read again: a Trace whose pointers name
// itself, an ancestor, or one child twice (an imported one may) gives each
// session's records once; each pointer read the whole chain again before,
// 3 pointers at itself 9841 files, 10 of them a hundred million.
func TestHistoryPointingAtItself(t *testing.T) {
	ctx := context.Background()
	store := &countingStore{}
	add := func(id string, lines ...string) {
		t.Helper()
		if _, err := store.Append(ctx, id, 1, []byte(strings.Join(lines, ""))); err != nil {
			t.Fatal(err)
		}
	}
	add("loop", line("x"), pointer("loop"), pointer("loop"), pointer("c"), pointer("c"), pointer("loop"))
	add("c", metaOf("c", true), line("y"), pointer("loop"), pointer("c"))
	got, err := records(ctx, store, "loop", true)
	if err != nil {
		t.Fatal(err)
	}
	if want := "x subagent subagent subagent c:session_meta c:y c:subagent c:subagent subagent subagent"; got != want {
		t.Errorf("History:\n got %.300s (%d bytes)\nwant %s", got, len(got), want)
	}
	if store.reads != 2 {
		t.Errorf("%d files read, want 2", store.reads)
	}
}

// omni.Meta builds a session_meta CheckMeta takes, in the reference's key
// order; a subagent's carries its source.
func TestMetaBuilder(t *testing.T) {
	m := omni.Meta{SessionID: "s-1", Provider: "openai", ModelID: "gpt", ContextWindow: 128000, SystemPrompt: "Be brief.", AgentState: "/a", Workspace: "/w"}
	if err := trace.CheckMeta(m.Message()); err != nil {
		t.Fatal(err)
	}
	msg := m.Message()
	msg.Timestamp = "2026-12-06T08:00:00.000Z"
	b, err := msg.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"timestamp":"2026-12-06T08:00:00.000Z","type":"session_meta","payload":{"session_id":"s-1","provider":"openai","model_id":"gpt","model_context_window":128000,"system_prompt":"Be brief.","agent_state":"/a","workspace":"/w"}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	m.Source = omni.SourceSubagent
	if sub := m.Message(); sub.Payload.Source() != omni.SourceSubagent {
		got := sub.Payload.Source()
		t.Errorf("source %q", got)
	}
	if err := trace.CheckMeta(omni.Meta{Provider: "p"}.Message()); err == nil {
		t.Error("CheckMeta took a session_meta without a session id")
	}
}

// List gives each session's source: a subagent's child session says so,
// in the memory store and, natively, in a directory (whose listing reads a
// part of each first file); MetaSource reads the first record only.
func TestListSource(t *testing.T) {
	ctx := context.Background()
	childMeta := strings.Replace(metaLine, `"workspace":""}`, `"workspace":"","source":"subagent"}`, 1)
	for _, store := range append([]trace.Store{&trace.MemStore{}}, dirStores(t)...) {
		for id, first := range map[string]string{"parent": metaLine, "child": childMeta} {
			data := strings.ReplaceAll(first, `"s1"`, `"`+id+`"`) + line("task of "+id)
			if _, err := store.Append(ctx, id, 1, []byte(data)); err != nil {
				t.Fatal(err)
			}
		}
		list, err := trace.List(ctx, store)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, s := range list {
			got[s.ID] = s.Source + "|" + s.FirstPrompt
		}
		if want := map[string]string{"parent": "|task of parent", "child": "subagent|task of child"}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%T: %v, want %v", store, got, want)
		}
	}
	for _, tc := range []struct{ data, want string }{
		{"\n  \n" + childMeta, "subagent"},
		{line("x") + childMeta, ""},
		{"{not json, \"source\":\"subagent\"\n" + childMeta, ""},
		{strings.TrimSuffix(childMeta, "\n"), "subagent"},
		{"", ""},
	} {
		if got := trace.MetaSource([]byte(tc.data)); got != tc.want {
			t.Errorf("MetaSource(%.40q…) = %q, want %q", tc.data, got, tc.want)
		}
	}
}

// unreadableStore fails every read of session bad's files.
type unreadableStore struct {
	trace.MemStore
	bad string
}

func (s *unreadableStore) ReadFile(ctx context.Context, id string, index int) ([]byte, error) {
	if id == s.bad {
		return nil, errors.New("disk on fire")
	}
	return s.MemStore.ReadFile(ctx, id, index)
}

// A child that does not read is left out of History, as Children leaves
// it out, and the records come back with the error naming it: the whole
// History failed, and with it readSession and the playground's reopening
// of the parent.
func TestHistoryLeavesOutAChildThatDoesNotRead(t *testing.T) {
	ctx := context.Background()
	store := &unreadableStore{bad: "c1"}
	for _, s := range [][]string{{"p", metaLine, line("one"), pointer("c1"), pointer("c2"), line("two")}, {"c1", metaOf("c1", true), line("c1-a")}, {"c2", metaOf("c2", true), line("c2-a"), pointer("c1")}} {
		if _, err := store.Append(ctx, s[0], 1, []byte(strings.Join(s[1:], ""))); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := trace.History(ctx, store, "p")
	if err == nil || !strings.Contains(err.Error(), `subagent session "c1" left out: `) || !strings.Contains(err.Error(), "disk on fire") || errors.Is(err, trace.ErrNotFound) {
		t.Errorf("error %v", err)
	}
	var got []string
	for _, r := range recs {
		s := r.Payload.Text
		if s == "" {
			s = string(r.Payload.Type)
			if s == "" {
				s = string(r.Type)
			}
		}
		got = append(got, strings.Join(append(append([]string(nil), r.Origin...), s), "/"))
	}
	if want := "session_meta one subagent subagent c2/session_meta c2/c2-a c2/subagent two"; strings.Join(got, " ") != want {
		t.Errorf("History:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	if ids, err := trace.Children(ctx, store, "p"); len(ids) != 1 || ids[0] != "c2" || err == nil {
		t.Errorf("Children: %v, %v", ids, err)
	}
	store.bad = "p"
	if recs, err := trace.History(ctx, store, "p"); recs != nil || err == nil {
		t.Errorf("History of a session that does not read: %d records, %v", len(recs), err)
	}
}

// cancellingStore cancels the read's context when child is read, as a
// caller that gives up mid-read does.
type cancellingStore struct {
	trace.MemStore
	child  string
	cancel context.CancelFunc
}

func (s *cancellingStore) ReadFile(ctx context.Context, id string, index int) ([]byte, error) {
	if id == s.child {
		s.cancel()
		return nil, ctx.Err()
	}
	return s.MemStore.ReadFile(ctx, id, index)
}

// A read the caller gave up on fails whole with ctx's error: a child cut
// off by it was reported as a child that does not read, the rest of the
// records returned as if the session had been read.
func TestHistoryOfACancelledRead(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store := &cancellingStore{child: "c1", cancel: cancel}
	for _, s := range [][]string{{"p", metaLine, line("one"), pointer("c1"), line("two")}, {"c1", metaOf("c1", true), line("c1-a")}} {
		if _, err := store.Append(context.Background(), s[0], 1, []byte(strings.Join(s[1:], ""))); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := trace.History(ctx, store, "p")
	if !errors.Is(err, context.Canceled) || recs != nil || strings.Contains(err.Error(), "left out") {
		t.Fatalf("History: %d records, %v; want none and context.Canceled", len(recs), err)
	}
}
