package trace_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

// A session writes its Trace, the process dies in the middle of a request,
// and Resume rebuilds what the next engine starts from.
func Example() {
	ctx := context.Background()
	store := &trace.MemStore{}
	w := trace.NewWriter(store, "demo", 1)
	meta := omni.Meta{SessionID: "demo", Provider: "p", ModelID: "m", ContextWindow: 8192, SystemPrompt: "Be brief.", AgentState: "state", Workspace: "/w"}.Message()
	for _, m := range []omni.Message{
		meta,
		omni.UserText("Hi"),
		omni.RequestBeginMsg(),
		omni.AssistantText("Hello!", omni.StatusCompleted),
		omni.Event(omni.Payload{Type: omni.RequestEnd, Rest: &omni.Rest{Status: omni.StatusCompleted}}),
		omni.UserText("And now?"),
		omni.RequestBeginMsg(), // the process dies before this request ends
	} {
		m.Timestamp = "2026-11-30T04:09:45.282Z" // the engine stamps records with its Clock
		if err := w.Write(context.Background(), m); err != nil {
			fmt.Println(err)
		}
	}

	now := func() time.Time { return time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC) }
	r, err := trace.Resume(ctx, store, "demo", now)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("file:", r.Index, "session:", r.Meta.Payload.SessionID())
	for _, m := range r.Snapshot.History {
		fmt.Printf("history: %s %q\n", m.Payload.Role, m.Payload.Text)
	}
	for _, m := range r.Snapshot.CarryOver {
		fmt.Printf("carry-over: %s %q\n", m.Payload.Role, m.Payload.Text)
	}
	fmt.Println("turns:", r.Snapshot.SessionTurns)
	// Output:
	// file: 1 session: demo
	// history: user "Hi"
	// history: assistant "Hello!"
	// carry-over: user "And now?"
	// turns: 1
}

// history is a model context that can be handed a resumed history
// (engine.HistoryLoader) and answers with what it was given.
type history struct{ loaded []omni.Message }

func (h *history) LoadHistory(ctx context.Context, m []omni.Message) error {
	h.loaded = m
	return nil
}

func (h *history) StreamGenerate(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
	emit(omni.AssistantText(fmt.Sprintf("I was given %d messages of history and %d new ones.", len(h.loaded), len(p.NewMessages)), omni.StatusCompleted))
	return engine.Outcome{Status: omni.StatusCompleted}
}

