package playground

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

// blockingPace lets the model stream until its first wait, reports it on
// started, and then waits until the run is cancelled.
func blockingPace(started chan<- struct{}) Pace {
	var once sync.Once
	return func(ctx context.Context, d time.Duration) bool {
		once.Do(func() { close(started) })
		<-ctx.Done()
		return false
	}
}

func TestDeleteSessionStopsItsRunFirst(t *testing.T) {
	ctx := context.Background()
	store := &trace.MemStore{}
	meta := Meta(time.Now())
	id := meta.Payload.SessionID()
	started := make(chan struct{})
	sess, _, err := Open(Options{Pace: blockingPace(started), Meta: &meta, Trace: trace.NewWriter(store, id, 1)})
	if err != nil {
		t.Fatal(err)
	}
	r := NewRunner(sess)
	ended := make(chan error, 1)
	startRun(t, r, "stream 3000", func(_ omni.Message, answer func(string)) { answer(omni.DecisionDeny) },
		func(omni.Message) {}, func(err error) { ended <- err })
	<-started // the run is streaming: its first records are stored
	if _, err := store.Files(ctx, id); err != nil {
		t.Fatalf("the session is not stored while it runs: %v", err)
	}

	if err := DeleteSession(ctx, store, id, r); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-ended:
		if err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatal("DeleteSession returned before the session's run ended")
	}
	if _, err := store.Files(ctx, id); !errors.Is(err, trace.ErrNotFound) {
		t.Fatalf("after the delete and the run's end, Files = %v; want ErrNotFound (the run wrote after the delete)", err)
	}
	if err := r.Start("again", nil, nil, func(omni.Message) {}, func(error) {}); !errors.Is(err, ErrClosed) {
		t.Errorf("Start after the delete = %v, want ErrClosed", err)
	}
	if err := r.StartCompact(func(omni.Message) {}, func(error) {}); !errors.Is(err, ErrClosed) {
		t.Errorf("StartCompact after the delete = %v, want ErrClosed", err)
	}
}

