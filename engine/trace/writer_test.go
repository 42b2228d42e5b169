package trace_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

const ts = "2026-11-30T04:09:45.282Z"

func stamp(m omni.Message) omni.Message {
	m.Timestamp = ts
	return m
}

func userText(s string) omni.Message { return stamp(omni.UserText(s)) }

func TestWriter(t *testing.T) {
	type step struct {
		rotate bool
		msg    omni.Message
		want   string // "index new heal", "" for rotate
	}
	for _, tc := range []struct {
		name    string
		initial [][]byte // imported files before the writer starts
		start   int
		steps   []step
		files   []int // file indexes afterwards
	}{
		{name: "new session", start: 1, steps: []step{
			{msg: userText("a"), want: "1 new -"},
			{msg: userText("b"), want: "1 - -"},
		}, files: []int{1}},
		{name: "rotation", start: 1, steps: []step{
			{msg: userText("a"), want: "1 new -"},
			{rotate: true},
			{msg: userText("b"), want: "2 new -"},
			{msg: userText("c"), want: "2 - -"},
		}, files: []int{1, 2}},
		{name: "rotation without a write creates nothing", start: 1, steps: []step{
			{msg: userText("a"), want: "1 new -"},
			{rotate: true},
			{rotate: true},
		}, files: []int{1}},
		{name: "continue a file", initial: [][]byte{[]byte(recA + "\n")}, start: 1, steps: []step{
			{msg: userText("a"), want: "1 - -"},
		}, files: []int{1}},
		{name: "heal a torn tail once", initial: [][]byte{[]byte(recA + "\n" + torn)}, start: 1, steps: []step{
			{msg: userText("a"), want: "1 - heal"},
			{msg: userText("b"), want: "1 - -"},
		}, files: []int{1}},
		{name: "start index below 1 means 1", start: 0, steps: []step{
			{msg: userText("a"), want: "1 new -"},
		}, files: []int{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			store := &trace.MemStore{}
			if tc.initial != nil {
				if err := store.Create(ctx, "s", tc.initial); err != nil {
					t.Fatal(err)
				}
			}
			w := trace.NewWriter(store, "s", tc.start)
			for i, st := range tc.steps {
				if st.rotate {
					if err := w.Rotate(); err != nil {
						t.Fatal(err)
					}
					continue
				}
				got, err := w.WriteRecord(context.Background(), st.msg)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if s := describeWritten(got); s != st.want {
					t.Errorf("step %d: wrote %q, want %q", i, s, st.want)
				}
			}
			files, _ := store.Files(ctx, "s")
			var idx []int
			for _, f := range files {
				idx = append(idx, f.Index)
			}
			if !slices.Equal(idx, tc.files) {
				t.Errorf("files = %v, want %v", idx, tc.files)
			}
			for _, i := range idx {
				data, _ := store.ReadFile(ctx, "s", i)
				p, _ := trace.ReadFile(data)
				if p.TornTail {
					t.Errorf("file %d still ends in a torn line", i)
				}
			}
		})
	}
}

func describeWritten(w trace.Written) string {
	s := fmt.Sprint(w.Index)
	s += map[bool]string{true: " new", false: " -"}[w.NewFile]
	s += map[bool]string{true: " heal", false: " -"}[w.HealNewline]
	return s
}

func TestWriterHealedLineIsSkippedNotLost(t *testing.T) {
	ctx := context.Background()
	store := &trace.MemStore{}
	if err := store.Create(ctx, "s", [][]byte{[]byte(recA + "\n" + torn)}); err != nil {
		t.Fatal(err)
	}
	w := trace.NewWriter(store, "s", 1)
	if err := w.Write(context.Background(), userText("after")); err != nil {
		t.Fatal(err)
	}
	data, _ := store.ReadFile(ctx, "s", 1)
	if want := recA + "\n" + torn + "\n"; !strings.HasPrefix(string(data), want) {
		t.Fatalf("file = %q, want prefix %q", data, want)
	}
	p, _ := trace.ReadFile(data)
	if len(p.Records) != 2 || !slices.Equal(p.SkippedLines(), []int{2}) || p.TornTail {
		t.Errorf("records %d, skipped %v, torn %v", len(p.Records), p.SkippedLines(), p.TornTail)
	}
}

