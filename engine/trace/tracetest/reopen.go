package tracetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/floehq/floe/engine/trace"
)

// TestReopen runs the Store contract across a reopen, for a store that
// persists: what it acknowledged before a new store opens its storage (a
// new process, a reload of the page, an object woken again) is what the
// new store reads.
//
// open returns a store over new, empty storage, and reopen: it drops the
// store it returned last, as a process that ends drops it (the Store
// interface has no Close; reopen closes whatever the store has to close),
// and returns a new store over the same storage. reopen is called more
// than once, and the dropped store is not called again.
//
// It checks that every append acknowledged before a reopen reads back
// byte for byte after it (each one, the last too, with no call between
// it and the reopen, and concurrent ones);
// that Sessions, Files, ReadParts and Summaries say after it what they
// said before; that a deleted session stays deleted; that a torn last
// line an import stored reads back torn, the next append heals it
// (Healed) and the heal stays; that appends after a reopen continue the
// files (neither Created nor Healed again, and in order), and Create
// still refuses an id that has files. A store that keeps appends in
// memory to write later (write-behind) must write them before reopen
// returns.
//
// A store that keeps nothing (trace.MemStore) has no reopen to test.
func TestReopen(t *testing.T, open func(t *testing.T) (s trace.Store, reopen func() trace.Store)) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, s trace.Store, reopen func() trace.Store)
	}{
		{"AppendsSurvive", testReopenAppends},
		{"SessionsSurvive", testReopenSessions},
		{"DeleteStays", testReopenDelete},
		{"TornTailSurvives", testReopenTorn},
		{"ConcurrentAppendsSurvive", testReopenConcurrent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, reopen := open(t)
			tc.run(t, s, reopen)
		})
	}
}

// state is what a store says of everything it holds.
type state struct {
	sessions []trace.SessionInfo
	files    map[string][]trace.FileInfo
	data     map[string]map[int][]byte
	sums     map[string]trace.Summary // nil when not a trace.Summarizer
}

// read reads s's state; a PartReader's parts must join to ReadFile's bytes.
func read(t *testing.T, s trace.Store) state {
	t.Helper()
	ctx := context.Background()
	sessions, err := s.Sessions(ctx)
	if err != nil {
		t.Fatalf("Sessions: %v", err)
	}
	st := state{sessions: sessions, files: map[string][]trace.FileInfo{}, data: map[string]map[int][]byte{}}
	for _, info := range sessions {
		files, err := s.Files(ctx, info.ID)
		if err != nil {
			t.Fatalf("Files(%q) of a session Sessions lists: %v", info.ID, err)
		}
		st.files[info.ID] = files
		st.data[info.ID] = map[int][]byte{}
		for _, f := range files {
			data := mustRead(t, s, info.ID, f.Index)
			st.data[info.ID][f.Index] = data
			if pr, ok := s.(trace.PartReader); ok {
				var parts []byte
				if err := pr.ReadParts(ctx, info.ID, f.Index, func(p []byte) error {
					parts = append(parts, p...)
					return nil
				}); err != nil {
					t.Fatalf("ReadParts(%q, %d): %v", info.ID, f.Index, err)
				}
				if !bytes.Equal(parts, data) {
					t.Errorf("ReadParts(%q, %d) gives %d bytes (records %v), ReadFile %d (records %v)", info.ID, f.Index, len(parts), numbers(parts), len(data), numbers(data))
				}
			}
		}
	}
	if sum, ok := s.(trace.Summarizer); ok {
		sums, err := sum.Summaries(ctx)
		if err != nil {
			t.Fatalf("Summaries: %v", err)
		}
		st.sums = map[string]trace.Summary{}
		for _, g := range sums {
			st.sums[g.ID] = g
		}
	}
	return st
}

