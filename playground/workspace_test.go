package playground

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

func TestWorkspaceTools(t *testing.T) {
	ws := NewWorkspace(nil)
	tests := []struct {
		name, tool, args string
		wantErr          string
		wantOut          []string // substrings of the complete output
	}{
		{"list all", ToolListFiles, `{"dir":""}`, "", []string{"README.md", "internal/store/store.go", "6 files"}},
		{"list dir", ToolListFiles, `{"dir":"internal/store"}`, "", []string{"store_test.go", "2 files"}},
		{"no args", ToolListFiles, ``, "", []string{"6 files"}},
		{"count one", ToolCountLines, `{"paths":["go.mod"]}`, "", []string{"go.mod", "total                            3"}},
		{"count all", ToolCountLines, `{"paths":[]}`, "", []string{"cmd/notes/main.go", "total"}},
		{"missing file", ToolCountLines, `{"paths":["nope.go"]}`, `no such file: "nope.go"`, nil},
		// count_lines takes a path as read_file does, and refuses what it refuses.
		{"count a rooted path", ToolCountLines, `{"paths":["/go.mod"]}`, "", []string{"go.mod                           3\n", "total                            3"}},
		{"count outside", ToolCountLines, `{"paths":["go.mod","../go.mod"]}`, `bad path "../go.mod"`, nil},
		{"count an empty path", ToolCountLines, `{"paths":[""]}`, `bad path ""`, nil},
		{"unknown", "rm_rf", `{}`, `unknown tool "rm_rf"`, nil},
		// Tools a workspace does not offer say so, not that the arguments were wrong.
		{"no subagents", ToolSubagent, `{"task":"look around"}`, "subagent: this workspace has no subagents (the tool is not offered here)", nil},
		{"no JavaScript", ToolRunJS, `{"code":"1"}`, "run_js: this workspace runs no JavaScript (the tool is not offered here)", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var rec recorder
			call := omni.ToolCallMsg("c1", tc.tool, tc.args)
			err := ws.ExecuteTool(context.Background(), engine.ToolRequest{ToolCall: call}, rec.emit)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if n := len(rec.all()); n != 0 {
					t.Errorf("failed call emitted %d messages", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			msgs := rec.all()
			checkDiscipline(t, msgs)
			out := msgs[len(msgs)-1].Payload
			if out.Type != omni.ToolCallOutput || out.ToolCallID != "c1" || out.StopReason != omni.StatusCompleted {
				t.Fatalf("last message = %+v", out)
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out.Output, w) {
					t.Errorf("output %q lacks %q", out.Output, w)
				}
			}
		})
	}
}

// Arguments that are not the tool's get a failed output naming what was
// wrong, as a tool() of the JavaScript API says it; anything but a JSON
// object is refused (null listed every file as if it were {}).
func TestWorkspaceInvalidArguments(t *testing.T) {
	ws := NewWorkspace(nil)
	for _, tc := range []struct{ tool, args, want string }{
		{ToolCountLines, `{"paths":3}`, "count_lines: $.paths: want array, got number"},
		{ToolReadFile, `{"path":true}`, "read_file: $.path: want string, got boolean"},
		{ToolListFiles, `null`, "list_files: $: want object, got null"},
		{ToolListFiles, ` [1]`, "list_files: $: want object, got an array"},
		{ToolListFiles, `5`, "list_files: $: want object, got number"},
		{ToolListFiles, `"x"`, "list_files: $: want object, got string"},
		{ToolListFiles, `false`, "list_files: $: want object, got boolean"},
		{ToolListFiles, `{"dir":`, "list_files: the arguments are not JSON (unexpected end of JSON input)"},
		{ToolListFiles, "\u00a0{}", "list_files: the arguments are not JSON (invalid character 'Â' looking for beginning of value)"}, // JSON.parse refuses it too
		{ToolListFiles, nested(1001), "list_files: the arguments nest deeper than 1000 levels"},
		{ToolListFiles, nested(20000), "list_files: the arguments nest deeper than 1000 levels"},
		{ToolListFiles, `{"path":"\\\"[[[", "x":` + nested(1000)[5:len(nested(1000))-1] + `, "dir":5}`, "list_files: $.dir: want string, got number"},
	} {
		var rec recorder
		err := ws.ExecuteTool(context.Background(), engine.ToolRequest{ToolCall: omni.ToolCallMsg("c1", tc.tool, tc.args)}, rec.emit)
		msgs := rec.all()
		if err != nil || len(msgs) != 1 {
			t.Fatalf("%s %s: err %v, %d messages", tc.tool, tc.args, err, len(msgs))
		}
		if p := msgs[0].Payload; p.Type != omni.ToolCallOutput || p.ToolCallID != "c1" || p.StopReason != omni.StatusFailed || p.Output != "[invalid arguments] "+tc.want {
			t.Errorf("%s %s: got %+v, want output %q", tc.tool, tc.args, p, "[invalid arguments] "+tc.want)
		}
	}
}