// Resume's result is what a new engine starts from, as the README says:
// engine.Config{Meta: r.Meta, Trace: r.Writer, Resume: &r.Snapshot}. The
// resumed session hands its history to the model, sends the carried-over
// input with the next one, and goes on writing the same Trace.
func ExampleResume() {
	ctx := context.Background()
	store := &trace.MemStore{}
	w := trace.NewWriter(store, "demo", 1)
	meta := omni.Meta{SessionID: "demo", Provider: "p", ModelID: "m", ContextWindow: 8192, SystemPrompt: "Be brief.", AgentState: "state", Workspace: "/w"}.Message()
	for _, m := range []omni.Message{meta, omni.UserText("Hi"), omni.RequestBeginMsg(), omni.AssistantText("Hello!", omni.StatusCompleted),
		omni.Event(omni.Payload{Type: omni.RequestEnd, Rest: &omni.Rest{Status: omni.StatusCompleted}}), omni.UserText("And now?")} {
		m.Timestamp = "2026-11-30T04:09:45.282Z"
		if err := w.Write(ctx, m); err != nil {
			fmt.Println(err)
		}
	}

	r, err := trace.Resume(ctx, store, "demo", time.Now)
	if err != nil {
		fmt.Println(err)
		return
	}
	session, err := engine.New(engine.Config{Meta: r.Meta, Trace: r.Writer, Resume: &r.Snapshot, LLM: &history{}})
	if err != nil {
		fmt.Println(err)
		return
	}
	stream, err := session.Run(ctx, []omni.Message{omni.UserText("Go on.")}, engine.RunOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for m := range stream {
		if m.Payload.Type == omni.Text {
			fmt.Println("assistant:", m.Payload.Text)
		}
	}
	data, err := store.ReadFile(ctx, "demo", 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := trace.ReadFile(data)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("records in file 1:", len(p.Records))
	// Output:
	// assistant: I was given 2 messages of history and 2 new ones.
	// records in file 1: 10
}

// ReadFile keeps every record it can decode: a damaged middle line is
// skipped with a diagnostic, a torn last line is ignored.
func ExampleReadFile() {
	data := []byte(`{"timestamp":"2026-11-30T04:09:45.282Z","type":"event_msg","payload":{"type":"request_begin"}}
{"timestamp":"2026-11-30T04:09:45.283Z","type":"mod

{"timestamp":"2026-11-30T04:09:45.284Z","type":"event_msg","payload":{"type":"request_end","status":"completed"}}
{"timestamp":"2026-11-30T04:09:45.2`)
	p, err := trace.ReadFile(data)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("records:", len(p.Records))
	fmt.Println("skipped lines:", p.SkippedLines())
	fmt.Println("torn tail:", p.TornTail)
	// Output:
	// records: 2
	// skipped lines: [2]
	// torn tail: true
}

// Rotate moves to the next file; the file appears with its first record.
func ExampleWriter_Rotate() {
	ctx := context.Background()
	store := &trace.MemStore{}
	w := trace.NewWriter(store, "demo", 1)
	write := func(text string) {
		m := omni.UserText(text)
		m.Timestamp = "2026-11-30T04:09:45.282Z"
		got, err := w.WriteRecord(context.Background(), m)
		fmt.Println(text, "→ file", got.Index, "new:", got.NewFile, err)
	}
	write("one")
	w.Rotate()
	files, _ := store.Files(ctx, "demo")
	fmt.Println("files after Rotate:", len(files))
	write("two")
	// Output:
	// one → file 1 new: true <nil>
	// files after Rotate: 1
	// two → file 2 new: true <nil>
}

// parentAndChild holds what a session with one subagent writes: the parent's
// Trace names the child session in a subagent pointer, and the child's
// Trace starts with a session_meta of source "subagent".
func parentAndChild() *trace.MemStore {
	ctx := context.Background()
	s := &trace.MemStore{}
	write := func(id string, msgs ...omni.Message) {
		w := trace.NewWriter(s, id, 1)
		for _, m := range msgs {
			m.Timestamp = "2026-11-30T04:09:45.282Z" // the engine stamps records with its Clock
			if err := w.Write(ctx, m); err != nil {
				fmt.Println(err)
			}
		}
	}
	meta := omni.Meta{Provider: "p", ModelID: "m", ContextWindow: 8192, AgentState: "state", Workspace: "/w"}
	parent, child := meta, meta
	parent.SessionID = "demo"
	child.SessionID, child.Source = "demo-child", omni.SourceSubagent
	write("demo", parent.Message(),
		omni.UserText("What is in the README?"),
		omni.SubagentMsg("demo-child"),
		omni.AssistantText("A Go engine.", omni.StatusCompleted))
	write("demo-child", child.Message(),
		omni.UserText("Read the README."),
		omni.AssistantText("It describes a Go engine.", omni.StatusCompleted))
	return s
}

// History gives a stored session as its runs showed it: the child
// session's records follow the subagent pointer that names it, with the
// child's id in their origin. Records gives the session's own only.
func ExampleHistory() {
	ctx := context.Background()
	s := parentAndChild()
	own, err := trace.Records(ctx, s, "demo")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("records of its own:", len(own))
	msgs, err := trace.History(ctx, s, "demo")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range msgs {
		p := m.Payload
		switch {
		case m.Type == omni.TypeSessionMeta:
			fmt.Println(m.Origin, "session_meta", p.SessionID())
		case p.Type == omni.Text:
			fmt.Println(m.Origin, p.Role+":", p.Text)
		default:
			child, _ := trace.SubagentPointer(m)
			fmt.Println(m.Origin, "subagent pointer to", child)
		}
	}
	// Output:
	// records of its own: 4
	// [] session_meta demo
	// [] user: What is in the README?
	// [] subagent pointer to demo-child
	// [demo-child] session_meta demo-child
	// [demo-child] user: Read the README.
	// [demo-child] assistant: It describes a Go engine.
	// [] assistant: A Go engine.
}

// A session list shows a subagent's child session under its parent, or
// not at all: Summary.Source says which sessions are children.
func ExampleList() {
	sessions, err := trace.List(context.Background(), parentAndChild())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range sessions {
		if s.Source == omni.SourceSubagent {
			continue
		}
		fmt.Printf("%s: %q\n", s.ID, s.FirstPrompt)
	}
	// Output:
	// demo: "What is in the README?"
}

// ExportTree gives a session's files followed by its subagents' child
// sessions'; ImportTree takes them back as one, into another store here,
// and returns the parent's id.
func ExampleExportTree() {
	ctx := context.Background()
	files, err := trace.ExportTree(ctx, parentAndChild(), "demo", time.UTC)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range files {
		fmt.Println(f.Name)
	}

	other := &trace.MemStore{}
	id, err := trace.ImportTree(ctx, other, files)
	fmt.Println("imported:", id, err)
	children, err := trace.Children(ctx, other, id)
	fmt.Println("its children:", children, err)
	_, err = trace.ImportTree(ctx, other, files)
	fmt.Println("again:", errors.Is(err, trace.ErrExists))
	// Output:
	// 2026-11-30/demo_001.jsonl
	// 2026-11-30/demo-child_001.jsonl
	// imported: demo <nil>
	// its children: [demo-child] <nil>
	// again: true
}

// DeleteTree deletes a session with its subagents' child sessions, which
// Store.Delete would leave stored.
func ExampleDeleteTree() {
	ctx := context.Background()
	s := parentAndChild()
	if err := trace.DeleteTree(ctx, s, "demo"); err != nil {
		fmt.Println(err)
		return
	}
	left, err := s.Sessions(ctx)
	fmt.Println("sessions left:", len(left), err)
	err = trace.DeleteTree(ctx, s, "demo")
	fmt.Println("again:", errors.Is(err, trace.ErrNotFound))
	// Output:
	// sessions left: 0 <nil>
	// again: true
}

// A Batcher with Fresh writes new sessions only: a session id already
// stored keeps its Trace, and the new session's records are dropped with
// one report wrapping ErrExists. A stored session of no record at all
// (its only line cut by a crash) is replaced.
func ExampleBatcherOptions_fresh() {
	ctx := context.Background()
	store := &trace.MemStore{}
	old := []byte(`{"timestamp":"2026-11-30T04:09:45.282Z","type":"model_msg","payload":{"type":"text","role":"user","text":"an old session","stop_reason":"completed"}}` + "\n")
	torn := []byte(`{"timestamp":"2026-11-30T04:09:45.282Z","type":"session_me`)
	for id, data := range map[string][]byte{"taken": old, "crashed": torn} {
		if err := store.Create(ctx, id, [][]byte{data}); err != nil {
			fmt.Println(err)
		}
	}
	b := trace.NewBatcher(store, trace.BatcherOptions{Fresh: true, Report: func(err error) {
		fmt.Println("reported, ErrExists:", errors.Is(err, trace.ErrExists))
	}})
	for _, id := range []string{"taken", "crashed"} {
		m := omni.UserText("a new session")
		m.Timestamp = "2026-12-01T09:00:00.000Z"
		if err := trace.NewWriter(b, id, 1).Write(ctx, m); err != nil {
			fmt.Println(err)
		}
		if err := b.Flush(ctx); err != nil { // the Report comes from the Batcher's goroutine
			fmt.Println(err)
		}
		recs, err := trace.Records(ctx, store, id)
		for _, r := range recs {
			fmt.Printf("%s: %q\n", id, r.Payload.Text)
		}
		if err != nil {
			fmt.Println(err)
		}
	}
	// Output:
	// reported, ErrExists: true
	// taken: "an old session"
	// crashed: "a new session"
}
