package playground

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

func TestWordsAndLinesConcatenate(t *testing.T) {
	for _, s := range []string{"", "one", "one two  three\nfour\n", " lead", "a\n\nb", "日本語のテキストです。 次", "😀😀😀😀😀 x"} {
		if got := strings.Join(words(s), ""); got != s {
			t.Errorf("words(%q) joins to %q", s, got)
		}
		if got := strings.Join(lines(s), ""); got != s {
			t.Errorf("lines(%q) joins to %q", s, got)
		}
	}
}

func TestModelPromptCallsBothTools(t *testing.T) {
	ws := NewWorkspace(nil)
	m := NewModel(ws, nil)
	var rec recorder
	out := m.StreamGenerate(context.Background(), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("How big is store.go?")}}, rec.emit)
	if out.Status != omni.StatusCompleted {
		t.Fatalf("outcome = %+v", out)
	}
	msgs := rec.all()
	checkDiscipline(t, msgs)
	want := []string{omni.Thinking, omni.Text, "tool_call:call_1_1", "tool_call:call_1_2", omni.TokenUsage}
	if got := kinds(msgs); !slices.Equal(got, want) {
		t.Fatalf("complete messages = %v, want %v", got, want)
	}
	count := msgs[len(msgs)-2]
	if count.Payload.Name != ToolCountLines || count.Payload.Arguments != `{"paths":["internal/store/store.go"]}` {
		t.Errorf("count_lines call = %s %s", count.Payload.Name, count.Payload.Arguments)
	}
	if u := msgs[len(msgs)-1].Payload; u.Request().Output == 0 || u.Session().Total != u.Request().Total {
		t.Errorf("token_usage = %+v %+v", *u.Request(), *u.Session())
	}
}

// A request cut off by a reload leaves its calls out of the history a
// resumed model loads; their interrupted outputs come back as the next
// request's input, and new calls must not take their ids.
func TestModelNumbersPastCutOffCalls(t *testing.T) {
	m := NewModel(NewWorkspace(nil), nil)
	m.LoadHistory(context.Background(), []omni.Message{omni.UserText("write g.txt: ok")})
	var rec recorder
	in := []omni.Message{
		omni.ToolOutput("call_1_1", "[interrupted: process exited before the tool finished]", omni.StatusFailed),
		omni.UserText("How big is store.go?"),
	}
	m.StreamGenerate(context.Background(), engine.GenerateParams{NewMessages: in}, rec.emit)
	for _, k := range kinds(rec.all()) {
		if k == "tool_call:call_1_1" {
			t.Fatalf("a new call took the cut-off call's id: %v", kinds(rec.all()))
		}
	}
	if got := kinds(rec.all()); !slices.Contains(got, "tool_call:call_2_2") {
		t.Errorf("calls %v, want call_2_2 first", got)
	}
}

func TestModelSummarizesOutputs(t *testing.T) {
	ws := NewWorkspace(nil)
	m := NewModel(ws, nil)
	var rec recorder
	m.StreamGenerate(context.Background(), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("look around")}}, rec.emit)
	var outs []omni.Message
	for _, c := range rec.all() {
		if c.Payload.Type != omni.ToolCall {
			continue
		}
		var tr recorder
		if err := ws.ExecuteTool(context.Background(), engine.ToolRequest{ToolCall: c}, tr.emit); err != nil {
			t.Fatal(err)
		}
		got := tr.all()
		outs = append(outs, got[len(got)-1])
	}
	outs[0] = omni.ToolOutput(outs[0].Payload.ToolCallID, "Tool call denied by user.", omni.StatusAborted)
	// A failure is named by its message, not the stack trace's last line.
	outs = append(outs, omni.ToolOutput("call_9_9", "[tool error] Error: boom\n    at self.onmessage (eval-worker.js:23:34)", omni.StatusFailed))
	steer := omni.UserText("[user_steering]\nskip tests\n[/user_steering]")
	var rec2 recorder
	m.StreamGenerate(context.Background(), engine.GenerateParams{NewMessages: append(outs, steer)}, rec2.emit)
	msgs := rec2.all()
	checkDiscipline(t, msgs)
	if got, want := kinds(msgs), []string{omni.Thinking, omni.Text, omni.TokenUsage}; !slices.Equal(got, want) {
		t.Fatalf("complete messages = %v, want %v", got, want)
	}
	text := msgs[len(msgs)-2].Payload.Text
	total := 0
	for _, p := range ws.Paths() {
		b, _ := ws.FS.Read(context.Background(), p)
		total += strings.Count(b, "\n")
	}
	for _, want := range []string{"You denied `list_files`", "add up to " + strconv.Itoa(total) + " lines", "failed: [tool error] Error: boom\n", "“skip tests”"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary %q lacks %q", text, want)
		}
	}
	if u := msgs[len(msgs)-1].Payload; u.Session().Output <= u.Request().Output {
		t.Errorf("session tokens did not accumulate: %+v", *u.Session())
	}
}

