package playground

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

func runTool(t *testing.T, ws *Workspace, name, args string) (string, error) {
	t.Helper()
	var rec recorder
	err := ws.ExecuteTool(context.Background(), engine.ToolRequest{ToolCall: omni.ToolCallMsg("c", name, args)}, rec.emit)
	if err != nil {
		return "", err
	}
	msgs := rec.all()
	checkDiscipline(t, msgs)
	return msgs[len(msgs)-1].Payload.Output, nil
}

func TestFileTools(t *testing.T) {
	ws := &Workspace{FS: NewMemFS(nil)}
	changes := 0
	ws.OnChange = func() { changes++ }
	steps := []struct{ tool, args, want, err string }{
		{ToolWriteFile, `{"path":"notes/a.md","content":"one two one"}`, "wrote 11 bytes to notes/a.md", ""},
		{ToolReadFile, `{"path":"notes/a.md"}`, "one two one", ""},
		{ToolEditFile, `{"path":"notes/a.md","old_text":"one","new_text":"1"}`, "", "occurs 2 times"},
		{ToolEditFile, `{"path":"notes/a.md","old_text":"three","new_text":"3"}`, "", "does not occur"},
		{ToolEditFile, `{"path":"notes/a.md","old_text":"two","new_text":"2"}`, "edited notes/a.md", ""},
		{ToolReadFile, `{"path":"notes/a.md"}`, "one 2 one", ""},
		{ToolListFiles, `{}`, "notes/a.md", ""},
		{ToolDeleteFile, `{"path":"notes/a.md"}`, "deleted notes/a.md", ""},
		{ToolReadFile, `{"path":"notes/a.md"}`, "", "no such file"},
		{ToolWriteFile, `{"path":"../etc/passwd","content":""}`, "", "bad path"},
		{ToolWriteFile, `{"path":".hidden","content":""}`, "", "bad path"},
		{ToolWriteFile, `{"path":"x"}`, "", "want"},
		{ToolRunJS, `{"code":"1"}`, "", "run_js"},
	}
	for i, s := range steps {
		out, err := runTool(t, ws, s.tool, s.args)
		if s.err != "" {
			if err == nil || !strings.Contains(err.Error(), s.err) {
				t.Errorf("step %d %s: err %v, want %q", i, s.tool, err, s.err)
			}
			continue
		}
		if err != nil || !strings.Contains(out, s.want) {
			t.Errorf("step %d %s: %q, %v; want %q", i, s.tool, out, err, s.want)
		}
	}
	if changes != 3 {
		t.Errorf("OnChange called %d times, want 3", changes)
	}
}

func TestRunJSTool(t *testing.T) {
	ws := &Workspace{FS: NewMemFS(nil), Eval: func(ctx context.Context, code string, timeout time.Duration) (EvalResult, error) {
		switch code {
		case "loop":
			return EvalResult{}, context.DeadlineExceeded
		case "throw":
			return EvalResult{Console: []string{"before"}, Error: "ReferenceError: x is not defined"}, nil
		}
		return EvalResult{Console: []string{"hi"}, Result: "2"}, nil
	}}
	out, err := runTool(t, ws, ToolRunJS, `{"code":"1+1"}`)
	if err != nil || out != "hi\nresult: 2\n" {
		t.Errorf("run_js: %q, %v", out, err)
	}
	// Code that throws: the output keeps the console and the error, and
	// its stop_reason (the stop of its fragment and the complete output)
	// is "failed".
	var rec recorder
	if err := ws.ExecuteTool(context.Background(), engine.ToolRequest{ToolCall: omni.ToolCallMsg("c", ToolRunJS, `{"code":"throw"}`)}, rec.emit); err != nil {
		t.Fatal(err)
	}
	msgs := rec.all()
	checkDiscipline(t, msgs)
	last, stop := msgs[len(msgs)-1].Payload, msgs[len(msgs)-2].Payload
	if last.Type != omni.ToolCallOutput || last.StopReason != omni.StatusFailed || last.Output != "before\nerror: ReferenceError: x is not defined\n" {
		t.Errorf("run_js that throws: %s %q %q, want a failed tool_call_output with the error", last.Type, last.StopReason, last.Output)
	}
	if stop.EventType != omni.EventStop || stop.StopReason != omni.StatusFailed {
		t.Errorf("run_js that throws: fragment ends %s %q, want stop failed", stop.EventType, stop.StopReason)
	}
	if _, err := runTool(t, ws, ToolRunJS, `{"code":"loop"}`); err == nil {
		t.Error("run_js: a failed evaluation is no error")
	}
	names := map[string]bool{}
	for _, d := range ws.Tools() {
		names[d.Name] = true
		if !strings.HasPrefix(string(d.Parameters), `{"type":"object"`) {
			t.Errorf("%s: schema %s", d.Name, d.Parameters)
		}
	}
	if !names[ToolRunJS] || names[ToolSubagent] {
		t.Errorf("tools %v", names)
	}
}

