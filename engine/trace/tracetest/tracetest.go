// Package tracetest checks implementations of trace.Store.
//
// Run [TestStore] from the implementation's own tests:
//
//	func TestMyStore(t *testing.T) {
//		tracetest.TestStore(t, func(t *testing.T) trace.Store { return newMyStore(t) })
//	}
//
// It checks the rules of trace.Store's doc (ReadParts and Summaries too,
// for a store that is a trace.PartReader or a trace.Summarizer), each
// subtest on a fresh store and in parallel with the others; run it with
// -race, since several subtests call the store from many goroutines.
//
// A store that persists runs [TestReopen] too: it drops the store and
// opens a new one over the same storage, and wants everything the first
// acknowledged back:
//
//	func TestMyStoreReopen(t *testing.T) {
//		tracetest.TestReopen(t, func(t *testing.T) (trace.Store, func() trace.Store) {
//			dir := t.TempDir()
//			s := openMyStore(dir)
//			return s, func() trace.Store { s.Close(); s = openMyStore(dir); return s }
//		})
//	}
package tracetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/floehq/floe/engine/trace"
)

// Record returns one stamped trace record line (with its "\n") whose
// request_begin payload carries n, so lines are distinguishable.
func Record(n int) []byte {
	return fmt.Appendf(nil, `{"timestamp":"2026-11-30T04:09:45.282Z","type":"event_msg","payload":{"type":"request_begin","n":%d}}`+"\n", n)
}

// TestStore runs the Store contract against fresh stores from newStore.
func TestStore(t *testing.T, newStore func(t *testing.T) trace.Store) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, s trace.Store)
	}{
		{"AppendCreatesThenContinues", testAppend},
		{"AppendsInOrder", testOrder},
		{"RotationIndexes", testIndexes},
		{"HealsTornTail", testHeal},
		{"CreateIsExclusive", testCreate},
		{"ConcurrentCreates", testConcurrentCreate},
		{"NotFound", testNotFound},
		{"Invalid", testInvalid},
		{"Sessions", testSessions},
		{"SessionsOrderedByID", testSessionOrder},
		{"Delete", testDelete},
		{"NoAliasing", testAliasing},
		{"ConcurrentAppends", testConcurrent},
		{"CancelledContext", testCancelled},
		{"ReadParts", testParts},
		{"Summaries", testSummaries},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, newStore(t))
		})
	}
}

func mustAppend(t *testing.T, s trace.Store, id string, index int, data []byte) trace.AppendResult {
	t.Helper()
	res, err := s.Append(context.Background(), id, index, data)
	if err != nil {
		t.Fatalf("Append(%q, %d): %v", id, index, err)
	}
	return res
}

func mustRead(t *testing.T, s trace.Store, id string, index int) []byte {
	t.Helper()
	data, err := s.ReadFile(context.Background(), id, index)
	if err != nil {
		t.Fatalf("ReadFile(%q, %d): %v", id, index, err)
	}
	return data
}

func indexes(t *testing.T, s trace.Store, id string) []int {
	t.Helper()
	files, err := s.Files(context.Background(), id)
	if err != nil {
		t.Fatalf("Files(%q): %v", id, err)
	}
	var out []int
	for _, f := range files {
		out = append(out, f.Index)
	}
	return out
}

func testAppend(t *testing.T, s trace.Store) {
	if res := mustAppend(t, s, "s1", 1, Record(1)); res != (trace.AppendResult{Created: true}) {
		t.Errorf("first append = %+v, want Created", res)
	}
	two := append(Record(2), Record(3)...)
	if res := mustAppend(t, s, "s1", 1, two); res != (trace.AppendResult{}) {
		t.Errorf("second append = %+v, want neither Created nor Healed", res)
	}
	want := slices.Concat(Record(1), Record(2), Record(3))
	if got := mustRead(t, s, "s1", 1); !bytes.Equal(got, want) {
		t.Errorf("file = %q, want %q", got, want)
	}
	files, err := s.Files(context.Background(), "s1")
	if err != nil || len(files) != 1 || files[0].Index != 1 || files[0].Size != int64(len(want)) {
		t.Errorf("Files = %+v, %v; want one file of %d bytes", files, err, len(want))
	}
}

