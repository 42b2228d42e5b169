package tracetest_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/floehq/floe/engine/trace"
	"github.com/floehq/floe/engine/trace/tracetest"
)

// broken is a MemStore with one mistake a store's author makes. Embedding
// the interface hides MemStore's ReadParts and Summaries.
type broken struct {
	trace.Store
	mu     sync.Mutex
	chunks map[int][]byte // "unpadded": file 1 of session "s"/"c", an append a chunk
	buf    []byte         // "shared buffer"
	race   meet           // "create race", "created twice"
}

// meet holds its first caller until a second arrives; later ones pass:
// two callers that both looked before either wrote, whatever the
// scheduler does.
type meet struct {
	n    atomic.Int32
	once sync.Once
	ch   chan struct{}
}

func (m *meet) wait() {
	if m.n.Add(1) == 1 {
		<-m.ch
		return
	}
	m.once.Do(func() { close(m.ch) })
}

// brokenStores are the stores TestStore must fail, with what its report
// must say.
var brokenStores = map[string]struct {
	store func() trace.Store
	want  []string
}{
	// Each append kept apart and joined in the order of keys numbered
	// without padding: "10" comes before "2".
	"unpadded": {func() trace.Store { return &unpadded{broken: newBroken()} }, []string{
		"AppendsInOrder", "want 0 to 24 in the order appended",
		"ConcurrentAppends", "one writer's appends reordered",
	}},
	"files in key order": {func() trace.Store { return &lexicalFiles{newBroken()} }, []string{
		"RotationIndexes", "want [1 2 10] (ascending as numbers)",
	}},
	"sessions in key order": {func() trace.Store { return &keyOrder{newBroken()} }, []string{
		"SessionsOrderedByID", "(ordered by id, byte by byte)",
	}},
	"shared buffer": {func() trace.Store { return &sharedBuffer{broken: newBroken()} }, []string{
		"NoAliasing", "a later ReadFile or Append changed the bytes an earlier ReadFile returned",
	}},
	"ignores context": {func() trace.Store { return &ignoresContext{newBroken()} }, []string{
		"CancelledContext", "Files with a cancelled context = <nil>, want an error wrapping context.Canceled",
		"Delete with a cancelled context", "calls with a cancelled context changed file 1",
	}},
	"create race": {func() trace.Store { return &createRace{newBroken()} }, []string{
		"ConcurrentCreates", "of 8 concurrent Creates of one id succeeded, want one",
	}},
	"created twice": {func() trace.Store { return &createdTwice{newBroken()} }, []string{
		"ConcurrentAppends", "concurrent appends creating one file reported Created, want exactly one",
	}},
	"summaries": {func() trace.Store { return &summaries{newBroken()} }, []string{
		"Summaries", `session "asked" has first prompt "after compaction"`,
	}},
}

func newBroken() *broken {
	b := &broken{Store: &trace.MemStore{}, chunks: map[int][]byte{}}
	b.race.ch = make(chan struct{})
	return b
}

type unpadded struct{ *broken }

func (s *unpadded) Append(ctx context.Context, id string, index int, data []byte) (trace.AppendResult, error) {
	res, err := s.Store.Append(ctx, id, index, data)
	if err == nil && (id == "s" || id == "c") && index == 1 {
		s.mu.Lock()
		s.chunks[len(s.chunks)] = slices.Clone(data)
		s.mu.Unlock()
	}
	return res, err
}

func (s *unpadded) ReadFile(ctx context.Context, id string, index int) ([]byte, error) {
	data, err := s.Store.ReadFile(ctx, id, index)
	if err != nil || (id != "s" && id != "c") || index != 1 {
		return data, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.chunks))
	for k := range s.chunks {
		keys = append(keys, strconv.Itoa(k))
	}
	slices.Sort(keys)
	var out []byte
	for _, k := range keys {
		n, _ := strconv.Atoi(k)
		out = append(out, s.chunks[n]...)
	}
	return out, nil
}