// reopened reopens the store and wants it to say what it said before.
func reopened(t *testing.T, s trace.Store, reopen func() trace.Store) trace.Store {
	t.Helper()
	before := read(t, s)
	s = reopen()
	after := read(t, s)
	ids := func(st state) []string {
		var out []string
		for _, info := range st.sessions {
			out = append(out, info.ID)
		}
		return out
	}
	if !slices.Equal(ids(after), ids(before)) {
		t.Errorf("after a reopen Sessions lists %q, before it %q", ids(after), ids(before))
	}
	for _, b := range before.sessions {
		i := slices.IndexFunc(after.sessions, func(a trace.SessionInfo) bool { return a.ID == b.ID })
		if i < 0 {
			continue
		}
		if a := after.sessions[i]; a.Files != b.Files || a.Size != b.Size || !a.LastActivity.Equal(b.LastActivity) {
			t.Errorf("after a reopen Sessions says %+v, before it %+v", a, b)
		}
		fa, fb := after.files[b.ID], before.files[b.ID]
		if !slices.EqualFunc(fa, fb, func(x, y trace.FileInfo) bool {
			return x.Index == y.Index && x.Size == y.Size && x.Modified.Equal(y.Modified)
		}) {
			t.Errorf("session %q: after a reopen Files = %+v, before it %+v", b.ID, fa, fb)
		}
		for index, want := range before.data[b.ID] {
			got, ok := after.data[b.ID][index]
			if ok && !bytes.Equal(got, want) {
				t.Errorf("session %q file %d: after a reopen reads %d bytes (records %v), before it %d (records %v): an acknowledged write is lost or changed", b.ID, index, len(got), numbers(got), len(want), numbers(want))
			}
		}
		if sa, sb := after.sums[b.ID], before.sums[b.ID]; before.sums != nil && (sa.ID != sb.ID || sa.Files != sb.Files || sa.Size != sb.Size ||
			!sa.LastActivity.Equal(sb.LastActivity) || sa.FirstPrompt != sb.FirstPrompt || sa.Source != sb.Source) {
			t.Errorf("after a reopen Summaries says %+v, before it %+v", sa, sb)
		}
	}
	return s
}

// testReopenAppends: appends one at a time, the last just before the
// reopen (no call between: a store that writes an append at its next
// call has not written it), one larger than a row or chunk of a store is
// likely to be, an imported session and several files all read back
// after a reopen; the files continue after it, and survive another.
func testReopenAppends(t *testing.T, s trace.Store, reopen func() trace.Store) {
	ctx := context.Background()
	big := bytes.Repeat(Record(7), (3<<20)/len(Record(7)))
	mustAppend(t, s, "big", 1, Record(1))
	mustAppend(t, s, "big", 1, big)
	imported := [][]byte{Record(1), slices.Concat(Record(2), Record(3)), {}}
	if err := s.Create(ctx, "imp", imported); err != nil {
		t.Fatal(err)
	}
	rot1 := slices.Concat(meta("rot", "cli"), prompt("first words"), Record(1))
	mustAppend(t, s, "rot", 1, rot1[:len(rot1)-len(Record(1))])
	mustAppend(t, s, "rot", 1, Record(1))
	mustAppend(t, s, "rot", 2, Record(2))
	var want []byte
	for n := range 25 {
		mustAppend(t, s, "s", 1, Record(n))
		want = append(want, Record(n)...)
	}
	s = reopen()
	if got := mustRead(t, s, "s", 1); !bytes.Equal(got, want) {
		t.Fatalf("25 appends, then a reopen: file reads records %v, want 0 to 24 in the order appended (an acknowledged append lost)", numbers(got))
	}
	if got := mustRead(t, s, "big", 1); !bytes.Equal(got, slices.Concat(Record(1), big)) {
		t.Errorf("an append of %d bytes, then a reopen: file reads %d bytes, want %d", len(big), len(got), len(big)+len(Record(1)))
	}
	for i, f := range imported {
		if got := mustRead(t, s, "imp", i+1); !bytes.Equal(got, f) {
			t.Errorf("an imported session, then a reopen: file %d reads %q, want %q", i+1, got, f)
		}
	}
	if got := mustRead(t, s, "rot", 1); !bytes.Equal(got, rot1) {
		t.Errorf("after a reopen file 1 of session rot reads %q, want %q", got, rot1)
	}
	s = reopened(t, s, reopen)

	// The files continue: an append after the reopen is neither Created
	// nor Healed, and reads back after the ones before it.
	if err := s.Create(ctx, "imp", [][]byte{Record(9)}); !errors.Is(err, trace.ErrExists) {
		t.Errorf("after a reopen Create of an imported id = %v, want ErrExists", err)
	}
	if err := s.Create(ctx, "s", [][]byte{Record(9)}); !errors.Is(err, trace.ErrExists) {
		t.Errorf("after a reopen Create of an appended id = %v, want ErrExists", err)
	}
	if res := mustAppend(t, s, "rot", 2, Record(3)); res != (trace.AppendResult{}) {
		t.Errorf("after a reopen an append to file 2 = %+v, want neither Created nor Healed", res)
	}
	if res := mustAppend(t, s, "rot", 3, Record(4)); res != (trace.AppendResult{Created: true}) {
		t.Errorf("after a reopen an append to a new file 3 = %+v, want Created", res)
	}
	if res := mustAppend(t, s, "s", 1, Record(25)); res != (trace.AppendResult{}) {
		t.Errorf("after a reopen an append to an existing file = %+v, want neither Created nor Healed", res)
	}
	want = append(want, Record(25)...)
	s = reopen()
	if got := mustRead(t, s, "s", 1); !bytes.Equal(got, want) {
		t.Errorf("appends before and after a reopen, then another: file reads records %v, want 0 to 25 in the order appended", numbers(got))
	}
	if got := indexes(t, s, "rot"); !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("after two reopens session rot has files %v, want [1 2 3]", got)
	}
	if got := mustRead(t, s, "rot", 2); !bytes.Equal(got, slices.Concat(Record(2), Record(3))) {
		t.Errorf("after two reopens file 2 reads records %v, want [2 3]", numbers(got))
	}
	reopened(t, s, reopen)
}

