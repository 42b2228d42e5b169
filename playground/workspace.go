package playground

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// Tool names of the workspace.
const (
	ToolListFiles  = "list_files"
	ToolCountLines = "count_lines"
	ToolReadFile   = "read_file"
	ToolWriteFile  = "write_file"
	ToolEditFile   = "edit_file"
	ToolDeleteFile = "delete_file"
	ToolRunJS      = "run_js"
	ToolSubagent   = "subagent"
)

// ReadsOnly reports whether the workspace's tool of that name only reads
// (its permission is r): list_files, count_lines and read_file. A
// server's read-only approval mode allows these and asks for the rest
// (TRANSPORT.md T-13); run_js runs code and subagent hands a task on, so
// neither counts.
func ReadsOnly(tool string) bool {
	return tool == ToolListFiles || tool == ToolCountLines || tool == ToolReadFile
}

// maxOutputDeltas is how many deltas a tool's output streams at most: a
// long one streams several lines a delta, so its pacing lasts at most
// maxOutputDeltas line delays (a 5,000-line file waited 90 ms a line,
// 7.5 minutes, whatever the model).
const maxOutputDeltas = 64

// interrupted is the line a tool appends when it is aborted (ENGINE.md E-6.8).
const interrupted = "[interrupted: tool aborted by user]"

// FileInfo is one file of a workspace.
type FileInfo struct {
	Path string
	Size int
}

// FS is a workspace's file system: flat paths with "/" separators. The
// browser's is the Origin Private File System (package web/opfs); tests
// and Node use [MemFS]. Implementations are safe for concurrent use.
type FS interface {
	List(ctx context.Context) ([]FileInfo, error) // sorted by path
	Read(ctx context.Context, path string) (string, error)
	Write(ctx context.Context, path, content string) error
	Delete(ctx context.Context, path string) error
}

// MemFS is an [FS] in memory. As in OPFS, a path is a file or a
// directory, never both.
type MemFS struct {
	mu    sync.Mutex
	files map[string]string
}

// NewMemFS returns a MemFS holding a copy of files.
func NewMemFS(files map[string]string) *MemFS {
	m := &MemFS{files: map[string]string{}}
	for k, v := range files {
		m.files[k] = v
	}
	return m
}