// run drives a session to the end with every call allowed.
func run(t *testing.T, s *engine.Session, prompt string) []omni.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	seq, err := s.Run(ctx, []omni.Message{omni.UserText(prompt)}, engine.RunOptions{Approve: func(context.Context, omni.Message) (engine.Decision, error) {
		return omni.DecisionAllow, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	var out []omni.Message
	for m := range seq {
		out = append(out, m)
	}
	return out
}

func TestSubagentNestedCards(t *testing.T) {
	var links [][2]string
	s, _, err := Open(Options{OnSubagent: func(child, call string) { links = append(links, [2]string{child, call}) }})
	if err != nil {
		t.Fatal(err)
	}
	tr := &Transcript{}
	msgs := run(t, s, "subagent: look around")
	for _, m := range msgs {
		if m.Type == omni.TypeSessionMeta && len(m.Origin) == 1 && len(links) == 1 {
			tr.Link(links[0][0], links[0][1])
		}
		tr.Apply(m)
	}
	if len(links) != 1 {
		t.Fatalf("links %v", links)
	}
	parent := tr.tools[links[0][1]]
	if parent == nil || parent.Sub == nil {
		t.Fatalf("no nested transcript in the parent's card: %+v", parent)
	}
	child := parent.Sub
	if got := child.Path(); len(got) != 1 || got[0] != links[0][0] {
		t.Errorf("child path %v", got)
	}
	// The child's first call has the same id as the parent's (call_1_1):
	// both cards exist, each in its own transcript.
	if child.tools["call_1_1"] == nil || tr.tools["call_1_1"] == nil || child.tools["call_1_1"] == tr.tools["call_1_1"] {
		t.Fatalf("cards: parent %v child %v", tr.tools, child.tools)
	}
	if c := tr.tools["call_1_1"].Tool; c.Name != ToolSubagent || !strings.Contains(c.Output, "add up to") {
		t.Errorf("parent card %+v", c)
	}
	if c := child.tools["call_1_1"].Tool; c.Name != ToolListFiles || c.Decision != omni.DecisionAllow {
		t.Errorf("child card %+v", c)
	}
}

func TestFailFirstRetries(t *testing.T) {
	s, _, err := Open(Options{ReconnectBackoffMs: -1})
	if err != nil {
		t.Fatal(err)
	}
	var statuses []string
	for _, m := range run(t, s, "fail: echo: ok") {
		if m.Payload.Type == omni.RequestEnd {
			statuses = append(statuses, m.Payload.Status())
		}
	}
	if strings.Join(statuses, ",") != "failed,completed" {
		t.Errorf("request_end statuses %v", statuses)
	}
}

func TestCompactionAndResumeHistory(t *testing.T) {
	s, _, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	run(t, s, "echo: hello")
	if c := s.Compactability(); c != engine.CompactOK {
		t.Fatalf("compactability %s", c)
	}
	r, err := s.Compact(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tr := &Transcript{}
	for {
		m, ok := r.Next()
		if !ok {
			break
		}
		tr.Apply(m)
	}
	var compact *Item
	for _, it := range tr.Items {
		if it.Kind == KindCompact {
			if compact != nil {
				t.Error("two compaction items")
			}
			compact = it
		}
	}
	if compact == nil || compact.StopReason != omni.StatusCompleted || compact.Streaming {
		t.Fatalf("compaction item %+v", compact)
	}

	m := NewModel(NewWorkspace(nil), nil)
	m.LoadHistory(context.Background(), []omni.Message{omni.ToolCallMsg("call_3_5", ToolListFiles, "{}")})
	if st := m.newCall(ToolReadFile, nil); st.id != "call_4_6" && st.id != "call_3_6" {
		t.Errorf("after history, new call id %s", st.id)
	}
}

func TestApplyRecordShowsPrompts(t *testing.T) {
	tr := &Transcript{}
	for _, m := range []omni.Message{Meta(time.Now()), omni.UserText("hi there"), omni.RequestBeginMsg(), omni.AssistantText("hello", "completed")} {
		tr.ApplyRecord(m)
	}
	if len(tr.Items) != 3 || tr.Items[0].Kind != KindPrompt || tr.Items[0].Body != "hi there" || tr.Items[2].Body != "hello" {
		t.Errorf("items %+v", tr.Items)
	}
}

func TestInterrupt(t *testing.T) {
	tr := &Transcript{}
	for _, m := range seedTimeline()[:12] { // cut inside the first tool call's arguments
		tr.Apply(m)
	}
	tr.Interrupt()
	for _, it := range tr.Items {
		if it.Streaming || it.Kind == KindRequest && it.Request.Status != "interrupted" || it.Tool != nil && (it.Tool.OutputStop != "interrupted" || it.Tool.ArgsStreaming) {
			t.Errorf("item left open: %+v %+v %+v", it, it.Request, it.Tool)
		}
	}
}

// A subagent cut off with its parent: its request and its waiting call are
// interrupted too, not left streaming.
func TestInterruptSubagent(t *testing.T) {
	tr := &Transcript{}
	sub := func(m omni.Message) omni.Message { m.Origin = []string{"child"}; return m }
	for _, m := range []omni.Message{
		omni.RequestBeginMsg(),
		omni.ToolCallMsg("S", "run_subagent", `{"prompt":"look around"}`),
		omni.ApprovalDecisionMsg("allow", "S"),
		sub(omni.RequestBeginMsg()),
		sub(omni.ToolCallMsg("L", "list_files", `{}`)),
	} {
		tr.Apply(m)
	}
	tr.Interrupt()
	c := tr.Find([]string{"child"})
	if c == nil {
		t.Fatal("no child transcript")
	}
	kinds := map[Kind]int{}
	for _, it := range c.Items {
		kinds[it.Kind]++
		if it.Streaming || it.Kind == KindRequest && it.Request.Status != "interrupted" || it.Tool != nil && it.Tool.OutputStop != "interrupted" {
			t.Errorf("the subagent's item left open: %+v %+v %+v", it, it.Request, it.Tool)
		}
	}
	if kinds[KindRequest] != 1 || kinds[KindTool] != 1 {
		t.Errorf("the subagent's items %v, want its request and its call", kinds)
	}
}

// A path holding a control character (U+0000 to U+001F, U+007F) is
// refused by every tool, naming it, and nothing is written: OPFS took
// "notes/a\nb.md", which list_files then showed as two lines.
func TestControlCharactersInPaths(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"notes/a\nb.md", `bad path "notes/a\nb.md": a control character (U+000A) at byte 7`},
		{"a\x00", `bad path "a\x00": a control character (U+0000) at byte 1`},
		{"tab\there", `bad path "tab\there": a control character (U+0009) at byte 3`},
		{"del\x7f/x.md", `bad path "del\x7f/x.md": a control character (U+007F) at byte 3`},
		{"\x1f", `bad path "\x1f": a control character (U+001F) at byte 0`},
	} {
		fs := NewMemFS(map[string]string{"keep.md": "k"})
		ws := &Workspace{FS: fs}
		arg, _ := json.Marshal(tc.path)
		for _, call := range []struct{ tool, args string }{
			{ToolWriteFile, `{"path":` + string(arg) + `,"content":"x"}`},
			{ToolReadFile, `{"path":` + string(arg) + `}`},
			{ToolEditFile, `{"path":` + string(arg) + `,"old_text":"x","new_text":"y"}`},
			{ToolDeleteFile, `{"path":` + string(arg) + `}`},
			{ToolCountLines, `{"paths":[` + string(arg) + `]}`},
			{ToolListFiles, `{"dir":` + string(arg) + `}`},
		} {
			if _, err := runTool(t, ws, call.tool, call.args); err == nil || err.Error() != tc.want {
				t.Errorf("%s %q: err %v, want %q", call.tool, tc.path, err, tc.want)
			}
		}
		if got, _ := fs.List(context.Background()); len(got) != 1 || got[0].Path != "keep.md" {
			t.Errorf("%q: the workspace holds %v", tc.path, got)
		}
	}
}