func testIndexes(t *testing.T, s trace.Store) {
	mustAppend(t, s, "s1", 1, Record(1))
	if res := mustAppend(t, s, "s1", 2, Record(2)); !res.Created {
		t.Errorf("append to file 2: Created = false")
	}
	mustAppend(t, s, "s1", 10, Record(10))
	if got := indexes(t, s, "s1"); !slices.Equal(got, []int{1, 2, 10}) {
		t.Errorf("indexes = %v, want [1 2 10] (ascending as numbers)", got)
	}
	if got := mustRead(t, s, "s1", 2); !bytes.Equal(got, Record(2)) {
		t.Errorf("file 2 = %q", got)
	}
	// Enough files that a list in a map's order is not ascending by chance.
	want := []int{1, 2, 10}
	for i := 11; i <= 20; i++ {
		mustAppend(t, s, "s1", i, Record(i))
		want = append(want, i)
	}
	if got := indexes(t, s, "s1"); !slices.Equal(got, want) {
		t.Errorf("indexes = %v, want %v (ascending as numbers)", got, want)
	}
}

// testOrder appends records one at a time: a store that keeps each append
// apart and joins them in the order of keys numbered without padding
// ("…/10" before "…/2") reorders them from the tenth on.
func testOrder(t *testing.T, s trace.Store) {
	var want []byte
	for n := range 25 {
		mustAppend(t, s, "s", 1, Record(n))
		want = append(want, Record(n)...)
	}
	if got := mustRead(t, s, "s", 1); !bytes.Equal(got, want) {
		t.Errorf("25 appends read back as records %v, want 0 to 24 in the order appended", numbers(got))
	}
}

// numbers returns the n of each Record line of data (-1 for another line).
func numbers(data []byte) []int {
	var out []int
	for line := range bytes.SplitSeq(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		n := -1
		if _, rest, ok := bytes.Cut(line, []byte(`"n":`)); ok {
			fmt.Sscan(string(bytes.TrimSuffix(rest, []byte("}}"))), &n)
		}
		out = append(out, n)
	}
	return out
}

func testHeal(t *testing.T, s trace.Store) {
	torn := append(Record(1), `{"timestamp":"2026-11-30T04:09:45.282Z","type":"ev`...)
	if err := s.Create(context.Background(), "torn", [][]byte{torn}); err != nil {
		t.Fatal(err)
	}
	if res := mustAppend(t, s, "torn", 1, Record(2)); res != (trace.AppendResult{Healed: true}) {
		t.Errorf("append after torn tail = %+v, want Healed only", res)
	}
	if res := mustAppend(t, s, "torn", 1, Record(3)); res.Healed {
		t.Errorf("second append healed again")
	}
	want := slices.Concat(torn, []byte("\n"), Record(2), Record(3))
	if got := mustRead(t, s, "torn", 1); !bytes.Equal(got, want) {
		t.Errorf("file = %q, want %q", got, want)
	}
}

func testCreate(t *testing.T, s trace.Store) {
	ctx := context.Background()
	files := [][]byte{Record(1), slices.Concat(Record(2), Record(3))}
	if err := s.Create(ctx, "imp", files); err != nil {
		t.Fatal(err)
	}
	for i, want := range files {
		if got := mustRead(t, s, "imp", i+1); !bytes.Equal(got, want) {
			t.Errorf("file %d = %q, want %q", i+1, got, want)
		}
	}
	err := s.Create(ctx, "imp", [][]byte{Record(9)})
	if !errors.Is(err, trace.ErrExists) {
		t.Errorf("Create existing = %v, want ErrExists", err)
	}
	if got := mustRead(t, s, "imp", 1); !bytes.Equal(got, files[0]) {
		t.Errorf("refused Create changed file 1: %q", got)
	}
	mustAppend(t, s, "live", 1, Record(1))
	if err := s.Create(ctx, "live", [][]byte{Record(9)}); !errors.Is(err, trace.ErrExists) {
		t.Errorf("Create over appended session = %v, want ErrExists", err)
	}
	if err := s.Create(ctx, "none", nil); !errors.Is(err, trace.ErrInvalid) {
		t.Errorf("Create with no files = %v, want ErrInvalid", err)
	}
}