// List implements FS.
func (m *MemFS) List(context.Context) ([]FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]FileInfo, 0, len(m.files))
	for p, b := range m.files {
		out = append(out, FileInfo{p, len(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// kind refuses p where OPFS would: a directory of p's path is a file, or p
// is a directory (the path of a file in it). Its caller holds m.mu.
func (m *MemFS) kind(p string) error {
	for i := range len(p) {
		if p[i] == '/' {
			if _, ok := m.files[p[:i]]; ok {
				return fmt.Errorf("no such file: %q (%q is a file, not a directory)", p, p[:i])
			}
		}
	}
	for f := range m.files {
		if strings.HasPrefix(f, p+"/") {
			return fmt.Errorf("not a file: %q is a directory", p)
		}
	}
	return nil
}

// Read implements FS.
func (m *MemFS) Read(_ context.Context, p string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.kind(p); err != nil {
		return "", err
	}
	b, ok := m.files[p]
	if !ok {
		return "", fmt.Errorf("no such file: %q", p)
	}
	return b, nil
}

// Write implements FS.
func (m *MemFS) Write(_ context.Context, p, content string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.kind(p); err != nil {
		return err
	}
	m.files[p] = content
	return nil
}

// Delete implements FS.
func (m *MemFS) Delete(_ context.Context, p string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.kind(p); err != nil {
		return err
	}
	if _, ok := m.files[p]; !ok {
		return fmt.Errorf("no such file: %q", p)
	}
	delete(m.files, p)
	return nil
}

// DemoFiles returns the demo workspace's files: a small Go project.
func DemoFiles() map[string]string { return demoFiles }

// CleanPath checks a workspace path from a tool's arguments and returns it
// cleaned: relative, "/"-separated, no "." or ".." segments, no empty or
// dot-led segment, at most 255 bytes a segment, no control character.
func CleanPath(p string) (string, error) {
	if err := controlChar(p); err != nil {
		return "", err
	}
	c := strings.Trim(path.Clean("/"+p), "/")
	if c == "" || c != strings.Trim(p, "/") {
		return "", fmt.Errorf("bad path %q: want a relative path like notes/todo.md", p)
	}
	for _, seg := range strings.Split(c, "/") {
		if strings.HasPrefix(seg, ".") || len(seg) > 255 || strings.Contains(seg, "\\") {
			return "", fmt.Errorf("bad path %q: segment %q", p, seg)
		}
	}
	return c, nil
}

// controlChar refuses a path holding a control character (U+0000 to
// U+001F, U+007F). OPFS takes any of them in a name, a newline too, but
// such a name would break the lines of list_files' output and could not
// be told apart from its neighbours there.
func controlChar(p string) error {
	for i := range len(p) {
		if c := p[i]; c < 0x20 || c == 0x7f {
			return fmt.Errorf("bad path %q: a control character (U+%04X) at byte %d", p, c, i)
		}
	}
	return nil
}

// EvalResult is what the JavaScript evaluator returns.
type EvalResult struct {
	Console []string // console.log/info/warn/error lines, in order
	Result  string   // the completion value, as text
	Error   string   // the exception thrown, if any
}

// Evaluator runs JavaScript code in isolation (the browser's is a
// dedicated Worker, terminated after timeout or on ctx's end).
type Evaluator func(ctx context.Context, code string, timeout time.Duration) (EvalResult, error)

// Workspace is a file tree with the tools of the playground; it implements
// [engine.Environment]. Tool output streams one line per fragment delta.
// A Workspace is safe for concurrent use.
type Workspace struct {
	FS FS

	Pace      Pace             // nil: no waiting between lines
	Now       func() time.Time // message timestamps; nil = time.Now
	LineDelay time.Duration    // between two output lines (count_lines waits twice as long)

	Eval        Evaluator     // run_js; nil: the tool is not offered
	EvalTimeout time.Duration // run_js's time limit; 0 = 3 s
	// Subagent, when set, offers the subagent tool: it runs a child
	// session for one call and forwards its messages (see [Workspace.RunSubagent]).
	Subagent func(ctx context.Context, req engine.ToolRequest, task string, emit func(omni.Message)) (string, error)
	// OnChange is called after a tool changed the file system.
	OnChange func()
}

// NewWorkspace returns the demo workspace in memory: a small Go project.
func NewWorkspace(pace Pace) *Workspace {
	return &Workspace{FS: NewMemFS(demoFiles), Pace: pace, LineDelay: 90 * time.Millisecond}
}

func schema(props string, required ...string) omni.RawJSON {
	req := ""
	if len(required) > 0 {
		b, _ := json.Marshal(required)
		req = `,"required":` + string(b)
	}
	return omni.RawJSON(`{"type":"object","properties":{` + props + `}` + req + `,"additionalProperties":false}`)
}

// Tools describes the workspace's tools for tool_list_ready, each with a
// JSON Schema of its parameters.
func (w *Workspace) Tools() []omni.ToolDefinition {
	pathProp := `"path":{"type":"string","description":"workspace path, such as notes/todo.md"}`
	tools := []omni.ToolDefinition{
		{Name: ToolListFiles, Description: "List the files of the workspace under a directory, with their sizes.",
			Parameters: schema(`"dir":{"type":"string","description":"directory; empty for the root"}`)},
		{Name: ToolCountLines, Description: "Count the lines of workspace files; all files when paths is empty.",
			Parameters: schema(`"paths":{"type":"array","items":{"type":"string"}}`)},
		{Name: ToolReadFile, Description: "Read a workspace file.", Parameters: schema(pathProp, "path")},
		{Name: ToolWriteFile, Description: "Create or replace a workspace file.",
			Parameters: schema(pathProp+`,"content":{"type":"string"}`, "path", "content")},
		{Name: ToolEditFile, Description: "Replace the one exact occurrence of old_text in a workspace file with new_text.",
			Parameters: schema(pathProp+`,"old_text":{"type":"string","minLength":1},"new_text":{"type":"string"}`, "path", "old_text", "new_text")},
		{Name: ToolDeleteFile, Description: "Delete a workspace file.", Parameters: schema(pathProp, "path")},
	}
	if w.Eval != nil {
		tools = append(tools, omni.ToolDefinition{Name: ToolRunJS,
			Description: "Run JavaScript in a sandboxed Worker (no DOM, no network) with a time limit; returns console output and the value of the last expression.",
			Parameters:  schema(`"code":{"type":"string"}`, "code")})
	}
	if w.Subagent != nil {
		tools = append(tools, omni.ToolDefinition{Name: ToolSubagent,
			Description: "Hand a task to a subagent with the workspace tools; returns its final answer.",
			Parameters:  schema(`"task":{"type":"string"}`, "task")})
	}
	return tools
}

// Paths returns the workspace's file paths, sorted (none when the file
// system fails).
func (w *Workspace) Paths() []string {
	fs, _ := w.FS.List(context.Background())
	ps := make([]string, len(fs))
	for i, f := range fs {
		ps[i] = f.Path
	}
	return ps
}

// ExecuteTool runs one approved call. Bad arguments get a failed
// tool_call_output "[invalid arguments] <tool>: …" naming what was wrong;
// an unknown tool is an error, which the engine turns into one.
func (w *Workspace) ExecuteTool(ctx context.Context, req engine.ToolRequest, emit func(omni.Message)) error {
	call := req.ToolCall.Payload
	var out []string
	delay := w.LineDelay
	var args struct {
		Dir     string   `json:"dir"`
		Paths   []string `json:"paths"`
		Path    string   `json:"path"`
		Content *string  `json:"content"`
		OldText string   `json:"old_text"`
		NewText *string  `json:"new_text"`
		Code    *string  `json:"code"`
		Task    string   `json:"task"`
	}
	if bad := decodeArgs(call.Arguments, &args); bad != "" {
		// As a tool() of the JavaScript API says it: the model reads
		// what was wrong and can call again.
		(&producer{now: w.Now, emit: emit}).send(omni.ToolOutput(call.ToolCallID, "[invalid arguments] "+call.Name+": "+bad, omni.StatusFailed))
		return nil
	}
	var err error
	final := omni.StatusCompleted
	switch call.Name {
	case ToolListFiles:
		out, err = w.listFiles(ctx, args.Dir)
	case ToolCountLines:
		out, err = w.countLines(ctx, args.Paths)
		delay *= 2
	case ToolReadFile, ToolWriteFile, ToolEditFile, ToolDeleteFile:
		out, err = w.fileTool(ctx, call.Name, args.Path, args.Content, args.OldText, args.NewText)
	case ToolRunJS:
		switch {
		case w.Eval == nil:
			return errors.New("run_js: this workspace runs no JavaScript (the tool is not offered here)")
		case args.Code == nil:
			return errors.New("run_js: want {\"code\": string}")
		}
		out, final, err = w.runJS(ctx, *args.Code)
	case ToolSubagent:
		switch {
		case w.Subagent == nil:
			return errors.New("subagent: this workspace has no subagents (the tool is not offered here)")
		case strings.TrimSpace(args.Task) == "":
			return errors.New("subagent: want {\"task\": non-empty string}")
		}
		answer, err := w.Subagent(ctx, req, args.Task, emit)
		if err != nil {
			return err
		}
		st := omni.StatusCompleted
		if ctx.Err() != nil {
			st, answer = omni.StatusAborted, answer+"\n"+interrupted
		}
		(&producer{now: w.Now, emit: emit}).send(omni.ToolOutput(call.ToolCallID, answer, st))
		return nil
	default:
		return fmt.Errorf("unknown tool %q", call.Name)
	}
	if err != nil {
		return err
	}
	p := &producer{pace: w.Pace, now: w.Now, emit: emit, delay: delay}
	id := call.ToolCallID
	if ctx.Err() != nil {
		p.send(omni.ToolOutput(id, interrupted, omni.StatusAborted))
		return nil
	}
	p.fragmentEnding(ctx, omni.PartialToolCallOutput, id, "", joinLines(out, maxOutputDeltas), interruptedTail, func(body, stop string) omni.Message {
		return omni.ToolOutput(id, body, stop)
	}, final)
	return nil
}

func (w *Workspace) changed() {
	if w.OnChange != nil {
		w.OnChange()
	}
}

func (w *Workspace) fileTool(ctx context.Context, name, p string, content *string, oldText string, newText *string) ([]string, error) {
	p, err := CleanPath(p)
	if err != nil {
		return nil, err
	}
	switch name {
	case ToolReadFile:
		body, err := w.FS.Read(ctx, p)
		if err != nil {
			return nil, err
		}
		if body == "" {
			return []string{"(empty file)\n"}, nil
		}
		return lines(body), nil
	case ToolWriteFile:
		if content == nil {
			return nil, errors.New("write_file: want {\"path\": string, \"content\": string}")
		}
		if err := w.FS.Write(ctx, p, *content); err != nil {
			return nil, err
		}
		w.changed()
		return []string{fmt.Sprintf("wrote %d bytes to %s\n", len(*content), p)}, nil
	case ToolEditFile:
		if oldText == "" || newText == nil {
			return nil, errors.New("edit_file: want {\"path\", \"old_text\" (non-empty), \"new_text\"}")
		}
		body, err := w.FS.Read(ctx, p)
		if err != nil {
			return nil, err
		}
		switch n := strings.Count(body, oldText); n {
		case 0:
			return nil, fmt.Errorf("edit_file: old_text does not occur in %s", p)
		case 1:
		default:
			return nil, fmt.Errorf("edit_file: old_text occurs %d times in %s; give more context so it occurs once", n, p)
		}
		if err := w.FS.Write(ctx, p, strings.Replace(body, oldText, *newText, 1)); err != nil {
			return nil, err
		}
		w.changed()
		return []string{fmt.Sprintf("edited %s: replaced %d bytes with %d\n", p, len(oldText), len(*newText))}, nil
	default:
		if err := w.FS.Delete(ctx, p); err != nil {
			return nil, err
		}
		w.changed()
		return []string{"deleted " + p + "\n"}, nil
	}
}

// runJS evaluates code: its console lines, then its result or the error it
// threw, and the output's stop_reason: "failed" when the code threw.
func (w *Workspace) runJS(ctx context.Context, code string) ([]string, string, error) {
	timeout := w.EvalTimeout
	if timeout <= 0 {
		timeout = 3 * time.Second
	}
	res, err := w.Eval(ctx, code, timeout)
	if err != nil {
		return nil, "", err
	}
	var out []string
	for _, l := range res.Console {
		out = append(out, l+"\n")
	}
	if res.Error != "" {
		return append(out, "error: "+res.Error+"\n"), omni.StatusFailed, nil
	}
	return append(out, "result: "+res.Result+"\n"), omni.StatusCompleted, nil
}

// joinLines joins consecutive lines so that there are at most n chunks,
// each of whole lines.
func joinLines(lines []string, n int) []string {
	if len(lines) <= n {
		return lines
	}
	per := (len(lines) + n - 1) / n
	out := make([]string, 0, n)
	for i := 0; i < len(lines); i += per {
		out = append(out, strings.Join(lines[i:min(i+per, len(lines))], ""))
	}
	return out
}

// interruptedTail is the line an aborted tool appends to what it streamed.
func interruptedTail(body string) string {
	if body != "" && !strings.HasSuffix(body, "\n") {
		return "\n" + interrupted
	}
	return interrupted
}

// decodeArgs decodes a call's arguments into dst: "" when they fit, else
// what was wrong. Empty arguments are {}; anything but a JSON object is
// refused, as every provider's function calling sends one.
func decodeArgs(raw string, dst any) string {
	raw = strings.Trim(raw, " \t\n\r") // JSON's whitespace, as JSON.parse in tool()
	if raw == "" {
		return ""
	}
	if raw[0] == '{' && nesting(raw) > maxArgumentDepth {
		return "the arguments nest deeper than " + strconv.Itoa(maxArgumentDepth) + " levels"
	}
	if !json.Valid([]byte(raw)) {
		var v any
		return "the arguments are not JSON (" + strings.TrimPrefix(json.Unmarshal([]byte(raw), &v).Error(), "json: ") + ")"
	}
	if raw[0] != '{' {
		return "$: want object, got " + jsonKind(raw[0])
	}
	err := json.Unmarshal([]byte(raw), dst)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return "$." + te.Field + ": want " + goKind(te.Type) + ", got " + strings.Replace(te.Value, "bool", "boolean", 1)
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// maxArgumentDepth is how deep a call's arguments may nest their arrays
// and objects, as in a tool() of the JavaScript API.
const maxArgumentDepth = 1000

// nesting is how deep a JSON text nests its arrays and objects.
func nesting(json string) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(json); i++ {
		switch c := json[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

// jsonKind names the kind of the JSON value that starts with b.
func jsonKind(b byte) string {
	switch b {
	case '[':
		return "an array"
	case '"':
		return "string"
	case 'n':
		return "null"
	case 't', 'f':
		return "boolean"
	}
	return "number"
}

// goKind names the JSON kind a field of type t takes.
func goKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Struct, reflect.Map:
		return "object"
	}
	return "number"
}

func (w *Workspace) listFiles(ctx context.Context, dir string) ([]string, error) {
	if err := controlChar(dir); err != nil {
		return nil, err
	}
	dir = strings.Trim(path.Clean("/"+dir), "/")
	fs, err := w.FS.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range fs {
		if dir == "" || strings.HasPrefix(f.Path, dir+"/") {
			out = append(out, fmt.Sprintf("%-28s %5d B\n", f.Path, f.Size))
		}
	}
	out = append(out, fmt.Sprintf("%d files\n", len(out)))
	return out, nil
}

func (w *Workspace) countLines(ctx context.Context, paths []string) ([]string, error) {
	if len(paths) == 0 {
		paths = w.Paths()
	}
	var out []string
	total := 0
	for _, p := range paths {
		// As read_file checks its path: "../x" and "" were handed to the
		// file system (OPFS refused them with a TypeError naming no path).
		p, err := CleanPath(p)
		if err != nil {
			return nil, err
		}
		body, err := w.FS.Read(ctx, p)
		if err != nil {
			return nil, err
		}
		n := strings.Count(body, "\n")
		if body != "" && !strings.HasSuffix(body, "\n") {
			n++
		}
		total += n
		out = append(out, fmt.Sprintf("%-28s %5d\n", p, n))
	}
	out = append(out, fmt.Sprintf("%-28s %5d\n", "total", total))
	return out, nil
}
