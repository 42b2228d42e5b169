package trace_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/floehq/floe/engine/trace"
)

const (
	metaLine   = `{"timestamp":"2026-11-30T23:30:00.000Z","type":"session_meta","payload":{"session_id":"s1","provider":"p","model_id":"m","model_context_window":1,"system_prompt":"","agent_state":"","workspace":""}}` + "\n"
	promptLine = `{"timestamp":"2026-11-30T23:30:00.001Z","type":"model_msg","payload":{"type":"text","role":"user","text":"hello there","stop_reason":"completed"}}` + "\n"
	beginLine  = `{"timestamp":"2026-11-30T23:30:00.002Z","type":"event_msg","payload":{"type":"request_begin"}}` + "\n"
)

func TestFirstPrompt(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
		ok               bool
	}{
		{"after meta", metaLine + promptLine + beginLine, "hello there", true},
		{"none", metaLine + beginLine, "", false},
		{"malformed line skipped", metaLine + "{\"user\"\n" + promptLine, "hello there", true},
		{"assistant text is not a prompt", strings.ReplaceAll(promptLine, `"user"`, `"assistant"`), "", false},
		{"cut at a rune boundary", `{"type":"model_msg","payload":{"type":"text","role":"user","text":"` + strings.Repeat("é", 600) + `"}}`, strings.Repeat("é", 500), true},
	} {
		got, ok := trace.FirstPrompt([]byte(tc.data))
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: FirstPrompt = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestListNewestFirst(t *testing.T) {
	ctx := context.Background()
	var at time.Time
	store := &trace.MemStore{Now: func() time.Time { return at }}
	for i, id := range []string{"old", "new", "mid"} {
		at = time.Date(2026, 1, 1, []int{1, 3, 2}[i], 0, 0, 0, time.UTC)
		if _, err := store.Append(ctx, id, 1, []byte(metaLine+promptLine)); err != nil {
			t.Fatal(err)
		}
	}
	list, err := trace.List(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range list {
		ids = append(ids, s.ID)
		if s.FirstPrompt != "hello there" || s.Files != 1 || s.Size != int64(len(metaLine+promptLine)) {
			t.Errorf("summary %+v", s)
		}
	}
	if !slices.Equal(ids, []string{"new", "mid", "old"}) {
		t.Errorf("order = %v, want newest first", ids)
	}
}

func TestImportRefuses(t *testing.T) {
	ctx := context.Background()
	good := []byte(metaLine + promptLine)
	for _, tc := range []struct {
		name  string
		files []trace.File
		is    error
		says  string
	}{
		{"no files", nil, trace.ErrInvalid, "no files"},
		{"bad name", []trace.File{{Name: "x.jsonl", Data: good}}, trace.ErrInvalid, `"x.jsonl"`},
		{"gap", []trace.File{{Name: "s1_001.jsonl", Data: good}, {Name: "s1_003.jsonl", Data: good}}, trace.ErrInvalid, "without gaps"},
		{"repeat", []trace.File{{Name: "a/s1_001.jsonl", Data: good}, {Name: "b/s1_001.jsonl", Data: good}}, trace.ErrInvalid, "or repeats"},
		{"two sessions", []trace.File{{Name: "s1_001.jsonl", Data: good}, {Name: "s2_002.jsonl", Data: good}}, trace.ErrInvalid, "belongs to another session"},
		{"malformed middle line", []trace.File{{Name: "d/s1_001.jsonl", Data: []byte(metaLine + "{oops\n" + promptLine)}}, trace.ErrInvalid, `"d/s1_001.jsonl": line 2`},
		{"no session_meta", []trace.File{{Name: "s1_001.jsonl", Data: []byte(promptLine)}}, trace.ErrNotResumable, "s1_001.jsonl"},
		{"other session's meta", []trace.File{{Name: "s2_001.jsonl", Data: good}}, trace.ErrInvalid, `names session "s1"`},
		{"a second session_meta of another session", []trace.File{{Name: "s1_001.jsonl", Data: []byte(metaLine + strings.Replace(metaLine, `"s1"`, `"s9"`, 1) + promptLine)}}, trace.ErrInvalid, `"s1_001.jsonl": invalid argument: a session_meta names session "s9" after one of "s1"`},
		{"a session_meta of no session", []trace.File{{Name: "", Data: []byte(strings.Replace(metaLine, `"s1"`, `""`, 1) + promptLine)}}, trace.ErrInvalid, "the trace: invalid argument: a session_meta names no session (session_id is empty)"},
		{"empty file", []trace.File{{Name: "s1_001.jsonl", Data: good}, {Name: "s1_002.jsonl", Data: []byte("\n")}}, trace.ErrInvalid, "no record"},
		{"one line, not a record", []trace.File{{Name: "s1_001.jsonl", Data: []byte("hello world\n")}}, trace.ErrInvalid, `"s1_001.jsonl": invalid argument: no record: line 1 is not a Trace record: omni: invalid JSON`},
		{"a name of any bytes, quoted", []trace.File{{Name: "d\n\xab/s1_001.jsonl", Data: []byte("hello world\n")}}, trace.ErrInvalid, `"d\n\xab/s1_001.jsonl": invalid argument: no record`},
	} {
		store := &trace.MemStore{}
		_, err := trace.Import(ctx, store, tc.files)
		if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: Import = %v, want %v saying %q", tc.name, err, tc.is, tc.says)
		}
		if s, _ := store.Sessions(ctx); len(s) != 0 {
			t.Errorf("%s: a refused import stored %+v", tc.name, s)
		}
	}
}

// A file named _000 is no file of a session: Import refuses it, naming it,
// where it used to panic (index out of range [-1]).
func TestImportRefusesIndexZero(t *testing.T) {
	meta := `{"timestamp":"2026-01-02T03:04:05.000Z","type":"session_meta","payload":{"session_id":"s","provider":"p","model_id":"m","model_context_window":1,"system_prompt":"","agent_state":"","workspace":""}}` + "\n"
	_, err := trace.Import(context.Background(), &trace.MemStore{}, []trace.File{{Name: "2026-01-02/s_000.jsonl", Data: []byte(meta)}})
	if !errors.Is(err, trace.ErrInvalid) || !strings.Contains(err.Error(), "s_000.jsonl") {
		t.Fatalf("Import(s_000.jsonl) = %v, want ErrInvalid naming the file", err)
	}
}

// ParseFileName takes the names FileName writes, and no other spelling of
// an index: "_0001" would be read as file 1 beside the "_001" a store
// writes, and "_000" is no file (Import panicked on it).
func TestParseFileName(t *testing.T) {
	for _, tc := range []struct {
		name  string
		id    string
		index int
	}{
		{"s_001.jsonl", "s", 1},
		{"a_b_042.jsonl", "a_b", 42},
		{"s_999.jsonl", "s", 999},
		{"s_1000.jsonl", "s", 1000},
		{"s_000.jsonl", "", 0},
		{"s_0001.jsonl", "", 0},
		{"s_01.jsonl", "", 0},
		{"s_00a.jsonl", "", 0},
		{"_001.jsonl", "", 0},
		{"s_001.json", "", 0},
	} {
		id, index, ok := trace.ParseFileName(tc.name)
		if id != tc.id || index != tc.index || ok != (tc.index > 0) {
			t.Errorf("ParseFileName(%q) = %q, %d, %v", tc.name, id, index, ok)
		}
		if ok && trace.FileName(id, index) != tc.name {
			t.Errorf("FileName(%q, %d) = %q, want the name parsed", id, index, trace.FileName(id, index))
		}
	}
}
