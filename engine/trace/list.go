package trace

import (
	"bytes"
	"context"
	"errors"
	"unicode/utf8"

	"github.com/floehq/floe/engine/omni"
)

// Summary describes one stored session for a session list.
type Summary struct {
	SessionInfo
	// FirstPrompt is the text of the session's first user text record, cut
	// to MaxPromptBytes; "" when there is none.
	FirstPrompt string
	// Source is the source of the session_meta its first record is
	// ([MetaSource]): omni.SourceSubagent for a subagent's child session,
	// which a session list shows under its parent or not at all.
	Source string
}

// MaxPromptBytes caps Summary.FirstPrompt (cut at a rune boundary).
const MaxPromptBytes = 1000

// Summarizer is an optional ability of a [Store]: Summaries lists every
// session with its first prompt in one pass (a store that keeps them, or
// one where a session's lookup scans them all). [List] uses it when present.
type Summarizer interface {
	Summaries(ctx context.Context) ([]Summary, error)
}

// List lists the sessions of store, most recent activity first (then by
// id). Without [Summarizer] it reads each session's lowest-index file for
// its first prompt; a session deleted meanwhile is left out.
func List(ctx context.Context, store Store) ([]Summary, error) {
	if native && store == nil {
		return nil, nilStore("list", "")
	}
	var out []Summary
	if s, ok := store.(Summarizer); ok {
		var err error
		if out, err = s.Summaries(ctx); err != nil {
			return nil, err
		}
	} else {
		infos, err := store.Sessions(ctx)
		if err != nil {
			return nil, err
		}
		for _, info := range infos {
			sum, err := summarize(ctx, store, info)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			out = append(out, sum)
		}
	}
	heapSort(len(out), func(i, j int) bool {
		a, b := &out[i], &out[j]
		if !a.LastActivity.Equal(b.LastActivity) {
			return a.LastActivity.After(b.LastActivity)
		}
		return a.ID < b.ID
	}, func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out, nil
}

func summarize(ctx context.Context, store Store, info SessionInfo) (Summary, error) {
	files, err := store.Files(ctx, info.ID)
	if err != nil {
		return Summary{}, err
	}
	data, err := store.ReadFile(ctx, info.ID, files[0].Index)
	if err != nil {
		return Summary{}, err
	}
	prompt, _ := FirstPrompt(data)
	return Summary{SessionInfo: info, FirstPrompt: prompt, Source: MetaSource(data)}, nil
}

// MetaSource returns the source of the session_meta that is the first
// record of data, the start of a session's first Trace file:
// omni.SourceSubagent for a subagent's child session (ENGINE.md E-15.6),
// omni.SourceSchedule, or "" for a session of its own and when the first
// record is no session_meta.
func MetaSource(data []byte) string {
	var line []byte
	for len(line) == 0 && len(data) > 0 {
		line, data, _ = bytes.Cut(data, []byte{'\n'})
		line = trimJS(line)
	}
	if !bytes.Contains(line, []byte(`"source"`)) {
		return ""
	}
	m, err := omni.Decode(line)
	if err != nil || m.Type != omni.TypeSessionMeta {
		return ""
	}
	return m.Payload.Source()
}

// FirstPrompt returns the text of the first complete user text record in
// data (Trace lines), cut to MaxPromptBytes, and whether there is one.
// Lines that do not decode are skipped.
func FirstPrompt(data []byte) (string, bool) {
	for line := range bytes.SplitSeq(data, []byte{'\n'}) {
		line = trimJS(line)
		if len(line) == 0 || !bytes.Contains(line, []byte(`"user"`)) {
			continue
		}
		m, err := omni.Decode(line)
		if err == nil && m.Type == omni.TypeModelMsg && m.Payload.Type == omni.Text && m.Payload.Role == omni.RoleUser {
			return cut(m.Payload.Text, MaxPromptBytes), true
		}
	}
	return "", false
}

// cut returns s cut to at most n bytes at a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
