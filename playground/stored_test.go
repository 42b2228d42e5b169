package playground

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

// cards describes the tool cards of tr and, nested, of the subagents they
// host; and the items of kind subagent or notice "subagent" (a child
// shown apart from its call).
func cards(tr *Transcript) string {
	var b strings.Builder
	for _, it := range tr.Items {
		switch {
		case it.Kind == KindTool:
			c := it.Tool
			fmt.Fprintf(&b, "%s(%s,%s)", c.Name, c.Decision, c.OutputStop)
			if it.Sub != nil {
				b.WriteString("[" + cards(it.Sub) + "]")
			}
			b.WriteString(" ")
		case it.Kind == KindSubagent, it.Kind == KindNotice && it.Body == "subagent":
			fmt.Fprintf(&b, "lone %s %q ", it.Kind, it.Body)
		}
	}
	return strings.TrimSpace(b.String())
}

// A subagent's child session is stored under its own id; reopened, the
// parent's subagent card shows the child's cards nested as during the run,
// the session list shows the parent only, and deleting the parent deletes
// the child.
func TestSubagentStoredAndReadBack(t *testing.T) {
	ctx := context.Background()
	store := &trace.MemStore{}
	meta := Meta(time.Now())
	id := meta.Payload.SessionID()
	live := &Transcript{}
	s, _, err := Open(Options{
		Meta: &meta, Trace: trace.NewWriter(store, id, 1),
		SubagentTrace: func(child string) engine.TraceSink { return trace.NewWriter(store, child, 1) },
		OnSubagent:    func(child, call string) { live.Link(child, call) },
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range run(t, s, "subagent: look around") {
		live.Apply(m)
	}
	want := "subagent(allow,completed)[list_files(allow,completed) count_lines(allow,completed)]"
	if got := cards(live); got != want {
		t.Fatalf("live cards %s, want %s", got, want)
	}

	recs, err := trace.History(ctx, store, id)
	if err != nil {
		t.Fatal(err)
	}
	stored := &Transcript{}
	for _, r := range recs {
		stored.ApplyRecord(r)
	}
	stored.Interrupt()
	if got := cards(stored); got != want {
		t.Errorf("stored cards %s, want %s", got, want)
	}

	var p Sessions
	list, err := p.List(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != id {
		t.Errorf("listed %v, want the parent %s only", list, id)
	}
	children, err := trace.Children(ctx, store, id)
	if err != nil || len(children) != 1 {
		t.Fatalf("children %v, %v", children, err)
	}
	if err := DeleteSession(ctx, store, id, nil); err != nil {
		t.Fatal(err)
	}
	for _, sid := range []string{id, children[0]} {
		if _, err := store.Files(ctx, sid); !errors.Is(err, trace.ErrNotFound) {
			t.Errorf("%s after delete: %v, want not found", sid, err)
		}
	}
}

// A pointer whose child is not stored (a session stored without its
// children) shows the card with no nested cards, and no lone subagent
// item; a pointer goes to the call of its own run, not to an earlier
// run's call that was cut off.
func TestSubagentPointerWithoutChild(t *testing.T) {
	ptr := func(id string) omni.Message {
		return omni.Event(omni.Payload{Type: omni.Subagent, Rest: &omni.Rest{SessionID: id}})
	}
	child := Meta(time.Now())
	child.Payload.Edit().Source = omni.SourceSubagent
	cid := child.Payload.SessionID()
	recs := []omni.Message{
		Meta(time.Now()),
		omni.UserText("subagent: first"),
		omni.ToolCallMsg("call_1_1", ToolSubagent, `{"task":"first"}`),
		omni.UserText("subagent: second"),
		omni.ToolCallMsg("call_2_1", ToolSubagent, `{"task":"second"}`),
		ptr("session-missing"),
		ptr(cid),
		child.WithOrigin(cid),
		omni.ToolCallMsg("call_1_1", ToolListFiles, `{}`).WithOrigin(cid),
	}
	tr := &Transcript{}
	for _, r := range recs {
		tr.ApplyRecord(r)
	}
	if got, want := cards(tr), "subagent(,) subagent(,)[list_files(,)]"; got != want {
		t.Errorf("cards %s, want %s", got, want)
	}
}

// A stored session's last run ended by an abort (stopped) or cut off; its
// own calls' ids, not a subagent's.
func TestLastAbortAndStoredCallIDs(t *testing.T) {
	sub := func(m omni.Message) omni.Message { m.Origin = []string{"child"}; return m }
	stopped := []omni.Message{omni.RequestBeginMsg(), omni.ToolCallMsg("call_1_1", "write_file", "{}"), sub(omni.ToolCallMsg("call_1_1", "list_files", "{}")), omni.AbortMsg("aborted by user"), sub(omni.AssistantText("late", omni.StatusCompleted))}
	if r, ok := LastAbort(stopped); !ok || r != "aborted by user" {
		t.Errorf("LastAbort = %q %v, want the user's abort", r, ok)
	}
	if _, ok := LastAbort(stopped[:3]); ok {
		t.Error("a run cut off mid-call reads as aborted")
	}
	if _, ok := LastAbort(nil); ok {
		t.Error("no records read as aborted")
	}
	if ids := StoredCallIDs(stopped); len(ids) != 1 || ids[0] != "call_1_1" {
		t.Errorf("StoredCallIDs = %v, want the session's own call", ids)
	}
}

// An imported session is dated by its last record, not by its import (the
// time a store gives it), and sorted by that date among the others, until
// it is written again: then the store's time is its last activity, and
// the entry goes; so does the entry of a session gone.
func TestImportedSessionDatedByItsLastRecord(t *testing.T) {
	ctx := context.Background()
	clock := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	store := &trace.MemStore{Now: now}

	// A session used in January, exported and imported in March.
	used := time.Date(2026, 1, 10, 9, 30, 0, 0, time.UTC)
	meta := Meta(used)
	old := meta.Payload.SessionID()
	lines := []omni.Message{meta, omni.UserText("hello"), omni.AssistantText("hi", omni.StatusCompleted)}
	var data []byte
	for i, m := range lines {
		m.Timestamp = used.Add(time.Duration(i) * time.Second).Format(omni.TimestampLayout)
		b, err := m.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		data = append(append(data, b...), '\n')
	}
	// A session used in February, in the store already.
	clock = time.Date(2026, 2, 1, 8, 0, 0, 0, time.UTC)
	feb := Meta(clock)
	if _, err := store.Append(ctx, feb.Payload.SessionID(), 1, mustLine(t, feb)); err != nil {
		t.Fatal(err)
	}
	clock = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	id, err := ImportSession(ctx, store, []trace.File{{Name: old + "_001.jsonl", Data: data}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	last, ok := LastRecordTime(ctx, store, id)
	if want := used.Add(2 * time.Second); !ok || !last.Equal(want) {
		t.Fatalf("LastRecordTime = %v, %v; want %v", last, ok, want)
	}
	imported := map[string]Imported{id: {Last: last.UnixMilli(), Stored: clock.UnixMilli()}, "session-gone": {Last: 1, Stored: 2}}
	var p Sessions
	list, err := p.List(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	if list[0].ID != id {
		t.Fatalf("the store dates the import: it lists %s first", list[0].ID)
	}
	dated, kept := DateImported(list, imported)
	if len(dated) != 2 || dated[0].ID != feb.Payload.SessionID() || dated[1].ID != id || !dated[1].LastActivity.Equal(last) {
		t.Errorf("dated list = %+v, want February's session first, then the imported one at %v", dated, last)
	}
	if _, ok := kept[id]; !ok || len(kept) != 1 {
		t.Errorf("kept %v, want the imported session only", kept)
	}
	if !list[0].LastActivity.Equal(clock) {
		t.Error("DateImported changed the list it was given")
	}

	// Used again in April: the store's time, the entry gone.
	clock = time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)
	if _, err := store.Append(ctx, id, 1, mustLine(t, omni.UserText("again"))); err != nil {
		t.Fatal(err)
	}
	list, err = p.List(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	dated, kept = DateImported(list, kept)
	if dated[0].ID != id || !dated[0].LastActivity.Equal(clock) || len(kept) != 0 {
		t.Errorf("after a write: dated %+v, kept %v; want the imported session first at %v, nothing kept", dated, kept, clock)
	}
}

func mustLine(t *testing.T, m omni.Message) []byte {
	t.Helper()
	if m.Timestamp == "" {
		m.Timestamp = time.Now().UTC().Format(omni.TimestampLayout)
	}
	b, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}