// testReopenSessions: the sessions, in order by id, and their files'
// indexes, ascending as numbers, are the same after a reopen, and after
// a reopen of a store that holds nothing there are none.
func testReopenSessions(t *testing.T, s trace.Store, reopen func() trace.Store) {
	s = reopen()
	if sessions, err := s.Sessions(context.Background()); err != nil || len(sessions) != 0 {
		t.Fatalf("reopened with nothing stored: Sessions = %+v, %v; want none", sessions, err)
	}
	ids := []string{"b", "a-b", "a", "B", "a.b", "ab", "a0", "a_b", "A", "d-1", "d"}
	for _, id := range ids {
		mustAppend(t, s, id, 1, Record(1))
	}
	want := []int{1, 2}
	mustAppend(t, s, "a", 2, Record(2))
	for i := 10; i <= 20; i++ {
		mustAppend(t, s, "a", i, Record(i))
		want = append(want, i)
	}
	s = reopened(t, s, reopen)
	sessions, err := s.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, si := range sessions {
		got = append(got, si.ID)
	}
	slices.Sort(ids)
	if !slices.Equal(got, ids) {
		t.Errorf("after a reopen Sessions = %q, want %q (ordered by id, byte by byte)", got, ids)
	}
	if got := indexes(t, s, "a"); !slices.Equal(got, want) {
		t.Errorf("after a reopen indexes = %v, want %v (ascending as numbers)", got, want)
	}
}