// nested is arguments n levels deep: {"x":[[…["a"]…]]}.
func nested(n int) string {
	return `{"x":` + strings.Repeat("[", n-1) + `"a"` + strings.Repeat("]", n-1) + "}"
}

func TestWorkspaceAbort(t *testing.T) {
	for _, n := range []int{0, 2} {
		ctx, cancel := context.WithCancel(context.Background())
		ws := NewWorkspace(cancelAfter(n, cancel))
		var rec recorder
		if err := ws.ExecuteTool(ctx, engine.ToolRequest{ToolCall: omni.ToolCallMsg("c1", ToolListFiles, "")}, rec.emit); err != nil {
			t.Fatal(err)
		}
		msgs := rec.all()
		checkDiscipline(t, msgs)
		out := msgs[len(msgs)-1].Payload
		if out.Type != omni.ToolCallOutput || out.StopReason != omni.StatusAborted || !strings.HasSuffix(out.Output, interrupted) {
			t.Errorf("after %d lines: last message = %+v", n, out)
		}
		if n == 2 && strings.Count(out.Output, "\n") != 2 {
			t.Errorf("after 2 lines: output %q", out.Output)
		}
	}
}

// ReadsOnly names exactly the tools that only read, among every tool a
// workspace offers (a server's read-only mode allows them, T-13).
func TestReadsOnly(t *testing.T) {
	ws := NewWorkspace(nil)
	ws.Eval = func(context.Context, string, time.Duration) (EvalResult, error) { return EvalResult{}, nil }
	ws.Subagent = func(context.Context, engine.ToolRequest, string, func(omni.Message)) (string, error) { return "", nil }
	want := map[string]bool{ToolListFiles: true, ToolCountLines: true, ToolReadFile: true}
	tools := ws.Tools()
	if len(tools) != 8 {
		t.Fatalf("%d tools, want 8: a new tool needs its place in ReadsOnly", len(tools))
	}
	for _, d := range tools {
		if got := ReadsOnly(d.Name); got != want[d.Name] {
			t.Errorf("ReadsOnly(%s) = %v, want %v", d.Name, got, want[d.Name])
		}
	}
}

// A long output streams in at most maxOutputDeltas deltas, each of whole
// lines, so its pacing stays a few seconds: a 5,000-line file, or a
// run_js printing 1,000 lines, waited 90 ms a line (7.5 minutes, 90 s).
// A short one still streams a line a delta.
func TestWorkspaceLongOutputPacing(t *testing.T) {
	var big strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&big, "line %d\n", i)
	}
	for _, tc := range []struct {
		name, file string
		min, max   int // deltas
	}{
		{"long", big.String(), maxOutputDeltas / 2, maxOutputDeltas},
		{"short", "a\nb\nc", 3, 3},
	} {
		waits := 0
		ws := &Workspace{FS: NewMemFS(map[string]string{"f.txt": tc.file}), LineDelay: 90 * time.Millisecond,
			Pace: func(context.Context, time.Duration) bool { waits++; return true }}
		var rec recorder
		if err := ws.ExecuteTool(context.Background(), engine.ToolRequest{ToolCall: omni.ToolCallMsg("c1", ToolReadFile, `{"path":"f.txt"}`)}, rec.emit); err != nil {
			t.Fatal(err)
		}
		msgs := rec.all()
		checkDiscipline(t, msgs)
		deltas := 0
		for _, m := range msgs {
			if m.Payload.Type == omni.PartialToolCallOutput && m.Payload.EventType == omni.EventDelta {
				deltas++
				if d := m.Payload.Output; !strings.HasSuffix(d, "\n") && !strings.HasSuffix(tc.file, d) {
					t.Errorf("%s: delta %q cuts a line", tc.name, d)
				}
			}
		}
		if deltas < tc.min || deltas > tc.max || waits != deltas {
			t.Errorf("%s: %d deltas after %d waits, want %d to %d, one wait each", tc.name, deltas, waits, tc.min, tc.max)
		}
		if out := msgs[len(msgs)-1].Payload; out.Output != tc.file || out.StopReason != omni.StatusCompleted {
			t.Errorf("%s: output of %d bytes (%s), want the file's %d", tc.name, len(out.Output), out.StopReason, len(tc.file))
		}
	}
}