// testConcurrentCreate races Creates of one id: exactly one stores its
// files, the others get ErrExists (a store that looks for the id, then
// writes, without holding anything in between, lets several through).
func testConcurrentCreate(t *testing.T, s trace.Store) {
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = s.Create(context.Background(), "race", [][]byte{Record(i)}) })
	}
	wg.Wait()
	won, wins := -1, 0
	for i, err := range errs {
		switch {
		case err == nil:
			won, wins = i, wins+1
		case !errors.Is(err, trace.ErrExists):
			t.Errorf("concurrent Create = %v, want nil or ErrExists", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d of %d concurrent Creates of one id succeeded, want one (and ErrExists for the others)", wins, n)
	}
	if got := mustRead(t, s, "race", 1); !bytes.Equal(got, Record(won)) {
		t.Errorf("after concurrent Creates file 1 = %q, want the winner's %q", got, Record(won))
	}
}

func testNotFound(t *testing.T, s trace.Store) {
	ctx := context.Background()
	mustAppend(t, s, "s1", 1, Record(1))
	_, err := s.Files(ctx, "nope")
	checkErr(t, "Files", err, trace.ErrNotFound, "nope", 0)
	_, err = s.ReadFile(ctx, "s1", 9)
	checkErr(t, "ReadFile", err, trace.ErrNotFound, "s1", 9)
	_, err = s.ReadFile(ctx, "nope", 1)
	checkErr(t, "ReadFile", err, trace.ErrNotFound, "nope", 1)
	checkErr(t, "Delete", s.Delete(ctx, "nope"), trace.ErrNotFound, "nope", 0)
}

// checkErr wants an *trace.Error wrapping target that names id and index.
func checkErr(t *testing.T, op string, err, target error, id string, index int) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s = %v, want %v", op, err, target)
		return
	}
	var te *trace.Error
	if !errors.As(err, &te) || te.SessionID != id || te.Index != index {
		t.Errorf("%s error %v does not name session %q file %d", op, err, id, index)
	}
}

func testInvalid(t *testing.T, s trace.Store) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		id    string
		index int
		data  []byte
	}{
		{"empty id", "", 1, Record(1)},
		{"slash", "a/b", 1, Record(1)},
		{"backslash", `a\b`, 1, Record(1)},
		{"dot dot", "..", 1, Record(1)},
		{"control", "a\nb", 1, Record(1)},
		{"index 0", "s", 0, Record(1)},
		{"no newline", "s", 1, bytes.TrimSuffix(Record(1), []byte("\n"))},
		{"empty data", "s", 1, nil},
	} {
		if _, err := s.Append(ctx, tc.id, tc.index, tc.data); !errors.Is(err, trace.ErrInvalid) {
			t.Errorf("%s: Append = %v, want ErrInvalid", tc.name, err)
		}
	}
	if sessions, _ := s.Sessions(ctx); len(sessions) != 0 {
		t.Errorf("invalid appends stored something: %+v", sessions)
	}
}

func testSessions(t *testing.T, s trace.Store) {
	sessions, err := s.Sessions(context.Background())
	if err != nil || len(sessions) != 0 {
		t.Fatalf("empty store: Sessions = %+v, %v", sessions, err)
	}
	mustAppend(t, s, "b", 1, Record(1))
	mustAppend(t, s, "b", 2, Record(2))
	mustAppend(t, s, "a", 1, Record(3))
	sessions, err = s.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, si := range sessions {
		got = append(got, fmt.Sprintf("%s:%d:%d", si.ID, si.Files, si.Size))
	}
	n := len(Record(1))
	want := []string{fmt.Sprintf("a:1:%d", n), fmt.Sprintf("b:2:%d", 2*n)}
	if !slices.Equal(got, want) {
		t.Errorf("Sessions = %v, want %v", got, want)
	}
}

// testSessionOrder wants Sessions ordered by id as Go compares strings
// (bytes): a store listing keys "<id>/<file>" in key order puts "a-b" and
// "a.b" before "a", since '-' and '.' sort before '/'.
func testSessionOrder(t *testing.T, s trace.Store) {
	ids := []string{"b", "a-b", "a", "B", "a.b", "ab", "a0", "a_b", "A", "d-1", "d"}
	for _, id := range ids {
		mustAppend(t, s, id, 1, Record(1))
	}
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
		t.Errorf("Sessions = %q, want %q (ordered by id, byte by byte)", got, ids)
	}
}

