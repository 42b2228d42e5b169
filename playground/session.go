package playground

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/engine/trace"
)

// SystemPrompt is the system prompt of a playground session with the
// scripted model.
const SystemPrompt = "You are the Floe playground's scripted model. Explore the workspace with its tools, then report."

// WorkspacePrompt is the system prompt of a playground session with a real
// provider's model ([ProviderMeta]).
const WorkspacePrompt = "You are an agent working in the Floe playground: a small workspace of text files kept in the user's browser. " +
	"Use the tools to list, read, write and edit its files, run JavaScript or hand a task to a subagent when they are offered, " +
	"as the user asks; every call waits for the user's approval. Then answer briefly."

// SubagentPrompt is the system prompt of a subagent's child session with a
// real provider's model ([SubagentMeta]). A child has the file tools only,
// so the prompt offers nothing else.
const SubagentPrompt = "You are a subagent working in the Floe playground: a small workspace of text files kept in the user's browser. " +
	"Another agent handed you a task. Use the tools to list, read, write and edit the workspace's files as the task asks; " +
	"every call waits for the user's approval. Then answer briefly with what you found or did: your answer is all the other agent sees."

// Options configure a playground session; see [Open].
type Options struct {
	Pace Pace // nil: no waiting
	FS   FS   // nil: the demo files in memory
	Eval Evaluator
	// Demo, when set, is the scripted model's demo script (a subagent's
	// child model's too): its rules answer the prompts they match.
	Demo *Demo

	// LLM, when set, replaces the scripted model (a real provider); NewLLM
	// gives its fresh context after a compaction, and a subagent's child
	// session its own (with no tokens yet). Provider and Model name them,
	// as the settings do, in a child's session_meta ([SubagentMeta]).
	LLM      engine.LLM
	NewLLM   engine.LLMFactory
	Provider string
	Model    string
	// ThinkingLevel is the reasoning effort of every run of a real
	// provider's session (one of [ThinkingLevels]; "" = none named; Open
	// refuses another): the session's [Runner] sends it with each run
	// (its caller sets it, [Runner.SetThinkingLevel]), and a subagent's
	// child session's model with each of its requests.
	ThinkingLevel string

	Meta   *omni.Message    // nil: a new session_meta
	Resume *engine.Snapshot // a resumed session's state (engine/trace.Resume)
	// CallIDs are the tool call ids of the resumed session's Trace: the
	// scripted model numbers its calls past them. A request cut off by a
	// reload is in neither the history nor the carry-over (its calls are
	// dropped, its input carried over), so only the Trace has its calls.
	CallIDs    []string
	Trace      engine.TraceSink
	Compaction *engine.Compaction // nil: manual compaction only, in summarize mode

	ReconnectBackoffMs int // 0: the engine's default
	OnDiagnostic       func(engine.Diagnostic)
	OnSubagent         func(childID, callID string) // a subagent starts for callID
	OnChange           func()                       // a tool changed the workspace

	// SubagentTrace, when set, gives the Trace a subagent's child session
	// writes, under the child's own id (ENGINE.md E-15.6); the parent's
	// Trace points at it (E-15.3). nil: a child is not stored.
	SubagentTrace func(childID string) engine.TraceSink
}

// NewSession returns an engine session wired to a fresh scripted [Model]
// and the demo [Workspace] in memory, both paced by pace (nil: no
// waiting). It has no Trace. diag, if non-nil, receives the engine's
// diagnostics.
func NewSession(pace Pace, diag func(engine.Diagnostic)) (*engine.Session, error) {
	s, _, err := Open(Options{Pace: pace, OnDiagnostic: diag})
	return s, err
}