func TestDeleteSessionOfAnotherSessionLeavesTheRunner(t *testing.T) {
	ctx := context.Background()
	store := &trace.MemStore{}
	other := Meta(time.Now())
	if err := store.Create(ctx, other.Payload.SessionID(), [][]byte{record(t, other)}); err != nil {
		t.Fatal(err)
	}
	sess, err := NewSession(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := NewRunner(sess)
	if err := DeleteSession(ctx, store, other.Payload.SessionID(), r); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Files(ctx, other.Payload.SessionID()); !errors.Is(err, trace.ErrNotFound) {
		t.Errorf("Files after the delete = %v", err)
	}
	collect(t, r, "echo: still here", func(omni.Message) string { return omni.DecisionAllow })
}

func record(t *testing.T, m omni.Message) []byte {
	t.Helper()
	b, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// lastUsage returns the last token_usage of msgs: the request's and the
// session's counts.
func lastUsage(t *testing.T, msgs []omni.Message) (req, session omni.TokenCounts) {
	t.Helper()
	for _, m := range msgs {
		if m.Payload.Type == omni.TokenUsage {
			req, session = *m.Payload.Request(), *m.Payload.Session()
		}
	}
	if session.Total == 0 {
		t.Fatal("no token_usage in the run")
	}
	return req, session
}

// compactNow runs a manual compaction to its end.
func compactNow(t *testing.T, r *Runner) {
	t.Helper()
	ended := make(chan error, 1)
	var mu sync.Mutex
	status := ""
	if err := r.StartCompact(func(m omni.Message) {
		if m.Payload.Type == omni.CompactionEnd {
			mu.Lock()
			status = m.Payload.Status()
			mu.Unlock()
		}
	}, func(err error) { ended <- err }); err != nil {
		t.Fatal(err)
	}
	if err := <-ended; err != nil {
		t.Fatal(err)
	}
	if status != omni.StatusCompleted {
		t.Fatalf("compaction ended %q", status)
	}
}

func TestScriptedTokensContinueAfterCompaction(t *testing.T) {
	sess, _, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := NewRunner(sess)
	allow := func(omni.Message) string { return omni.DecisionAllow }
	_, before := lastUsage(t, collect(t, r, "echo: before the compaction", allow))
	compactNow(t, r)
	if got := sess.Snapshot().SessionTokens; got.Output <= before.Output {
		t.Fatalf("the compaction's tokens are not counted: %+v after %+v", got, before)
	}
	req, after := lastUsage(t, collect(t, r, "echo: after the compaction", allow))
	if after.Output < before.Output+req.Output || after.Total < before.Total+req.Total {
		t.Errorf("session tokens after the compaction = %+v; want at least %+v plus this request's %+v", after, before, req)
	}
}

func TestScriptedTokensContinueAfterResume(t *testing.T) {
	ctx := context.Background()
	store := &trace.MemStore{}
	meta := Meta(time.Now())
	id := meta.Payload.SessionID()
	sess, _, err := Open(Options{Meta: &meta, Trace: trace.NewWriter(store, id, 1)})
	if err != nil {
		t.Fatal(err)
	}
	allow := func(omni.Message) string { return omni.DecisionAllow }
	_, before := lastUsage(t, collect(t, NewRunner(sess), "echo: before the reload", allow))

	res, err := trace.Resume(ctx, store, id, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if res.Snapshot.SessionTokens != before {
		t.Fatalf("stored session tokens %+v, want %+v", res.Snapshot.SessionTokens, before)
	}
	resumed, _, err := Open(Options{Meta: &res.Meta, Resume: &res.Snapshot, Trace: res.Writer})
	if err != nil {
		t.Fatal(err)
	}
	req, after := lastUsage(t, collect(t, NewRunner(resumed), "echo: after the reload", allow))
	if want := before.Add(req); after != want {
		t.Errorf("session tokens after the resume = %+v, want %+v (the stored %+v plus this request's)", after, want, before)
	}
}

// promptLLM records the system prompt it is sent and answers "ok".
type promptLLM struct{ system chan string }

func (l promptLLM) StreamGenerate(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
	l.system <- p.SystemPrompt
	emit(omni.AssistantText("ok", omni.StatusCompleted))
	return engine.Outcome{Status: omni.StatusCompleted}
}

func TestProviderSessionGetsTheWorkspacePrompt(t *testing.T) {
	meta := ProviderMeta(time.Now(), "openai-compatible", "llama3.2", "")
	r := meta.Payload
	if r.SystemPrompt() != WorkspacePrompt || r.Provider() != "openai-compatible" || r.ModelID() != "llama3.2" || string(r.ModelContextWindow()) != "0" {
		t.Fatalf("provider meta = %+v", meta)
	}
	llm := promptLLM{system: make(chan string, 4)}
	sess, _, err := Open(Options{LLM: llm, Meta: &meta})
	if err != nil {
		t.Fatal(err)
	}
	collect(t, NewRunner(sess), "hello", func(omni.Message) string { return omni.DecisionAllow })
	if got := <-llm.system; got != WorkspacePrompt {
		t.Errorf("the provider's model got the system prompt %q, want the workspace prompt", got)
	}
	if WorkspacePrompt == SystemPrompt {
		t.Error("the workspace prompt is the scripted model's")
	}
}

// childLLM is a fresh provider context handed to a subagent: it records the
// system prompt and the tools it is sent, and answers.
type childLLM struct {
	system chan string
	tools  chan []omni.ToolDefinition
}

func (l childLLM) StreamGenerate(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
	l.system <- p.SystemPrompt
	l.tools <- p.Tools
	emit(omni.AssistantText("the child's answer", omni.StatusCompleted))
	return engine.Outcome{Status: omni.StatusCompleted}
}

// A subagent of a real provider's session runs on a fresh context of that
// provider (NewLLM with no tokens), with the subagent prompt, the file tools
// only, and a session_meta naming the provider and model; its messages are
// forwarded with its id in origin, and its answer is the call's output.
func TestProviderSubagentUsesTheProvider(t *testing.T) {
	ctx := context.Background()
	store := &trace.MemStore{}
	var requests int
	parent := subagentParent(&requests)
	child := childLLM{system: make(chan string, 4), tools: make(chan []omni.ToolDefinition, 4)}
	var seeds []omni.TokenCounts
	factory := func(seed omni.TokenCounts) engine.LLM {
		seeds = append(seeds, seed)
		return child
	}
	meta := ProviderMeta(time.Now(), "openai-compatible", "llama3.2", "")
	var linked []string
	s, _, err := Open(Options{
		LLM: parent, NewLLM: factory, Provider: "openai-compatible", Model: "llama3.2",
		Eval: func(ctx context.Context, code string, timeout time.Duration) (EvalResult, error) {
			return EvalResult{}, errors.New("not run in this test")
		},
		Meta:          &meta,
		SubagentTrace: func(id string) engine.TraceSink { return trace.NewWriter(store, id, 1) },
		OnSubagent:    func(id, call string) { linked = append(linked, id, call) },
	})
	if err != nil {
		t.Fatal(err)
	}
	msgs := run(t, s, "hand it on")

	if len(seeds) != 1 || seeds[0] != (omni.TokenCounts{}) {
		t.Fatalf("NewLLM called with %v, want once with no tokens", seeds)
	}
	if requests != 2 {
		t.Errorf("the parent's model got %d requests, want 2 (the child must not use it)", requests)
	}
	if got := <-child.system; got != SubagentPrompt {
		t.Errorf("the child's model got the system prompt %q, want SubagentPrompt", got)
	}
	var names []string
	for _, d := range <-child.tools {
		names = append(names, d.Name)
	}
	if want := []string{ToolListFiles, ToolCountLines, ToolReadFile, ToolWriteFile, ToolEditFile, ToolDeleteFile}; fmt.Sprint(names) != fmt.Sprint(want) {
		t.Errorf("the child's tools %v, want %v", names, want)
	}
	for _, offered := range []string{"JavaScript", "run_js", "hand a task"} {
		if strings.Contains(SubagentPrompt, offered) {
			t.Errorf("SubagentPrompt offers %q, which a child lacks", offered)
		}
	}

	if len(linked) != 2 || linked[1] != "call_1" {
		t.Fatalf("OnSubagent got %v", linked)
	}
	cid := linked[0]
	var childMeta *omni.Message
	forwarded, output := 0, ""
	for i, m := range msgs {
		if len(m.Origin) > 0 {
			forwarded++
			if m.Origin[0] != cid {
				t.Errorf("forwarded message %d has origin %v, want [%s]", i, m.Origin, cid)
			}
			if m.Type == omni.TypeSessionMeta {
				childMeta = &msgs[i]
			}
		}
		if m.Payload.Type == omni.ToolCallOutput && len(m.Origin) == 0 && !m.IsPartial() {
			output = m.Payload.Output
		}
	}
	if childMeta == nil {
		t.Fatalf("no child session_meta among the %d forwarded messages", forwarded)
	}
	p := childMeta.Payload
	if p.SessionID() != cid || p.Provider() != "openai-compatible" || p.ModelID() != "llama3.2" ||
		p.Source() != omni.SourceSubagent || p.SystemPrompt() != SubagentPrompt {
		t.Errorf("child session_meta = %+v", childMeta)
	}
	if output != "the child's answer" {
		t.Errorf("the subagent call's output %q, want the child's answer", output)
	}
	stored, err := trace.Records(ctx, store, cid)
	if err != nil || len(stored) == 0 || stored[0].Payload.Provider() != "openai-compatible" {
		t.Errorf("the child's stored Trace: %v, %v", stored, err)
	}
}

// A real provider's session without NewLLM cannot give a child a context
// of its own: the subagent call fails, naming why, and the parent's model
// is not shared.
func TestProviderSubagentWithoutFactoryFails(t *testing.T) {
	var requests int
	parent := subagentParent(&requests)
	s, _, err := Open(Options{LLM: parent, Provider: "anthropic", Model: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	output := ""
	for _, m := range run(t, s, "hand it on") {
		if len(m.Origin) > 0 {
			t.Errorf("a child ran: %+v", m)
		}
		if m.Payload.Type == omni.ToolCallOutput && !m.IsPartial() {
			output = m.Payload.Output
		}
	}
	if !strings.Contains(output, "the anthropic model gives no fresh context for a child session") {
		t.Errorf("the subagent call's output %q, want the reason it failed", output)
	}
	if requests != 2 {
		t.Errorf("the parent's model got %d requests, want 2", requests)
	}
}

// A child that stops (its model refused it: a bad key, requests that
// keep failing) fails the call with the reason, as floe.subagentTool()
// does: the parent's model was told "(the subagent gave no answer)", a
// completed output that hid why. A child stopped with its parent's run is
// still the parent's interruption, not a failure.
func TestProviderSubagentFailureIsReported(t *testing.T) {
	var requests int
	parent := subagentParent(&requests)
	refused := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		return engine.Outcome{Status: omni.StatusFailed, ErrorMessage: "401 invalid key", Permanent: true}
	})
	meta := ProviderMeta(time.Now(), "openai-compatible", "llama3.2", "")
	s, _, err := Open(Options{LLM: parent, NewLLM: func(omni.TokenCounts) engine.LLM { return refused },
		Provider: "openai-compatible", Model: "llama3.2", Meta: &meta})
	if err != nil {
		t.Fatal(err)
	}
	var out *omni.Payload
	for _, m := range run(t, s, "hand it on") {
		if m.Payload.Type == omni.ToolCallOutput && len(m.Origin) == 0 && !m.IsPartial() {
			out = &m.Payload
		}
	}
	if out == nil || out.StopReason != omni.StatusFailed || !strings.Contains(out.Output, "the subagent stopped") || !strings.Contains(out.Output, "401 invalid key") {
		t.Fatalf("the subagent call's output %+v, want failed with the child's reason", out)
	}

	// The parent's run aborted while the child's request waits.
	requests = 0
	waiting := make(chan struct{})
	hangs := engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		close(waiting)
		<-ctx.Done()
		return engine.Outcome{Status: omni.StatusAborted}
	})
	s, _, err = Open(Options{LLM: subagentParent(&requests), NewLLM: func(omni.TokenCounts) engine.LLM { return hangs },
		Provider: "openai-compatible", Model: "llama3.2", Meta: &meta})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-waiting; cancel() }()
	seq, err := s.Run(ctx, []omni.Message{omni.UserText("hand it on")}, engine.RunOptions{Approve: func(context.Context, omni.Message) (engine.Decision, error) {
		return omni.DecisionAllow, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	out = nil
	for m := range seq {
		if m.Payload.Type == omni.ToolCallOutput && len(m.Origin) == 0 && !m.IsPartial() {
			out = &m.Payload
		}
	}
	if out == nil || out.StopReason != omni.StatusAborted || strings.Contains(out.Output, "the subagent stopped") {
		t.Fatalf("the aborted subagent call's output %+v, want aborted", out)
	}
}

// subagentParent is a parent session's model that asks for one subagent
// call, then answers "done"; *requests counts its requests.
func subagentParent(requests *int) engine.LLM {
	return engine.LLMFunc(func(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
		*requests++
		if *requests == 1 {
			emit(omni.ToolCallMsg("call_1", ToolSubagent, `{"task":"count the notes"}`))
		} else {
			emit(omni.AssistantText("done", omni.StatusCompleted))
		}
		return engine.Outcome{Status: omni.StatusCompleted}
	})
}

// A request cut off by a reload leaves its calls only in the Trace: the
// resumed session's scripted model numbers its calls past Options.CallIDs.
func TestScriptedCallsNumberPastStoredOnes(t *testing.T) {
	meta := Meta(time.Now())
	sess, _, err := Open(Options{Meta: &meta, CallIDs: []string{"call_1_1", "call_4_7"}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range collect(t, NewRunner(sess), "How big is store.go?", func(omni.Message) string { return omni.DecisionAllow }) {
		if m.Payload.Type == omni.ToolCall {
			ids = append(ids, m.Payload.ToolCallID)
		}
	}
	if len(ids) == 0 || ids[0] != "call_5_8" {
		t.Errorf("the resumed model's calls %v, want call_5_8 first", ids)
	}
}

// A stored compaction reopens as it was shown live: one row (its own
// request, stored between its begin and end, is not a request of the
// transcript; the new context's tool list is not shown again), with the
// context summary folded into the row, and the requests numbered alike.
func TestStoredCompactionReopensAsOneRow(t *testing.T) {
	store := &trace.MemStore{}
	meta := Meta(time.Now())
	id := meta.Payload.SessionID()
	sess, _, err := Open(Options{Meta: &meta, Trace: trace.NewWriter(store, id, 1)})
	if err != nil {
		t.Fatal(err)
	}
	r := NewRunner(sess)
	allow := func(omni.Message) string { return omni.DecisionAllow }
	live := &Transcript{}
	live.AddPrompt("echo: one")
	for _, m := range collect(t, r, "echo: one", allow) {
		live.Apply(m)
	}
	ended := make(chan error, 1)
	if err := r.StartCompact(func(m omni.Message) { live.Apply(m) }, func(err error) { ended <- err }); err != nil {
		t.Fatal(err)
	}
	if err := <-ended; err != nil {
		t.Fatal(err)
	}
	live.AddPrompt("echo: two")
	for _, m := range collect(t, r, "echo: two", allow) {
		live.Apply(m)
	}
	recs, err := trace.History(context.Background(), store, id)
	if err != nil {
		t.Fatal(err)
	}
	back := &Transcript{}
	for _, m := range recs {
		back.ApplyRecord(m)
	}
	shape := func(tr *Transcript) (out []string) {
		for _, it := range tr.Items {
			s := string(it.Kind)
			if it.Request != nil {
				s += fmt.Sprint(" ", it.Request.N)
			}
			out = append(out, s)
		}
		return out
	}
	if l, b := shape(live), shape(back); !slices.Equal(l, b) {
		t.Errorf("reopened %v, live %v", b, l)
	}
	for _, it := range back.Items {
		if it.Kind == KindCompact && !strings.Contains(it.Body, "Context summary: The user asked: echo: one.") {
			t.Errorf("the compaction row %q lacks the context summary", it.Body)
		}
	}
}

// A session the scripted model made, resumed with a real provider's model,
// sends the workspace prompt, not the scripted model's; the scripted model
// resumed keeps its own, and a real model's session its prompt. The
// resumed meta is a copy: the Trace's stays as it was made.
func TestResumedScriptedSessionGetsTheWorkspacePromptWithARealModel(t *testing.T) {
	ctx := context.Background()
	store := &trace.MemStore{}
	meta := Meta(time.Now())
	id := meta.Payload.SessionID()
	sess, _, err := Open(Options{Pace: func(context.Context, time.Duration) bool { return true }, Meta: &meta, Trace: trace.NewWriter(store, id, 1)})
	if err != nil {
		t.Fatal(err)
	}
	collect(t, NewRunner(sess), "hello", func(omni.Message) string { return omni.DecisionAllow })
	res, err := trace.Resume(ctx, store, id, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	resumed := ResumeMeta(res.Meta, true)
	llm := promptLLM{system: make(chan string, 4)}
	sess, _, err = Open(Options{LLM: llm, Meta: &resumed, Resume: &res.Snapshot, Trace: res.Writer})
	if err != nil {
		t.Fatal(err)
	}
	collect(t, NewRunner(sess), "go on", func(omni.Message) string { return omni.DecisionAllow })
	if got := <-llm.system; got != WorkspacePrompt {
		t.Errorf("the real model of a resumed scripted session got the system prompt %q, want the workspace prompt", got)
	}
	if got := res.Meta.Payload.SystemPrompt(); got != SystemPrompt {
		t.Errorf("the stored meta's prompt became %q", got)
	}
	if m := ResumeMeta(res.Meta, false); m.Payload.SystemPrompt() != SystemPrompt {
		got := m.Payload.SystemPrompt()
		t.Errorf("the scripted model resumed: prompt %q", got)
	}
	own := ProviderMeta(time.Now(), "openai", "gpt-5", "")
	own.Payload.Edit().SystemPrompt = "Be brief."
	if m := ResumeMeta(own, true); m.Payload.SystemPrompt() != "Be brief." {
		got := m.Payload.SystemPrompt()
		t.Errorf("a real model's session resumed: prompt %q", got)
	}
}

// A session made with the system prompt Settings give keeps it: its model
// gets it, and so does the model of the session resumed from its Trace
// (ResumeMeta leaves a prompt of the user's alone), whatever Settings say
// by then. A blank prompt is the workspace prompt.
func TestProviderSessionKeepsItsOwnSystemPrompt(t *testing.T) {
	if blank := ProviderMeta(time.Now(), "openai", "gpt-5", " \n"); blank.Payload.SystemPrompt() != WorkspacePrompt {
		got := blank.Payload.SystemPrompt()
		t.Errorf("a blank prompt gave %q, want the workspace prompt", got)
	}
	ctx := context.Background()
	store := &trace.MemStore{}
	const own = "Answer in French."
	meta := ProviderMeta(time.Now(), "openai", "gpt-5", own)
	id := meta.Payload.SessionID()
	llm := promptLLM{system: make(chan string, 4)}
	sess, _, err := Open(Options{LLM: llm, Meta: &meta, Trace: trace.NewWriter(store, id, 1)})
	if err != nil {
		t.Fatal(err)
	}
	collect(t, NewRunner(sess), "hello", func(omni.Message) string { return omni.DecisionAllow })
	if got := <-llm.system; got != own {
		t.Errorf("the model got the system prompt %q, want %q", got, own)
	}
	res, err := trace.Resume(ctx, store, id, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	resumed := ResumeMeta(res.Meta, true)
	sess, _, err = Open(Options{LLM: llm, Meta: &resumed, Resume: &res.Snapshot, Trace: res.Writer})
	if err != nil {
		t.Fatal(err)
	}
	collect(t, NewRunner(sess), "go on", func(omni.Message) string { return omni.DecisionAllow })
	if got := <-llm.system; got != own {
		t.Errorf("the resumed session's model got the system prompt %q, want its own %q", got, own)
	}
}