func testDelete(t *testing.T, s trace.Store) {
	ctx := context.Background()
	mustAppend(t, s, "gone", 1, Record(1))
	mustAppend(t, s, "gone", 2, Record(2))
	mustAppend(t, s, "kept", 1, Record(3))
	if err := s.Delete(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Files(ctx, "gone"); !errors.Is(err, trace.ErrNotFound) {
		t.Errorf("Files after Delete = %v, want ErrNotFound", err)
	}
	if sessions, _ := s.Sessions(ctx); len(sessions) != 1 || sessions[0].ID != "kept" {
		t.Errorf("Sessions after Delete = %+v", sessions)
	}
	if res := mustAppend(t, s, "gone", 1, Record(4)); !res.Created {
		t.Errorf("append after Delete did not create the file")
	}
	if got := mustRead(t, s, "gone", 1); !bytes.Equal(got, Record(4)) {
		t.Errorf("recreated file = %q", got)
	}
}

func testAliasing(t *testing.T, s trace.Store) {
	data := Record(1)
	mustAppend(t, s, "s", 1, data)
	data[0] = 'X'
	got := mustRead(t, s, "s", 1)
	if !bytes.Equal(got, Record(1)) {
		t.Fatalf("store retained the appended slice: %q", got)
	}
	got[0] = 'Y'
	if again := mustRead(t, s, "s", 1); !bytes.Equal(again, Record(1)) {
		t.Errorf("ReadFile returned shared memory: %q", again)
	}
	// A read must not change what an earlier one returned (a buffer the
	// store reuses).
	mustAppend(t, s, "t", 1, Record(2))
	first := mustRead(t, s, "s", 1)
	mustRead(t, s, "t", 1)
	mustAppend(t, s, "s", 1, Record(3))
	if !bytes.Equal(first, Record(1)) {
		t.Errorf("a later ReadFile or Append changed the bytes an earlier ReadFile returned: %q, want %q", first, Record(1))
	}
}

func testConcurrent(t *testing.T, s trace.Store) {
	const writers, each = 8, 40
	appendConcurrently(t, s, writers, each)
	checkConcurrent(t, s, writers, each)
}

// appendConcurrently runs testConcurrent's writers: each appends its each
// records, each twice in one append, to file 1 of session "c", and once to
// file 1 of a session of its own ("c<writer>"), reading meanwhile; it
// reports the errors and how many appends said Created.
func appendConcurrently(t *testing.T, s trace.Store, writers, each int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 2*writers*each)
	var mu sync.Mutex
	created := 0
	for w := range writers {
		wg.Go(func() {
			own := fmt.Sprintf("c%d", w)
			for i := range each {
				rec := Record(w*each + i)
				res, err := s.Append(context.Background(), "c", 1, append(rec, rec...))
				if err != nil {
					errs <- err
				}
				if res.Created {
					mu.Lock()
					created++
					mu.Unlock()
				}
				if _, err := s.Append(context.Background(), own, 1, rec); err != nil {
					errs <- err
				}
				if i%10 == 0 {
					if _, err := s.Sessions(context.Background()); err != nil {
						errs <- err
					}
					if _, err := s.ReadFile(context.Background(), own, 1); err != nil {
						errs <- err
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if created != 1 {
		t.Errorf("%d concurrent appends creating one file reported Created, want exactly one", created)
	}
}

// checkConcurrent wants the files appendConcurrently wrote to hold every
// record, each append whole and each writer's in the order it appended.
func checkConcurrent(t *testing.T, s trace.Store, writers, each int) {
	t.Helper()
	lines := bytes.Split(bytes.TrimSuffix(mustRead(t, s, "c", 1), []byte("\n")), []byte("\n"))
	if len(lines) != 2*writers*each {
		t.Fatalf("%d concurrent appends of 2 lines each: file holds %d lines, want %d (appends lost or split)", writers*each, len(lines), 2*writers*each)
	}
	seen := map[string]bool{}
	last := make([]int, writers)
	for i := range last {
		last[i] = -1
	}
	reordered := ""
	for i := 0; i < len(lines); i += 2 {
		if !bytes.Equal(lines[i], lines[i+1]) {
			t.Fatalf("lines %d and %d interleaved: %q / %q", i+1, i+2, lines[i], lines[i+1])
		}
		seen[string(lines[i])] = true
		if n := numbers(lines[i]); len(n) == 1 && n[0] >= 0 && n[0] < writers*each {
			w := n[0] / each
			if n[0] < last[w] && reordered == "" {
				reordered = fmt.Sprintf("writer %d's record %d is stored after its record %d", w, n[0], last[w])
			}
			last[w] = n[0]
		}
	}
	if reordered != "" {
		t.Errorf("concurrent appends: %s: one writer's appends reordered", reordered)
	}
	if len(seen) != writers*each {
		t.Errorf("%d distinct records, want %d", len(seen), writers*each)
	}
	for w := range writers {
		if got := len(numbers(mustRead(t, s, fmt.Sprintf("c%d", w), 1))); got != each {
			t.Errorf("session c%d: %d records, want %d", w, got, each)
		}
	}
}

// testCancelled wants every method to fail with a cancelled context's
// error, and the writing ones to change nothing.
func testCancelled(t *testing.T, s trace.Store) {
	mustAppend(t, s, "s", 1, Record(1))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, appendErr := s.Append(ctx, "s", 1, Record(2))
	_, filesErr := s.Files(ctx, "s")
	_, readErr := s.ReadFile(ctx, "s", 1)
	_, sessionsErr := s.Sessions(ctx)
	for _, c := range []struct {
		op  string
		err error
	}{
		{"Append", appendErr},
		{"Files", filesErr},
		{"ReadFile", readErr},
		{"Sessions", sessionsErr},
		{"Create", s.Create(ctx, "new", [][]byte{Record(3)})},
		{"Delete", s.Delete(ctx, "s")},
	} {
		if !errors.Is(c.err, context.Canceled) {
			t.Errorf("%s with a cancelled context = %v, want an error wrapping context.Canceled", c.op, c.err)
		}
	}
	if got, err := s.ReadFile(context.Background(), "s", 1); err != nil || !bytes.Equal(got, Record(1)) {
		t.Errorf("calls with a cancelled context changed file 1: %q, %v; want %q", got, err, Record(1))
	}
	if _, err := s.Files(context.Background(), "new"); !errors.Is(err, trace.ErrNotFound) {
		t.Errorf("Create with a cancelled context stored the session (Files = %v)", err)
	}
}

// testParts checks a [trace.PartReader]: the parts of a file, joined, are
// what ReadFile returns, for a file of many appends, one of an append
// larger than a part is likely to be, and an imported one; a missing file,
// a bad index and a cancelled read fail as ReadFile does; an error the
// part function returns ends the read and comes back as it is.
func testParts(t *testing.T, s trace.Store) {
	pr, ok := s.(trace.PartReader)
	if !ok {
		t.Skip("not a trace.PartReader")
	}
	ctx := context.Background()
	for n := range 40 {
		mustAppend(t, s, "many", 1, slices.Concat(Record(n), Record(-n)))
	}
	big := bytes.Repeat(Record(7), 200<<10/len(Record(7)))
	mustAppend(t, s, "big", 1, Record(1))
	mustAppend(t, s, "big", 1, big)
	mustAppend(t, s, "big", 1, Record(2))
	mustAppend(t, s, "big", 2, Record(3))
	if err := s.Create(ctx, "imp", [][]byte{big, slices.Concat(Record(4), []byte(`{"timestamp":"2026-11-30T0`))}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		id    string
		index int
	}{{"many", 1}, {"big", 1}, {"big", 2}, {"imp", 1}, {"imp", 2}} {
		var got []byte
		if err := pr.ReadParts(ctx, f.id, f.index, func(part []byte) error {
			got = append(got, part...)
			clear(part) // parts are the reader's: a store must not hand its own bytes
			return nil
		}); err != nil {
			t.Fatalf("ReadParts(%q, %d): %v", f.id, f.index, err)
		}
		if want := mustRead(t, s, f.id, f.index); !bytes.Equal(got, want) {
			t.Errorf("ReadParts(%q, %d) gave %d bytes, not ReadFile's %d", f.id, f.index, len(got), len(want))
		}
	}
	none := func([]byte) error { return nil }
	checkErr(t, "ReadParts", pr.ReadParts(ctx, "big", 9, none), trace.ErrNotFound, "big", 9)
	checkErr(t, "ReadParts", pr.ReadParts(ctx, "nope", 1, none), trace.ErrNotFound, "nope", 1)
	if err := pr.ReadParts(ctx, "big", 0, none); !errors.Is(err, trace.ErrInvalid) {
		t.Errorf("ReadParts of file 0 = %v, want ErrInvalid", err)
	}
	stop := errors.New("stop")
	calls := 0
	if err := pr.ReadParts(ctx, "big", 1, func([]byte) error { calls++; return stop }); err != stop || calls != 1 {
		t.Errorf("ReadParts whose part fails = %v after %d calls, want the part's error after 1", err, calls)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := pr.ReadParts(cancelled, "big", 1, none); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadParts with cancelled ctx = %v", err)
	}
}

// meta returns a session_meta record of session id from source.
func meta(id, source string) []byte {
	return fmt.Appendf(nil, `{"timestamp":"2026-11-30T04:09:45.282Z","type":"session_meta","payload":{"id":%q,"source":%q,"timestamp":"2026-11-30T04:09:45.282Z","cwd":"/"}}`+"\n", id, source)
}

// prompt returns a user's text record.
func prompt(text string) []byte {
	return fmt.Appendf(nil, `{"timestamp":"2026-11-30T04:09:45.282Z","type":"model_msg","payload":{"type":"text","role":"user","text":%q,"stop_reason":"completed"}}`+"\n", text)
}

// testSummaries checks a [trace.Summarizer]: each session's summary is
// what [trace.List] finds through the Store's own methods (its Sessions
// row, the first prompt and the session_meta's source of its lowest-index
// file).
func testSummaries(t *testing.T, s trace.Store) {
	sum, ok := s.(trace.Summarizer)
	if !ok {
		t.Skip("not a trace.Summarizer")
	}
	ctx := context.Background()
	mustAppend(t, s, "asked", 1, meta("asked", "cli"))
	mustAppend(t, s, "asked", 1, Record(1))
	mustAppend(t, s, "asked", 1, slices.Concat(prompt("first words"), prompt("second words")))
	mustAppend(t, s, "asked", 2, prompt("after compaction"))
	mustAppend(t, s, "child", 1, slices.Concat(meta("child", "subagent"), prompt("a subtask")))
	mustAppend(t, s, "silent", 1, Record(2))
	if err := s.Create(ctx, "long", [][]byte{slices.Concat(meta("long", ""), prompt(string(bytes.Repeat([]byte("é"), trace.MaxPromptBytes))))}); err != nil {
		t.Fatal(err)
	}
	got, err := sum.Summaries(ctx)
	if err != nil {
		t.Fatalf("Summaries: %v", err)
	}
	infos, err := s.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bySession := map[string]trace.Summary{}
	for _, g := range got {
		bySession[g.ID] = g
	}
	if len(bySession) != len(infos) {
		t.Errorf("Summaries lists %d sessions, Sessions %d", len(got), len(infos))
	}
	for _, info := range infos {
		files := indexes(t, s, info.ID)
		data := mustRead(t, s, info.ID, files[0])
		first, _ := trace.FirstPrompt(data)
		want := trace.Summary{SessionInfo: info, FirstPrompt: first, Source: trace.MetaSource(data)}
		g, ok := bySession[info.ID]
		switch {
		case !ok:
			t.Errorf("Summaries leaves out session %q", info.ID)
		case g.ID != want.ID || g.Files != want.Files || g.Size != want.Size || !g.LastActivity.Equal(want.LastActivity):
			t.Errorf("Summaries: session %q is %+v, Sessions says %+v", info.ID, g.SessionInfo, want.SessionInfo)
		case g.FirstPrompt != want.FirstPrompt || g.Source != want.Source:
			t.Errorf("Summaries: session %q has first prompt %q and source %q, its first file %q and %q", info.ID, g.FirstPrompt, g.Source, want.FirstPrompt, want.Source)
		}
	}
}