// The workspace in memory (a browser that refuses the page its Origin
// Private File System) keeps a path a file or a directory, as OPFS does,
// and says so in OPFS's words: it held "notes" and "notes/a.md" both.
func TestMemFSFileOrDirectory(t *testing.T) {
	ws := &Workspace{FS: NewMemFS(map[string]string{"notes": "x", "dir/a.md": "a"})}
	for _, tc := range []struct{ tool, args, want string }{
		{ToolWriteFile, `{"path":"notes/a.md","content":"y"}`, `no such file: "notes/a.md" ("notes" is a file, not a directory)`},
		{ToolWriteFile, `{"path":"notes/deeper/a.md","content":"y"}`, `no such file: "notes/deeper/a.md" ("notes" is a file, not a directory)`},
		{ToolWriteFile, `{"path":"dir","content":"y"}`, `not a file: "dir" is a directory`},
		{ToolReadFile, `{"path":"dir"}`, `not a file: "dir" is a directory`},
		{ToolReadFile, `{"path":"notes/a.md"}`, `no such file: "notes/a.md" ("notes" is a file, not a directory)`},
		{ToolDeleteFile, `{"path":"dir"}`, `not a file: "dir" is a directory`},
	} {
		var rec recorder
		err := ws.ExecuteTool(context.Background(), engine.ToolRequest{ToolCall: omni.ToolCallMsg("c1", tc.tool, tc.args)}, rec.emit)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s %s: %v, want %q", tc.tool, tc.args, err, tc.want)
		}
	}
	if got := ws.Paths(); !reflect.DeepEqual(got, []string{"dir/a.md", "notes"}) {
		t.Errorf("files %q, want the two it began with", got)
	}
}

// Deleting a directory's last file leaves no directory: its path takes a
// file, in memory as in OPFS (which kept the emptied directory, and a
// write_file of its path failed, "not a file").
func TestMemFSDeleteFreesTheDirectory(t *testing.T) {
	ws := &Workspace{FS: NewMemFS(map[string]string{"notes/deep/a.md": "a", "notes/b.md": "b"})}
	for _, s := range []struct{ tool, args, want string }{
		{ToolDeleteFile, `{"path":"notes/deep/a.md"}`, "deleted notes/deep/a.md\n"},
		{ToolWriteFile, `{"path":"notes/deep","content":"d"}`, "wrote 1 bytes to notes/deep\n"},
		{ToolWriteFile, `{"path":"notes","content":"n"}`, ""},
		{ToolDeleteFile, `{"path":"notes/b.md"}`, "deleted notes/b.md\n"},
		{ToolDeleteFile, `{"path":"notes/deep"}`, "deleted notes/deep\n"},
		{ToolWriteFile, `{"path":"notes","content":"n"}`, "wrote 1 bytes to notes\n"},
	} {
		out, err := runTool(t, ws, s.tool, s.args)
		if s.want == "" {
			if err == nil || err.Error() != `not a file: "notes" is a directory` {
				t.Errorf("%s %s: %q, %v; want the directory refused", s.tool, s.args, out, err)
			}
			continue
		}
		if err != nil || out != s.want {
			t.Errorf("%s %s: %q, %v; want %q", s.tool, s.args, out, err, s.want)
		}
	}
	if got := ws.Paths(); !reflect.DeepEqual(got, []string{"notes"}) {
		t.Errorf("files %q, want notes", got)
	}
}
