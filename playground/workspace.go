package playground

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// Tool names of the demo workspace.
const (
	ToolListFiles  = "list_files"
	ToolCountLines = "count_lines"
)

// interrupted is the line a tool appends when it is aborted (ENGINE.md E-6.8).
const interrupted = "[interrupted: tool aborted by user]"

// Workspace is an in-memory file tree with two tools, list_files and
// count_lines; it implements [engine.Environment]. Tool output streams one
// line per fragment delta. A Workspace is safe for concurrent use: its files
// are never modified.
type Workspace struct {
	Files map[string]string // path → content

	Pace      Pace             // nil: no waiting between lines
	Now       func() time.Time // message timestamps; nil = time.Now
	LineDelay time.Duration    // between two output lines (count_lines waits twice as long)
}

// NewWorkspace returns the demo workspace: a small Go project.
func NewWorkspace(pace Pace) *Workspace {
	return &Workspace{Files: demoFiles, Pace: pace, LineDelay: 90 * time.Millisecond}
}

// Tools describes the workspace's tools for tool_list_ready.
func (w *Workspace) Tools() []omni.ToolDefinition {
	return []omni.ToolDefinition{
		{
			Name:        ToolListFiles,
			Description: "List the files of the workspace under a directory, with their sizes.",
			Parameters:  omni.RawJSON(`{"type":"object","properties":{"dir":{"type":"string","description":"directory; empty for the root"}}}`),
		},
		{
			Name:        ToolCountLines,
			Description: "Count the lines of workspace files; all files when paths is empty.",
			Parameters:  omni.RawJSON(`{"type":"object","properties":{"paths":{"type":"array","items":{"type":"string"}}}}`),
		},
	}
}

// Paths returns the workspace's file paths, sorted.
func (w *Workspace) Paths() []string {
	ps := make([]string, 0, len(w.Files))
	for p := range w.Files {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}

// ExecuteTool runs one approved call. Bad arguments or an unknown tool are
// an error, which the engine turns into a failed tool_call_output.
func (w *Workspace) ExecuteTool(ctx context.Context, req engine.ToolRequest, emit func(omni.Message)) error {
	call := req.ToolCall.Payload
	var out []string
	delay := w.LineDelay
	switch call.Name {
	case ToolListFiles:
		var args struct {
			Dir string `json:"dir"`
		}
		if err := decodeArgs(call.Arguments, &args); err != nil {
			return err
		}
		out = w.listFiles(args.Dir)
	case ToolCountLines:
		var args struct {
			Paths []string `json:"paths"`
		}
		if err := decodeArgs(call.Arguments, &args); err != nil {
			return err
		}
		var err error
		if out, err = w.countLines(args.Paths); err != nil {
			return err
		}
		delay *= 2
	default:
		return fmt.Errorf("unknown tool %q", call.Name)
	}
	p := &producer{pace: w.Pace, now: w.Now, emit: emit, delay: delay}
	id := call.ToolCallID
	if ctx.Err() != nil {
		p.send(omni.ToolOutput(id, interrupted, omni.StatusAborted))
		return nil
	}
	p.fragment(ctx, omni.PartialToolCallOutput, id, "", out, interruptedTail, func(body, stop string) omni.Message {
		return omni.ToolOutput(id, body, stop)
	})
	return nil
}

// interruptedTail is the line an aborted tool appends to what it streamed.
func interruptedTail(body string) string {
	if body != "" && !strings.HasSuffix(body, "\n") {
		return "\n" + interrupted
	}
	return interrupted
}

func decodeArgs(raw string, dst any) error {
	if strings.TrimSpace(raw) == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(raw), dst); err != nil {
		return fmt.Errorf("arguments: %w", err)
	}
	return nil
}

func (w *Workspace) listFiles(dir string) []string {
	dir = strings.Trim(path.Clean("/"+dir), "/")
	var out []string
	for _, p := range w.Paths() {
		if dir == "" || strings.HasPrefix(p, dir+"/") {
			out = append(out, fmt.Sprintf("%-28s %5d B\n", p, len(w.Files[p])))
		}
	}
	out = append(out, fmt.Sprintf("%d files\n", len(out)))
	return out
}

func (w *Workspace) countLines(paths []string) ([]string, error) {
	if len(paths) == 0 {
		paths = w.Paths()
	}
	var out []string
	total := 0
	for _, p := range paths {
		body, ok := w.Files[p]
		if !ok {
			return nil, fmt.Errorf("no such file: %q", p)
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
