package playground

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

func TestParseDemoRefusesWithTheRuleAndField(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{``, "the demo script is not JSON"},
		{`  `, "the demo script is not JSON"},
		{`{"match": "x"}`, "must be a JSON array of rules, not an object"},
		{`"x"`, "must be a JSON array of rules, not a string"},
		{`[]`, "the demo script has no rules"},
		{"[\n{\"match\": \"a\", \"say\": \"b\"},\n", "not JSON: line 3: unexpected end of JSON input"},
		{"[\n  {\"match\": \"a\", \"say\": \"b\"},\n  {\"match\": \"c\", \"sya\": \"d\"}\n]", `rule 2 (line 3): unknown field "sya"; a rule has match, think, say, calls, then`},
		{`[3]`, "rule 1 (line 1): a rule must be an object, not a number"},
		{`[{"say": "b"}]`, "rule 1 (line 1): match: missing or empty"},
		{`[{"match": 3, "say": "b"}]`, "rule 1 (line 1): match: want a string, got a number"},
		{`[{"match": "a", "say": null}]`, "rule 1 (line 1): say: want a string, got null"},
		{`[{"match": "a"}]`, "rule 1 (line 1): nothing to answer: give say, think or calls"},
		{`[{"match": "/a(/", "say": "b"}]`, `rule 1 (line 1): match: bad regular expression "/a(/": missing closing ): "a("`},
		{`[{"match": "//", "say": "b"}]`, `rule 1 (line 1): match: bad regular expression "//": it is empty`},
		{`[{"match": "/a\n(/i", "say": "b"}]`, `rule 1 (line 1): match: bad regular expression "/a\n(/i": missing closing ): "(?i)a\n("`},
		{`[{"match": "/\u2028\\q/", "say": "b"}]`, `rule 1 (line 1): match: bad regular expression "/\u2028\\q/": invalid escape sequence: "\\q"`},
		{`[{"match": "a", "say": "b", "then": "c"}]`, "rule 1 (line 1): then: it is said after the calls' outputs, and this rule has no calls"},
		{`[{"match": "a", "calls": {}}]`, "rule 1 (line 1): calls: want an array, got an object"},
		{`[{"match": "a", "calls": ["read_file"]}]`, "rule 1 (line 1): calls[0]: a call must be an object, not a string"},
		{`[{"match": "a", "calls": [{"tool": "rm_rf"}]}]`, `rule 1 (line 1): calls[0].tool: unknown tool "rm_rf"; the playground's tools are count_lines, delete_file, edit_file, list_files, read_file, run_js, subagent, write_file`},
		{`[{"match": "a", "calls": [{"args": {}}]}]`, "rule 1 (line 1): calls[0].tool: missing"},
		{`[{"match": "a", "calls": [{"tool": "read_file", "arg": {}}]}]`, `rule 1 (line 1): calls[0]: unknown field "arg"; a call has tool and args`},
		{`[{"match": "a", "calls": [{"tool": "read_file"}]}]`, `rule 1 (line 1): calls[0] (read_file).args: missing "path"`},
		{`[{"match": "a", "calls": [{"tool": "read_file", "args": []}]}]`, "rule 1 (line 1): calls[0] (read_file).args: want an object, got an array"},
		{`[{"match": "a", "calls": [{"tool": "read_file", "args": {"path": 1}}]}]`, "rule 1 (line 1): calls[0] (read_file).args.path: want a string, got a number"},
		{`[{"match": "a", "calls": [{"tool": "read_file", "args": {"file": "x"}}]}]`, `rule 1 (line 1): calls[0] (read_file).args: unknown field "file"; the tool takes path`},
		{`[{"match": "a", "calls": [{"tool": "count_lines", "args": {"paths": ["a", 2]}}]}]`, "rule 1 (line 1): calls[0] (count_lines).args.paths[1]: want a string, got a number"},
		{`[{"match": "a", "calls": [{"tool": "count_lines", "args": {"paths": "a"}}]}]`, "rule 1 (line 1): calls[0] (count_lines).args.paths: want an array of strings, got a string"},
		{`[{"match": "a", "calls": [{"tool": "edit_file", "args": {"path": "a", "old_text": "", "new_text": "b"}}]}]`, "rule 1 (line 1): calls[0] (edit_file).args.old_text: must not be empty"},
		{`[{"match": "a", "calls": [{"tool": "list_files"}, {"tool": "write_file", "args": {"path": "a"}}]}]`, `rule 1 (line 1): calls[1] (write_file).args: missing "content"`},
		{"\xff", "the demo script is not UTF-8 text"},
		{"[" + strings.Repeat(`{"match": "a", "say": "b"},`, maxDemoRules) + `{"match": "a", "say": "b"}]`, "more than 1000 rules"},
		{`[{"match": "a", "calls": [` + strings.Repeat(`{"tool": "list_files"},`, maxDemoCalls) + `{"tool": "list_files"}]}]`, "rule 1 (line 1): calls: 17 calls; at most 16"},
		{`["` + strings.Repeat("x", MaxDemoBytes) + `"]`, "the demo script is 1048580 bytes; at most 1048576 (1 MiB)"},
	} {
		d, err := ParseDemo([]byte(c.file))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			short := c.file
			if len(short) > 80 {
				short = short[:80] + "…"
			}
			t.Errorf("ParseDemo(%q) = %v, %v; want an error with %q", short, d, err, c.want)
		}
	}
}