// Open returns an engine session with the playground's workspace tools, the
// subagent tool and, when o.Eval is set, run_js; the scripted model unless
// o.LLM is set.
func Open(o Options) (*engine.Session, *Workspace, error) {
	if err := CheckThinkingLevel(o.ThinkingLevel); err != nil {
		return nil, nil, err
	}
	fs := o.FS
	if fs == nil {
		fs = NewMemFS(demoFiles)
	}
	ws := &Workspace{FS: fs, Pace: o.Pace, LineDelay: 90 * time.Millisecond, Eval: o.Eval, OnChange: o.OnChange}
	ws.Subagent = subagentRunner(fs, o)
	meta := Meta(time.Now())
	if o.Meta != nil {
		meta = *o.Meta
	}
	llm, newLLM := o.LLM, o.NewLLM
	if llm == nil {
		// The scripted model's session tokens go on from the resumed
		// session's and, after a compaction, from the engine's (E-13.10),
		// as a provider adapter's do.
		newLLM = func(session omni.TokenCounts) engine.LLM {
			m := NewModel(ws, o.Pace)
			m.session, m.Demo = session, o.Demo
			for _, id := range o.CallIDs {
				m.seeID(id)
			}
			return m
		}
		var seed omni.TokenCounts
		if o.Resume != nil {
			seed = o.Resume.SessionTokens
		}
		llm = newLLM(seed)
	}
	comp := o.Compaction
	if comp == nil {
		comp = &engine.Compaction{Mode: omni.ModeSummarize}
	}
	if comp.Prompt == "" {
		comp.Prompt = CompactionPrompt
	}
	s, err := engine.New(engine.Config{
		Meta:               meta,
		LLM:                llm,
		NewLLM:             newLLM,
		Environment:        ws,
		ToolList:           ws.Tools(),
		MaxTurns:           8,
		ReconnectBackoffMs: o.ReconnectBackoffMs,
		Compaction:         comp,
		Trace:              o.Trace,
		Resume:             o.Resume,
		OnDiagnostic:       o.OnDiagnostic,
	})
	return s, ws, err
}

// subagentRunner runs one child session per subagent call over the same
// file system with the file tools (no run_js, no further subagents): the
// scripted model or, when the session has a real provider's, a fresh
// context of that provider's model. The child's messages are forwarded with
// its id in origin (ENGINE.md §15), its approvals asked through the
// parent's approver. It returns the child's last answer.
func subagentRunner(fs FS, o Options) func(ctx context.Context, req engine.ToolRequest, task string, emit func(omni.Message)) (string, error) {
	return func(ctx context.Context, req engine.ToolRequest, task string, emit func(omni.Message)) (string, error) {
		cws := &Workspace{FS: fs, Pace: o.Pace, LineDelay: 90 * time.Millisecond, OnChange: o.OnChange}
		meta, llm, err := childModel(cws, o)
		if err != nil {
			return "", err
		}
		id := meta.Payload.SessionID()
		var sink engine.TraceSink
		if o.SubagentTrace != nil {
			sink = o.SubagentTrace(id)
		}
		h, err := engine.NewSubagent(engine.Config{
			Meta: meta, LLM: llm, Environment: cws, ToolList: cws.Tools(), MaxTurns: 4,
			Trace: sink, OnDiagnostic: o.OnDiagnostic,
		})
		if err != nil {
			return "", err
		}
		if o.OnSubagent != nil {
			o.OnSubagent(id, req.ToolCall.Payload.ToolCallID)
		}
		answer, stopped := "", ""
		for m := range h.Run(ctx, task, req.Approve) {
			emit(m)
			if p := m.Payload; len(m.Origin) == 1 && m.Type == omni.TypeModelMsg && !m.IsPartial() && p.Type == omni.Text && p.Role == omni.RoleAssistant {
				answer = p.Text
			} else if len(m.Origin) == 1 && p.Type == omni.Abort {
				stopped = p.Reason()
			}
		}
		if stopped != "" && ctx.Err() == nil {
			// The child stopped on its own (its model refused it, its
			// requests kept failing): the parent's model is told why.
			return "", errors.New("the subagent stopped: " + stopped)
		}
		if strings.TrimSpace(answer) == "" {
			answer = "(the subagent gave no answer)"
		}
		return answer, nil
	}
}