func TestWriterRefuses(t *testing.T) {
	partial := stamp(omni.Partial(omni.PartialText, omni.EventDelta, "x", "", "", ""))
	tagged := userText("x").WithOrigin("child")
	for _, tc := range []struct {
		name string
		msg  omni.Message
		want error
	}{
		{"unstamped", omni.UserText("x"), trace.ErrUnstamped},
		{"partial", partial, trace.ErrNotRecordable},
		{"origin", tagged, trace.ErrNotRecordable},
	} {
		store := &trace.MemStore{}
		w := trace.NewWriter(store, "s", 1)
		err := w.Write(context.Background(), tc.msg)
		var te *trace.Error
		if !errors.Is(err, tc.want) || !errors.As(err, &te) || te.SessionID != "s" || te.Index != 1 {
			t.Errorf("%s: Write = %v, want %v naming the session and file", tc.name, err, tc.want)
		}
		if _, err := store.Files(context.Background(), "s"); !errors.Is(err, trace.ErrNotFound) {
			t.Errorf("%s: something was written", tc.name)
		}
	}
}

// A Writer of a nil Store fails each write with ErrInvalid, naming it:
// each write panicked (a nil pointer dereference, recovered by the engine
// as a diagnostic at every record).
func TestWriterOfANilStore(t *testing.T) {
	w := trace.NewWriter(nil, "s", 1)
	err := w.Write(context.Background(), userText("x"))
	if !errors.Is(err, trace.ErrInvalid) || !strings.Contains(err.Error(), "the Writer's Store is nil") {
		t.Errorf("Write = %v, want ErrInvalid naming the nil Store", err)
	}
}

func TestWriterKeepsRawJSONOnOneLine(t *testing.T) {
	m := userText("x")
	m.Payload.Edit().Fidelity = omni.RawJSON("{\n  \"k\": [1,\n 2]\n}")
	m.Payload.Edit().Extra = []omni.RawField{{Key: "zz", Value: omni.RawJSON("{\n}")}}
	store := &trace.MemStore{}
	if err := trace.NewWriter(store, "s", 1).Write(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	data, _ := store.ReadFile(context.Background(), "s", 1)
	if strings.Count(string(data), "\n") != 1 {
		t.Fatalf("record spans lines: %q", data)
	}
	p, _ := trace.ReadFile(data)
	if len(p.Records) != 1 || string(p.Records[0].Payload.Fidelity()) != `{"k":[1,2]}` {
		t.Errorf("records = %+v", p.Records)
	}
}

// failingStore fails every Append until healed.
type failingStore struct {
	trace.MemStore
	mu    sync.Mutex
	fails int
}

func (s *failingStore) Append(ctx context.Context, id string, index int, data []byte) (trace.AppendResult, error) {
	s.mu.Lock()
	fail := s.fails > 0
	s.fails--
	s.mu.Unlock()
	if fail {
		return trace.AppendResult{}, errors.New("disk full")
	}
	return s.MemStore.Append(ctx, id, index, data)
}

func TestWriterGoesOnAfterAFailure(t *testing.T) {
	store := &failingStore{fails: 1}
	w := trace.NewWriter(store, "s", 1)
	if err := w.Write(context.Background(), userText("lost")); err == nil {
		t.Fatal("first Write succeeded")
	}
	if err := w.Write(context.Background(), userText("kept")); err != nil {
		t.Fatal(err)
	}
	data, _ := store.ReadFile(context.Background(), "s", 1)
	p, _ := trace.ReadFile(data)
	if len(p.Records) != 1 || p.Records[0].Payload.Text != "kept" {
		t.Errorf("records = %+v", p.Records)
	}
}

func TestWriterConcurrent(t *testing.T) {
	store := &trace.MemStore{}
	w := trace.NewWriter(store, "s", 1)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 25 {
				if err := w.Write(context.Background(), userText(fmt.Sprint(g, "-", i))); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	data, _ := store.ReadFile(context.Background(), "s", 1)
	p, _ := trace.ReadFile(data)
	if len(p.Records) != 100 || len(p.Skipped) != 0 {
		t.Errorf("%d records, %d skipped", len(p.Records), len(p.Skipped))
	}
}

// discardStore is a Store whose Append keeps only a byte count.
type discardStore struct {
	trace.Store
	n int
}

func (d *discardStore) Append(_ context.Context, _ string, _ int, data []byte) (trace.AppendResult, error) {
	d.n += len(data)
	return trace.AppendResult{}, nil
}

// Write, the engine's path, allocates nothing per record once its buffer
// has grown (WriteRecord's report is what allocates).
func TestWriterWriteAllocs(t *testing.T) {
	st := &discardStore{}
	w := trace.NewWriter(st, "session-2026-11-30-04-09-45-00000001", 1)
	ctx := context.Background()
	m := userText("hello, trace")
	if err := w.Write(ctx, m); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		if err := w.Write(ctx, m); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("Writer.Write: %v allocations per record, want 0", n)
	}
	if st.n == 0 {
		t.Fatal("nothing appended")
	}
}