type lexicalFiles struct{ *broken }

func (s *lexicalFiles) Files(ctx context.Context, id string) ([]trace.FileInfo, error) {
	files, err := s.Store.Files(ctx, id)
	slices.SortFunc(files, func(a, b trace.FileInfo) int { return strings.Compare(strconv.Itoa(a.Index), strconv.Itoa(b.Index)) })
	return files, err
}

type keyOrder struct{ *broken }

func (s *keyOrder) Sessions(ctx context.Context) ([]trace.SessionInfo, error) {
	infos, err := s.Store.Sessions(ctx)
	slices.SortFunc(infos, func(a, b trace.SessionInfo) int { return strings.Compare(a.ID+"/", b.ID+"/") })
	return infos, err
}

type sharedBuffer struct{ *broken }

func (s *sharedBuffer) ReadFile(ctx context.Context, id string, index int) ([]byte, error) {
	data, err := s.Store.ReadFile(ctx, id, index)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf[:0], data...)
	return s.buf, nil
}

type ignoresContext struct{ *broken }

func (s *ignoresContext) Files(_ context.Context, id string) ([]trace.FileInfo, error) {
	return s.Store.Files(context.Background(), id)
}

func (s *ignoresContext) Delete(_ context.Context, id string) error {
	return s.Store.Delete(context.Background(), id)
}

// createRace looks for the id, then writes the files one Append at a time
// (session "race" of ConcurrentCreates; the others as MemStore does).
type createRace struct{ *broken }

func (s *createRace) Create(ctx context.Context, id string, files [][]byte) error {
	if _, err := s.Store.Files(ctx, id); err == nil {
		return &trace.Error{Op: "create", SessionID: id, Err: trace.ErrExists}
	}
	if id != "race" {
		return s.Store.Create(ctx, id, files)
	}
	s.race.wait()
	for i, f := range files {
		if _, err := s.Store.Append(ctx, id, i+1, f); err != nil {
			return err
		}
	}
	return nil
}

// createdTwice says Created when the file was missing as it looked.
type createdTwice struct{ *broken }

func (s *createdTwice) Append(ctx context.Context, id string, index int, data []byte) (trace.AppendResult, error) {
	_, missing := s.Store.ReadFile(ctx, id, index)
	if id == "c" && missing != nil {
		s.race.wait()
	}
	res, err := s.Store.Append(ctx, id, index, data)
	res.Created = missing != nil
	return res, err
}

// summaries takes the first prompt of the session's last file.
type summaries struct{ *broken }

func (s *summaries) Summaries(ctx context.Context) ([]trace.Summary, error) {
	infos, err := s.Sessions(ctx)
	var out []trace.Summary
	for _, info := range infos {
		data, _ := s.ReadFile(ctx, info.ID, info.Files)
		first, _ := trace.FirstPrompt(data)
		out = append(out, trace.Summary{SessionInfo: info, FirstPrompt: first, Source: trace.MetaSource(data)})
	}
	return out, err
}

// brokenReopens are stores that persist (to a MemStore that outlives
// them), each with one mistake, that TestReopen must fail, with what its
// report must say.
var brokenReopens = map[string]struct {
	open func() (trace.Store, func() trace.Store)
	want []string
}{
	// Writes an append at its next call: a reopen loses the last one.
	"write-behind": {openWriteBehind(false), []string{
		"AppendsSurvive", "want 0 to 24 in the order appended (an acknowledged append lost)",
		"ConcurrentAppendsSurvive", ": 39 records, want 40",
	}},
	// Keeps deletes in memory: a reopen brings the sessions back.
	"deletes in memory": {openDeletesInMemory, []string{
		"DeleteStays", `a session deleted before a reopen: Files("gone") after it = <nil>, want ErrNotFound`,
		"after a reopen Sessions lists",
	}},
	// Cuts a torn last line away as it opens, as a log's recovery does.
	"cuts torn tails": {openCutsTornTails, []string{
		"TornTailSurvives", "a torn tail, then a reopen: file reads",
		"want Healed only",
	}},
}

