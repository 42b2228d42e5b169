package playground

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/floehq/floe/engine/omni"
)

// input is what one request brought the model.
type input struct {
	prompt      string // the user's texts of the request, joined (a carried-over prompt first)
	latest      string // the last of them: the one a command is read from
	steering    []string
	steerImages []int // the images that came with each steering message
	outputs     []output
	interrupted bool  // carry-over of an interrupted turn
	chars       int64 // size of everything sent
}

type output struct {
	id, name, body, stop string
}

const (
	steerOpen  = "[user_steering]"
	steerClose = "[/user_steering]"
)

func readInput(msgs []omni.Message, names map[string]string) input {
	var in input
	afterSteer := false // the messages since the last steering text are its images
	for _, msg := range msgs {
		p := msg.Payload
		in.chars += int64(len(p.Body()))
		if p.Type == omni.ImageURL && afterSteer {
			in.steerImages[len(in.steerImages)-1]++
			continue
		}
		afterSteer = false
		switch {
		case p.Type == omni.Text && p.Role == omni.RoleUser:
			t := strings.TrimSpace(p.Text)
			switch {
			case strings.HasPrefix(t, steerOpen):
				t = strings.TrimSuffix(strings.TrimPrefix(t, steerOpen), steerClose)
				in.steering = append(in.steering, strings.TrimSpace(t))
				in.steerImages = append(in.steerImages, 0)
				afterSteer = true
			case strings.HasPrefix(t, "[context_summary]"):
				// a compaction's summary: the new context's first input
			case strings.HasPrefix(t, "[turn_aborted]"), strings.HasPrefix(t, "[turn_retried]"), strings.HasPrefix(t, "<turn_aborted>"):
				in.interrupted = true
			case t != "":
				if in.prompt != "" {
					in.prompt += "\n"
				}
				in.prompt += t
				in.latest = t
			}
		case p.Type == omni.ToolCallOutput:
			in.outputs = append(in.outputs, output{id: p.ToolCallID, name: names[p.ToolCallID], body: p.Output, stop: p.StopReason})
		}
	}
	return in
}

// planSummary answers tool outputs with what they say.
func planSummary(in input) []step {
	var think, text []string
	for _, o := range in.outputs {
		name := o.name
		if name == "" {
			name = "a tool"
		}
		switch {
		case o.stop == omni.StatusAborted && strings.Contains(o.body, "denied"):
			think = append(think, name+" was denied.")
			text = append(text, fmt.Sprintf("- You denied `%s`, so I did without it.", name))
		case o.stop == omni.StatusAborted:
			think = append(think, name+" was interrupted.")
			text = append(text, fmt.Sprintf("- `%s` was interrupted before it finished.", name))
		case o.stop != omni.StatusCompleted:
			think = append(think, name+" failed.")
			text = append(text, fmt.Sprintf("- `%s` failed: %s", name, firstLine(o.body)))
		case o.name == ToolReadFile:
			fence := "```"
			for strings.Contains(o.body, fence) {
				fence += "`"
			}
			think = append(think, "read_file returned the file.")
			text = append(text, "- `read_file` returned:\n\n"+fence+"\n"+strings.TrimSuffix(o.body, "\n")+"\n"+fence)
		case o.name == ToolListFiles:
			n, biggest, size := scanTable(o.body, "files")
			think = append(think, fmt.Sprintf("list_files reports %d files.", n))
			text = append(text, fmt.Sprintf("- The workspace holds %d files; the biggest is `%s` (%d bytes).", n, biggest, size))
		case o.name == ToolCountLines:
			total, longest, lines := scanTable(o.body, "total")
			think = append(think, fmt.Sprintf("count_lines counts %d lines.", total))
			text = append(text, fmt.Sprintf("- They add up to %d lines; the longest is `%s` with %d lines.", total, longest, lines))
		default:
			text = append(text, fmt.Sprintf("- `%s` answered: %s", name, lastLine(o.body)))
		}
	}
	body := "Here is what I found:\n" + strings.Join(text, "\n")
	if len(in.steering) > 0 {
		body += "\n\n" + steeringReply(in)
	}
	return []step{
		{kind: omni.Thinking, body: strings.Join(think, " ") + " Time to sum up."},
		{kind: omni.Text, body: body},
	}
}

func steeringReply(in input) string {
	parts := make([]string, len(in.steering))
	for i, t := range in.steering {
		n := in.steerImages[i]
		switch {
		case n == 0:
			parts[i] = "“" + t + "”"
		case t == "":
			parts[i] = plural(n, "an image", strconv.Itoa(n)+" images")
		default:
			parts[i] = "“" + t + "” with " + plural(n, "an image", strconv.Itoa(n)+" images")
		}
	}
	return "You added: " + strings.Join(parts, ", ") + ". Noted — I took it into account."
}

// scanTable reads the "name  number [B]" lines of a tool output: it returns
// the number on the line labelled last (or the count of rows when the label
// is a suffix such as "6 files") and the row with the largest number.
func scanTable(body, last string) (total int, top string, topN int) {
	for _, l := range strings.Split(strings.TrimSpace(body), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		if f[1] == last {
			total, _ = strconv.Atoi(f[0])
			continue
		}
		if f[0] == last {
			total, _ = strconv.Atoi(f[1])
			continue
		}
		if n, err := strconv.Atoi(f[1]); err == nil && n > topN {
			top, topN = f[0], n
		}
	}
	return total, top, topN
}

// firstLine is the first line of s: a failure's message, before the stack
// trace under it, cut by quoted.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return quoted(s)
}

// lastLine is the last line of s (a tool's result), cut by quoted.
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return quoted(s)
}

// quoteMax is how many characters of a tool's output line the model's
// summary quotes: the card shows the output whole, and a line of a
// quarter of a million characters streamed as an answer held the page
// for seconds.
const quoteMax = 200

// quoted is s, or its first quoteMax characters and "…".
func quoted(s string) string {
	n := 0
	for i := range s {
		if n == quoteMax {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// mentioned returns the workspace paths the prompt names, by path or by base
// name, in workspace order.
func (w *Workspace) mentioned(prompt string) []string {
	var out []string
	for _, p := range w.Paths() {
		base := p[strings.LastIndexByte(p, '/')+1:]
		if strings.Contains(prompt, p) || strings.Contains(prompt, base) {
			out = append(out, p)
		}
	}
	return out
}