// The summary quotes a tool's output line up to 200 characters, cut at a
// character's boundary: the card shows the whole output.
func TestModelSummaryQuotesLinesCut(t *testing.T) {
	long := "a" + strings.Repeat("😀", 300000)
	for _, c := range []struct {
		name, body, status, want string
	}{
		{"a result", "console\nresult: " + long, omni.StatusCompleted, "`run_js` answered: result: a" + strings.Repeat("😀", 191) + "…\n"},
		{"a failure", "Error: " + long + "\n    at x", omni.StatusFailed, "`run_js` failed: Error: a" + strings.Repeat("😀", 192) + "…\n"},
		{"a short line", "result: 5", omni.StatusCompleted, "`run_js` answered: result: 5"},
		{"200 characters", "r" + strings.Repeat("é", 199), omni.StatusCompleted, "`run_js` answered: r" + strings.Repeat("é", 199)},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := NewModel(NewWorkspace(nil), nil)
			var rec recorder
			m.StreamGenerate(context.Background(), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("js: 1")}}, rec.emit)
			calls := rec.all()
			id := calls[len(calls)-2].Payload.ToolCallID
			var rec2 recorder
			m.StreamGenerate(context.Background(), engine.GenerateParams{NewMessages: []omni.Message{omni.ToolOutput(id, c.body, c.status)}}, rec2.emit)
			msgs := rec2.all()
			text := msgs[len(msgs)-2].Payload.Text
			if !strings.Contains(text+"\n", c.want) || !utf8.ValidString(text) {
				t.Errorf("summary %.300q lacks %.300q", text, c.want)
			}
			if len(text) > 2000 {
				t.Errorf("summary of %d bytes", len(text))
			}
		})
	}
}

func TestModelAbortClosesFragment(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := NewModel(NewWorkspace(nil), cancelAfter(3, cancel))
	var rec recorder
	out := m.StreamGenerate(ctx, engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("hi")}}, rec.emit)
	if out.Status != omni.StatusAborted {
		t.Fatalf("outcome = %+v, want aborted", out)
	}
	msgs := rec.all()
	checkDiscipline(t, msgs)
	last := msgs[len(msgs)-1].Payload
	if last.Type != omni.Thinking || last.StopReason != omni.StatusAborted {
		t.Fatalf("last message = %+v, want an aborted thinking", last)
	}
	stop := msgs[len(msgs)-2].Payload
	if stop.EventType != omni.EventStop || stop.StopReason != omni.StatusAborted {
		t.Errorf("fragment closed with %+v", stop)
	}
}

// After a reload cut a task off, its prompt is carried over before the
// next one (ENGINE.md §17): the command is the latest prompt's ("stream
// 3000\nhelp" was no command, and the default script ran).
func TestModelReadsTheCommandOfTheLatestPrompt(t *testing.T) {
	for _, carried := range []string{"stream 3000", "fail: x"} {
		m := NewModel(NewWorkspace(nil), nil)
		var rec recorder
		out := m.StreamGenerate(context.Background(), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText(carried), omni.UserText("help")}}, rec.emit)
		if out.Status != omni.StatusCompleted {
			t.Fatalf("after %q: outcome %+v", carried, out)
		}
		var text string
		for _, msg := range rec.all() {
			if msg.IsModel(omni.Text) {
				text += msg.Payload.Text
			}
		}
		if !strings.HasPrefix(text, "I understand these commands:") {
			t.Errorf("after %q, help answered %q", carried, text)
		}
	}
}

// Arguments stream in pieces of whole characters: a Japanese file's
// content was cut every 12 bytes, in the middle of a character, and each
// delta crossed to the page with U+FFFD.
func TestModelStreamsWholeCharacters(t *testing.T) {
	for _, prompt := range []string{"write notes.md: # こんにちは、世界。日本語のメモです", "write e.txt: 👨‍👩‍👧‍👦🇯🇵😀😀😀", "write a.txt: مرحبا بالعالم"} {
		m := NewModel(NewWorkspace(nil), nil)
		var rec recorder
		out := m.StreamGenerate(context.Background(), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText(prompt)}}, rec.emit)
		if out.Status != omni.StatusCompleted {
			t.Fatalf("%q: outcome %+v", prompt, out)
		}
		checkDiscipline(t, rec.all())
	}
}

// A reply without spaces (Japanese, Chinese) streams in pieces of a few
// whole characters, as its words would: it came as one delta.
func TestModelStreamsTextWithoutSpaces(t *testing.T) {
	text := "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。"
	m := NewModel(NewWorkspace(nil), nil)
	var rec recorder
	out := m.StreamGenerate(context.Background(), engine.GenerateParams{NewMessages: []omni.Message{omni.UserText("echo: " + text)}}, rec.emit)
	if out.Status != omni.StatusCompleted {
		t.Fatalf("outcome %+v", out)
	}
	msgs := rec.all()
	checkDiscipline(t, msgs)
	var deltas []string
	for _, m := range msgs {
		if m.Payload.Type == omni.PartialText && m.Payload.EventType == omni.EventDelta {
			deltas = append(deltas, m.Payload.Body())
		}
	}
	if strings.Join(deltas, "") != text || len(deltas) < 8 {
		t.Errorf("the text streamed as %q", deltas)
	}
	for _, d := range deltas {
		if n := utf8.RuneCountInString(d); n > 4 {
			t.Errorf("a delta of %d characters: %q", n, d)
		}
	}
}

func TestArgChunksJoin(t *testing.T) {
	for _, s := range []string{"", "short", `{"path":"notes.md","content":"# こんにちは"}`, strings.Repeat("😀", 20), "\xff\xfe" + strings.Repeat("a", 30)} {
		parts := argChunks(s)
		if got := strings.Join(parts, ""); got != s {
			t.Errorf("argChunks(%q) joins to %q", s, got)
		}
		for _, p := range parts {
			if (p == "" && s != "") || (utf8.ValidString(s) && !utf8.ValidString(p)) {
				t.Errorf("argChunks(%q) has the piece %q", s, p)
			}
		}
	}
}