// testReopenDelete: a session deleted before a reopen stays deleted after
// it, one deleted and appended to again holds only the new records, and a
// delete after a reopen of a session the new store did not write lasts.
func testReopenDelete(t *testing.T, s trace.Store, reopen func() trace.Store) {
	ctx := context.Background()
	mustAppend(t, s, "gone", 1, Record(1))
	mustAppend(t, s, "gone", 2, Record(2))
	mustAppend(t, s, "again", 1, Record(3))
	mustAppend(t, s, "again", 2, Record(4))
	mustAppend(t, s, "kept", 1, Record(5))
	mustAppend(t, s, "later", 1, Record(6))
	for _, id := range []string{"gone", "again"} {
		if err := s.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	mustAppend(t, s, "again", 1, Record(7))
	s = reopened(t, s, reopen)
	gone := func(id string) {
		t.Helper()
		if _, err := s.Files(ctx, id); !errors.Is(err, trace.ErrNotFound) {
			t.Errorf("a session deleted before a reopen: Files(%q) after it = %v, want ErrNotFound", id, err)
		}
		for index := 1; index <= 2; index++ {
			if _, err := s.ReadFile(ctx, id, index); !errors.Is(err, trace.ErrNotFound) {
				t.Errorf("a session deleted before a reopen: ReadFile(%q, %d) after it = %v, want ErrNotFound", id, index, err)
			}
		}
	}
	gone("gone")
	if got := indexes(t, s, "again"); !slices.Equal(got, []int{1}) {
		t.Errorf("a session deleted and appended to again, then a reopen: files %v, want [1]", got)
	}
	if got := mustRead(t, s, "again", 1); !bytes.Equal(got, Record(7)) {
		t.Errorf("a session deleted and appended to again, then a reopen: file 1 reads records %v, want [7]", numbers(got))
	}
	if err := s.Delete(ctx, "later"); err != nil {
		t.Fatalf("after a reopen Delete of a session stored before it: %v", err)
	}
	s = reopened(t, s, reopen)
	gone("gone")
	gone("later")
	sessions, err := s.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, si := range sessions {
		ids = append(ids, si.ID)
	}
	if !slices.Equal(ids, []string{"again", "kept"}) {
		t.Errorf("after deletes and reopens Sessions = %q, want [again kept]", ids)
	}
	if err := s.Delete(ctx, "gone"); !errors.Is(err, trace.ErrNotFound) {
		t.Errorf("after a reopen Delete of a session deleted before it = %v, want ErrNotFound", err)
	}
	if res := mustAppend(t, s, "gone", 1, Record(8)); !res.Created {
		t.Errorf("after a reopen an append to a deleted session = %+v, want Created", res)
	}
}

// testReopenTorn: an imported file whose last line is torn reads back
// torn after a reopen, the first append after it heals it (Healed) and
// the next does not; a heal before a reopen stays after it.
func testReopenTorn(t *testing.T, s trace.Store, reopen func() trace.Store) {
	ctx := context.Background()
	torn := append(Record(1), `{"timestamp":"2026-11-30T04:09:45.282Z","type":"ev`...)
	for _, id := range []string{"late", "early"} {
		if err := s.Create(ctx, id, [][]byte{Record(0), torn}); err != nil {
			t.Fatal(err)
		}
	}
	if res := mustAppend(t, s, "early", 2, Record(2)); res != (trace.AppendResult{Healed: true}) {
		t.Errorf("append after a torn tail = %+v, want Healed only", res)
	}
	s = reopened(t, s, reopen)
	if got := mustRead(t, s, "late", 2); !bytes.Equal(got, torn) {
		t.Errorf("a torn tail, then a reopen: file reads %q, want %q as it was stored", got, torn)
	}
	if res := mustAppend(t, s, "late", 2, Record(2)); res != (trace.AppendResult{Healed: true}) {
		t.Errorf("after a reopen an append after a torn tail = %+v, want Healed only", res)
	}
	if res := mustAppend(t, s, "early", 2, Record(3)); res != (trace.AppendResult{}) {
		t.Errorf("a torn tail healed before a reopen: the next append after it = %+v, want neither Healed nor Created (the heal did not last)", res)
	}
	s = reopened(t, s, reopen)
	if res := mustAppend(t, s, "late", 2, Record(3)); res != (trace.AppendResult{}) {
		t.Errorf("a torn tail healed after a reopen: the next append after another reopen = %+v, want neither Healed nor Created (the heal did not last)", res)
	}
	healed := slices.Concat(torn, []byte("\n"), Record(2), Record(3))
	for _, id := range []string{"late", "early"} {
		if got := mustRead(t, s, id, 2); !bytes.Equal(got, healed) {
			t.Errorf("session %q: a torn tail healed, and reopens: file reads %q, want %q", id, got, healed)
		}
		if got := mustRead(t, s, id, 1); !bytes.Equal(got, Record(0)) {
			t.Errorf("session %q: a heal of file 2 changed file 1: %q", id, got)
		}
	}
}

// testReopenConcurrent: every one of testConcurrent's appends survives a
// reopen, whole and in each writer's order.
func testReopenConcurrent(t *testing.T, s trace.Store, reopen func() trace.Store) {
	const writers, each = 8, 40
	appendConcurrently(t, s, writers, each)
	s = reopen() // no call between: see testReopenAppends
	checkConcurrent(t, s, writers, each)
	for w := range writers {
		want := make([]int, each)
		for i := range want {
			want[i] = w*each + i
		}
		if got := numbers(mustRead(t, s, fmt.Sprintf("c%d", w), 1)); !slices.Equal(got, want) {
			t.Errorf("after a reopen session c%d reads records %v, want %v", w, got, want)
		}
	}
}