// childModel returns a subagent child's session_meta and model: the
// scripted model over cws, or a fresh context of the session's real
// provider (o.NewLLM with no tokens).
func childModel(cws *Workspace, o Options) (omni.Message, engine.LLM, error) {
	if o.LLM == nil {
		meta := Meta(time.Now())
		meta.Payload.Edit().Source = omni.SourceSubagent
		m := NewModel(cws, o.Pace)
		m.Demo = o.Demo
		return meta, m, nil
	}
	if o.NewLLM == nil {
		return omni.Message{}, nil, fmt.Errorf("subagent: the %s model gives no fresh context for a child session (Options.NewLLM is nil)", o.Provider)
	}
	llm := o.NewLLM(omni.TokenCounts{})
	if llm == nil {
		return omni.Message{}, nil, fmt.Errorf("subagent: the %s model gave no context for a child session", o.Provider)
	}
	if o.ThinkingLevel != "" {
		llm = thinkingLLM{LLM: llm, level: o.ThinkingLevel}
	}
	return SubagentMeta(time.Now(), o.Provider, o.Model), llm, nil
}

// ProviderMeta returns the session_meta of a playground session created at
// now whose model is a real provider's (provider and model as the
// settings name them): prompt as its system prompt ([WorkspacePrompt]
// when it is blank), its context window unknown (0). The prompt is the
// session's for good: a resume reads it from the session_meta at the head
// of the session's last Trace file (ENGINE.md E-17.1), which a session
// writes only when a file starts (E-14.1), so a prompt changed
// afterwards would hold until the next reload only.
func ProviderMeta(now time.Time, provider, model, prompt string) omni.Message {
	if strings.TrimSpace(prompt) == "" {
		prompt = WorkspacePrompt
	}
	m := Meta(now)
	r := m.Payload.Edit()
	r.Provider, r.ModelID, r.SystemPrompt, r.ModelContextWindow = provider, model, prompt, omni.RawJSON("0")
	return m
}

// SubagentMeta returns the session_meta of a subagent's child session
// created at now whose model is a real provider's: as [ProviderMeta], with
// [SubagentPrompt] as its system prompt and source "subagent".
func SubagentMeta(now time.Time, provider, model string) omni.Message {
	m := ProviderMeta(now, provider, model, SubagentPrompt)
	m.Payload.Edit().Source = omni.SourceSubagent
	return m
}

// DeleteSession deletes the stored session id from store, with the child
// sessions of its subagents ([Children]). When r (nil: none) drives that
// session, r is closed first ([Runner.Close]): its run in flight is
// stopped and its end awaited, so that nothing is written to the session's
// Trace after the delete. Give the [trace.Batcher] the session writes
// through as store: it writes what it holds before deleting.
func DeleteSession(ctx context.Context, store trace.Store, id string, r *Runner) error {
	if r != nil && r.Session().ID() == id {
		if err := r.Close(ctx); err != nil {
			return fmt.Errorf("stop the session's run: %w", err)
		}
	}
	return trace.DeleteTree(ctx, store, id)
}

// Meta returns a session_meta for a playground session created at now, with
// a session id in the reference format (PROTOCOL.md §2). The id's random
// part only has to tell this origin's sessions apart, so it is not from
// crypto/rand.
func Meta(now time.Time) omni.Message {
	now = now.UTC()
	return omni.Message{
		Timestamp: now.Format(omni.TimestampLayout),
		Type:      omni.TypeSessionMeta,
		Payload: omni.Payload{
			Rest: &omni.Rest{SessionID: "session-" + now.Format("2006-01-02-15-04-05") + fmt.Sprintf("-%08x", rand.Uint32()), Provider: "floe-playground", ModelID: "scripted", ModelContextWindow: omni.RawJSON("32000"), SystemPrompt: SystemPrompt, AgentState: "memory", Workspace: "opfs://workspace"},
		},
	}
}

// ResumeMeta returns the session_meta a stored session goes on with once
// resumed, real when its model is now a real provider's: meta, but a
// session the scripted model made (its system prompt [SystemPrompt]) gets
// [WorkspacePrompt], as a session made with a real model does: the
// scripted model's prompt told a real one it was the playground's
// scripted model. The Trace keeps the session_meta it was made with.
func ResumeMeta(meta omni.Message, real bool) omni.Message {
	if real && meta.Payload.SystemPrompt() == SystemPrompt {
		meta.Payload.Edit().SystemPrompt = WorkspacePrompt
	}
	return meta
}