// writeBehind holds its last append in memory and writes it to disk at
// its next call (so a call sees what the ones before did); flush writes
// it.
type writeBehind struct {
	disk *trace.MemStore
	mu   sync.Mutex
	held *heldAppend
}

type heldAppend struct {
	id    string
	index int
	data  []byte
}

// openWriteBehind opens writeBehind stores on one disk; reopen drops the
// held append, or writes it first when flush is set (a Close that
// flushes: the control).
func openWriteBehind(flush bool) func() (trace.Store, func() trace.Store) {
	return func() (trace.Store, func() trace.Store) {
		s := &writeBehind{disk: &trace.MemStore{}}
		return s, func() trace.Store {
			if flush {
				s.mu.Lock()
				s.flush()
				s.mu.Unlock()
			}
			s = &writeBehind{disk: s.disk}
			return s
		}
	}
}

// flush writes the held append; s.mu is held.
func (s *writeBehind) flush() {
	if h := s.held; h != nil {
		s.held = nil
		if _, err := s.disk.Append(context.Background(), h.id, h.index, h.data); err != nil {
			panic(err) // checked when it was held
		}
	}
}

func (s *writeBehind) Append(ctx context.Context, id string, index int, data []byte) (trace.AppendResult, error) {
	var res trace.AppendResult
	if err := ctx.Err(); err != nil {
		return res, &trace.Error{Op: "append", SessionID: id, Index: index, Err: err}
	}
	if trace.ValidateID(id) != nil || index < 1 || len(data) == 0 || data[len(data)-1] != '\n' {
		return res, &trace.Error{Op: "append", SessionID: id, Index: index, Err: trace.ErrInvalid}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flush()
	old, err := s.disk.ReadFile(ctx, id, index)
	res.Created = err != nil
	res.Healed = len(old) > 0 && old[len(old)-1] != '\n'
	s.held = &heldAppend{id, index, slices.Clone(data)}
	return res, nil
}

func (s *writeBehind) Files(ctx context.Context, id string) ([]trace.FileInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flush()
	return s.disk.Files(ctx, id)
}

func (s *writeBehind) ReadFile(ctx context.Context, id string, index int) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flush()
	return s.disk.ReadFile(ctx, id, index)
}

func (s *writeBehind) Sessions(ctx context.Context) ([]trace.SessionInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flush()
	return s.disk.Sessions(ctx)
}

func (s *writeBehind) Create(ctx context.Context, id string, files [][]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flush()
	return s.disk.Create(ctx, id, files)
}

func (s *writeBehind) Delete(ctx context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flush()
	return s.disk.Delete(ctx, id)
}

// deletesInMemory marks a deleted session in memory and hides it; only an
// append to it removes its files from disk.
type deletesInMemory struct {
	trace.Store // the disk
	mu          sync.Mutex
	deleted     map[string]bool
}

func openDeletesInMemory() (trace.Store, func() trace.Store) {
	disk := &trace.MemStore{}
	return &deletesInMemory{Store: disk, deleted: map[string]bool{}}, func() trace.Store {
		return &deletesInMemory{Store: disk, deleted: map[string]bool{}}
	}
}

func (s *deletesInMemory) isDeleted(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deleted[id]
}

func (s *deletesInMemory) Append(ctx context.Context, id string, index int, data []byte) (trace.AppendResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.deleted[id] {
		if err := s.Store.Delete(ctx, id); err != nil {
			return trace.AppendResult{}, err
		}
		delete(s.deleted, id)
	}
	return s.Store.Append(ctx, id, index, data)
}

func (s *deletesInMemory) Files(ctx context.Context, id string) ([]trace.FileInfo, error) {
	if s.isDeleted(id) {
		return nil, &trace.Error{Op: "files", SessionID: id, Err: trace.ErrNotFound}
	}
	return s.Store.Files(ctx, id)
}