func TestParseDemoReadsRules(t *testing.T) {
	d, err := ParseDemo([]byte("\uFEFF" + `[
		{"match": "Hello", "say": "hi"},
		{"match": "/^count (\\w+)$/", "think": "t", "calls": [{"tool": "count_lines", "args": {"paths": []}}, {"tool": "list_files"}], "then": "done"},
		{"match": "/shout/i", "think": "only thinking"}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Rules) != 3 || d.Rules[1].Then != "done" || string(d.Rules[1].Calls[0].Args) != `{"paths":[]}` || string(d.Rules[1].Calls[1].Args) != `{}` {
		t.Fatalf("rules = %+v", d.Rules)
	}
	for _, c := range []struct {
		prompt string
		want   int // rule index; -1: none
	}{
		{"hello there", 0}, {"say HELLO", 0}, {"count words", 1}, {"Count words", -1}, {"count two words", -1},
		{"SHOUT", 2}, {"nothing", -1}, {"/shout/i", 2},
	} {
		r := d.find(c.prompt)
		if got := slices.IndexFunc(d.Rules, func(x DemoRule) bool { return &x == r }); r == nil && c.want != -1 || r != nil && r != &d.Rules[max(c.want, 0)] {
			t.Errorf("find(%q) = rule %v, want %d", c.prompt, got, c.want)
		}
	}
	// "/x" is no regexp: a substring.
	d, err = ParseDemo([]byte(`[{"match": "/etc", "say": "b"}]`))
	if err != nil || d.find("ls /etc/hosts") == nil {
		t.Fatalf("a match of one slash: %v", err)
	}
}

func TestExampleDemoParses(t *testing.T) {
	data, err := os.ReadFile("../examples/playground-demo.json")
	if err != nil {
		t.Fatal(err)
	}
	d, err := ParseDemo(data)
	if err != nil {
		t.Fatal(err)
	}
	if d.find("How long is the store?") == nil || d.find("What is a tool call?") == nil || d.find("take notes please") == nil {
		t.Error("the example's rules do not match the prompts its README text names")
	}
	// The README shows the file as it is.
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, _ := strings.Cut(string(readme), "**A demo script of your own.**")
	_, block, _ := strings.Cut(after, "```json\n")
	block, _, _ = strings.Cut(block, "```")
	if block != string(data) {
		t.Errorf("the README's demo script is not examples/playground-demo.json:\n%s", block)
	}
}

// A session with a demo script answers a prompt a rule matches from the
// rule: its thinking, answer and calls streamed as the model's own, the
// calls approved and run, then the rule's then; a prompt no rule matches
// gets the model's own script.
func TestModelAnswersFromADemoScript(t *testing.T) {
	d, err := ParseDemo([]byte(`[
		{"match": "lesson", "think": "The teacher's rule.", "say": "Reading the file.",
		 "calls": [{"tool": "read_file", "args": {"path": "go.mod"}}, {"tool": "write_file", "args": {"path": "out.md", "content": "# Out"}}],
		 "then": "The lesson is over."},
		{"match": "/^plain$/", "say": "Just words."},
		{"match": "summary", "calls": [{"tool": "list_files"}]}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	fs := NewMemFS(demoFiles)
	sess, _, err := Open(Options{Demo: d, FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	r := NewRunner(sess)
	var mu sync.Mutex
	var asked []string
	allow := func(call omni.Message) string {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, call.Payload.Name+" "+call.Payload.Arguments)
		return omni.DecisionAllow
	}
	msgs := collect(t, r, "Start the lesson", allow)
	checkDiscipline(t, msgs)
	var got []string
	for _, m := range msgs {
		p := m.Payload
		switch {
		case m.IsPartial() || m.Type != omni.TypeModelMsg:
		case p.Type == omni.Thinking:
			got = append(got, "thinking: "+p.Thinking)
		case p.Type == omni.Text:
			got = append(got, "text: "+p.Text)
		case p.Type == omni.ToolCall:
			got = append(got, "call: "+p.Name+" "+p.Arguments)
		}
	}
	want := []string{
		"thinking: The teacher's rule.", "text: Reading the file.",
		`call: read_file {"path":"go.mod"}`, `call: write_file {"path":"out.md","content":"# Out"}`,
		"text: The lesson is over.",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("the model's messages:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if mu.Lock(); len(asked) != 2 {
		t.Errorf("approvals asked: %q", asked)
	}
	mu.Unlock()
	if body, err := fs.Read(context.Background(), "out.md"); err != nil || body != "# Out" {
		t.Errorf("out.md = %q, %v: the call did not run", body, err)
	}

	if last := lastText(collect(t, r, "plain", allow)); last != "Just words." {
		t.Errorf("a rule without calls: %q", last)
	}
	// No then: the model's own summary of the outputs.
	if last := lastText(collect(t, r, "a summary", allow)); !strings.Contains(last, "The workspace holds") {
		t.Errorf("a rule without then: %q", last)
	}
	// No rule: the model's own script (a command here).
	if last := lastText(collect(t, r, "echo: mine", allow)); last != "mine" {
		t.Errorf("no rule: %q", last)
	}
}

// A subagent's child model answers from the script too.
func TestDemoScriptAnswersASubagent(t *testing.T) {
	d, err := ParseDemo([]byte(`[{"match": "/^the child's task$/", "say": "The child's answer."}]`))
	if err != nil {
		t.Fatal(err)
	}
	sess, _, err := Open(Options{Demo: d})
	if err != nil {
		t.Fatal(err)
	}
	msgs := collect(t, NewRunner(sess), "subagent: the child's task", func(omni.Message) string { return omni.DecisionAllow })
	for _, m := range msgs {
		if len(m.Origin) == 1 && !m.IsPartial() && m.Payload.Type == omni.Text && m.Payload.Role == omni.RoleAssistant && m.Payload.Text == "The child's answer." {
			return
		}
	}
	t.Fatalf("the child did not answer from the script: %v", kinds(msgs))
}

// A steering message that reaches the model with a rule's prompt is
// acknowledged, as the model's own script does.
func TestDemoRuleAcknowledgesSteering(t *testing.T) {
	d, _ := ParseDemo([]byte(`[{"match": "go", "say": "Going."}]`))
	m := NewModel(NewWorkspace(nil), nil)
	m.Demo = d
	var rec recorder
	in := []omni.Message{omni.UserText("go"), omni.UserText("[user_steering]faster[/user_steering]")}
	m.StreamGenerate(context.Background(), engine.GenerateParams{NewMessages: in}, rec.emit)
	var texts []string
	for _, m := range rec.all() {
		if !m.IsPartial() && m.Payload.Type == omni.Text {
			texts = append(texts, m.Payload.Text)
		}
	}
	if len(texts) != 2 || texts[0] != "Going." || !strings.Contains(texts[1], "You added: “faster”") {
		t.Errorf("texts = %q; want the rule's answer, then the steering acknowledged", texts)
	}
}

func lastText(msgs []omni.Message) string {
	last := ""
	for _, m := range msgs {
		if p := m.Payload; len(m.Origin) == 0 && !m.IsPartial() && m.Type == omni.TypeModelMsg && p.Type == omni.Text {
			last = p.Text
		}
	}
	return last
}