func (s *deletesInMemory) ReadFile(ctx context.Context, id string, index int) ([]byte, error) {
	if s.isDeleted(id) {
		return nil, &trace.Error{Op: "read", SessionID: id, Index: index, Err: trace.ErrNotFound}
	}
	return s.Store.ReadFile(ctx, id, index)
}

func (s *deletesInMemory) Sessions(ctx context.Context) ([]trace.SessionInfo, error) {
	infos, err := s.Store.Sessions(ctx)
	return slices.DeleteFunc(infos, func(si trace.SessionInfo) bool { return s.isDeleted(si.ID) }), err
}

func (s *deletesInMemory) Delete(ctx context.Context, id string) error {
	if _, err := s.Files(ctx, id); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deleted[id] = true
	return nil
}

// openCutsTornTails opens MemStores over one disk; reopen first cuts
// every file's torn last line away.
func openCutsTornTails() (trace.Store, func() trace.Store) {
	disk := &trace.MemStore{}
	return disk, func() trace.Store {
		ctx := context.Background()
		infos, _ := disk.Sessions(ctx)
		for _, si := range infos {
			files, _ := disk.Files(ctx, si.ID)
			kept := map[int][]byte{}
			torn := false
			for _, f := range files {
				data, _ := disk.ReadFile(ctx, si.ID, f.Index)
				kept[f.Index] = data[:bytes.LastIndexByte(data, '\n')+1]
				torn = torn || len(kept[f.Index]) < len(data)
			}
			if !torn {
				continue
			}
			disk.Delete(ctx, si.ID)
			for index, data := range kept {
				if len(data) > 0 {
					disk.Append(ctx, si.ID, index, data)
				}
			}
		}
		return disk
	}
}

// TestBrokenStore runs TestStore on the broken store its environment
// names (TestReopen on one of brokenReopens), for
// TestCatchesBrokenStores.
func TestBrokenStore(t *testing.T) {
	name := os.Getenv("TRACETEST_BROKEN")
	if name == "" {
		t.Skip("run by TestCatchesBrokenStores")
	}
	if c, ok := brokenReopens[name]; ok {
		tracetest.TestReopen(t, func(*testing.T) (trace.Store, func() trace.Store) { return c.open() })
		return
	}
	tracetest.TestStore(t, func(*testing.T) trace.Store { return brokenStores[name].store() })
}

// TestCatchesBrokenStores wants TestStore to fail each broken store, and
// to say what is wrong with it.
func TestCatchesBrokenStores(t *testing.T) {
	if runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("no processes to run")
	}
	want := map[string][]string{}
	for name, c := range brokenStores {
		want[name] = c.want
	}
	for name, c := range brokenReopens {
		want[name] = c.want
	}
	for name, wants := range want {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenStore$", "-test.count=1", "-test.timeout=2m")
			cmd.Env = append(os.Environ(), "TRACETEST_BROKEN="+name)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("TestStore or TestReopen passed the store (%s):\n%s", name, out)
			}
			for _, want := range wants {
				if !bytes.Contains(out, []byte(want)) {
					t.Errorf("the report does not say %q:\n%s", want, out)
				}
			}
		})
	}
}

// TestMemStorePasses is the control: the store the broken ones wrap.
func TestMemStorePasses(t *testing.T) {
	tracetest.TestStore(t, func(*testing.T) trace.Store { return newBroken() })
}

// TestReopenControls are the controls of brokenReopens: a MemStore that
// outlives the stores over it, and a write-behind store whose reopen
// writes what it holds first, as a Close would.
func TestReopenControls(t *testing.T) {
	t.Run("disk", func(t *testing.T) {
		tracetest.TestReopen(t, func(*testing.T) (trace.Store, func() trace.Store) {
			disk := &trace.MemStore{}
			return disk, func() trace.Store { return disk }
		})
	})
	t.Run("write-behind that flushes", func(t *testing.T) {
		tracetest.TestReopen(t, func(*testing.T) (trace.Store, func() trace.Store) { return openWriteBehind(true)() })
	})
}
