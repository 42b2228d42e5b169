package conformance

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// spec is a validated scenario, ready to run.
type spec struct {
	session   sessionSpec
	llm       map[string][]*llmRequest
	tools     map[string]*toolScript
	approvals map[string]*approval
	runs      []*runSpec
	expect    expectSpec
}

type sessionSpec struct {
	meta     omni.Message
	toolList []omni.ToolDefinition // nil: no tool list
	config   configSpec
}

// configSpec keeps which keys the scenario set: absent means the engine's
// default, and an explicit 0 differs from absent for some keys.
type configSpec struct {
	maxTurns, maxReconnects, backoffMs, backoffMaxMs, compactionMaxReconnects *int
	compaction                                                                *engine.Compaction
}

type llmRequest struct {
	steps   []*step
	outcome engine.Outcome
}

// step is one script step: exactly one field is set.
type step struct {
	emit     *omni.Message
	wait     *condition
	subagent *subagentSpec
}

type subagentSpec struct {
	session sessionSpec
	prompt  string
}

type toolScript struct {
	steps []*step
	throw *string // non-nil: ExecuteTool fails with this message
}

type approval struct {
	decision     string // allow | deny | forbidden | throw (other values are passed on)
	message      string // throw
	expectOrigin []string
}

type runSpec struct {
	input        []omni.Message
	noApprover   bool
	preAborted   bool
	hooks        []*hook
	expectStream []any
	checkStream  bool
}

type hook struct {
	on *trigger
	do []*action
}

type expectSpec struct {
	llmInputs      map[string][]llmInput // nil: not checked
	trace          map[string][][]any
	sleepsMs       *[]int64
	approverCalls  *[]string
	toolExecutions *[]string
	newLLMTokens   map[string][]omni.TokenCounts
}

// llmInput is one recorded (or expected) StreamGenerate call.
type llmInput struct {
	context  int
	messages []any
}

func compile(r *rawScenario) (*spec, error) {
	sp := &spec{
		llm:       map[string][]*llmRequest{},
		tools:     map[string]*toolScript{},
		approvals: map[string]*approval{},
	}
	var err error
	if sp.session, err = compileSession(r.Session.Meta, r.Session.ToolList, r.Session.Config); err != nil {
		return nil, fmt.Errorf("session.%w", err)
	}
	for id, reqs := range r.LLM {
		for i, rq := range reqs {
			c, err := compileLLMRequest(rq)
			if err != nil {
				return nil, fmt.Errorf("llm.%s[%d].%w", id, i, err)
			}
			sp.llm[id] = append(sp.llm[id], c)
		}
	}
	for id, t := range r.Tools {
		if sp.tools[id], err = compileTool(t); err != nil {
			return nil, fmt.Errorf("tools.%s.%w", id, err)
		}
	}
	for id, a := range r.Approvals {
		if a.Decision == "" {
			return nil, fmt.Errorf("approvals.%s.decision: missing", id)
		}
		sp.approvals[id] = &approval{decision: a.Decision, message: a.Message, expectOrigin: a.ExpectOrigin}
	}
	if len(r.Runs) == 0 {
		return nil, errors.New("runs: at least one run is required")
	}
	for i, rr := range r.Runs {
		run, err := compileRun(rr)
		if err != nil {
			return nil, fmt.Errorf("runs[%d].%w", i, err)
		}
		sp.runs = append(sp.runs, run)
	}
	if sp.expect, err = compileExpect(r.Expect); err != nil {
		return nil, fmt.Errorf("expect.%w", err)
	}
	return sp, nil
}

func compileSession(meta, toolList json.RawMessage, cfg *rawConfig) (sessionSpec, error) {
	var ss sessionSpec
	var err error
	if ss.meta, err = decodeMeta(meta); err != nil {
		return ss, fmt.Errorf("meta: %w", err)
	}
	if ss.toolList, err = decodeToolList(toolList); err != nil {
		return ss, fmt.Errorf("tool_list: %w", err)
	}
	if cfg == nil {
		return ss, nil
	}
	ss.config = configSpec{
		maxTurns: cfg.MaxTurns, maxReconnects: cfg.MaxReconnects,
		backoffMs: cfg.ReconnectBackoffMs, backoffMaxMs: cfg.ReconnectBackoffMaxMs,
		compactionMaxReconnects: cfg.CompactionMaxReconnects,
	}
	if c := cfg.Compaction; c != nil {
		if c.Mode != omni.ModeSummarize && c.Mode != omni.ModeDiscard {
			return ss, fmt.Errorf("config.compaction.mode: want summarize or discard, got %q", c.Mode)
		}
		cc := &engine.Compaction{Mode: c.Mode, Prompt: c.Prompt}
		if c.MaxContextLength != nil {
			cc.MaxContextLength = *c.MaxContextLength
		}
		if c.MaxSessionTurns != nil {
			cc.MaxSessionTurns = *c.MaxSessionTurns
		}
		ss.config.compaction = cc
	}
	return ss, nil
}

// apply maps the scenario's config onto cfg. The Go Config reads 0 as "the
// default", so an explicit scenario 0 for a retry count or a backoff number
// becomes -1 (none / zero wait); absent keys stay 0 (the ENGINE.md §2
// defaults); max_turns ≤ 0 means no cap on both sides.
func (c configSpec) apply(cfg *engine.Config) {
	if c.maxTurns != nil {
		cfg.MaxTurns = *c.maxTurns
	}
	cfg.MaxReconnects = explicitZero(c.maxReconnects)
	cfg.ReconnectBackoffMs = explicitZero(c.backoffMs)
	cfg.ReconnectBackoffMaxMs = explicitZero(c.backoffMaxMs)
	cfg.CompactionMaxReconnects = explicitZero(c.compactionMaxReconnects)
	if c.compaction != nil {
		cc := *c.compaction
		cfg.Compaction = &cc
	}
}

func explicitZero(p *int) int {
	switch {
	case p == nil:
		return 0
	case *p == 0:
		return -1
	}
	return *p
}

func compileLLMRequest(r rawLLMRequest) (*llmRequest, error) {
	req := &llmRequest{outcome: engine.Outcome{Status: omni.StatusCompleted}}
	if o := r.Outcome; o != nil {
		if o.Status == "" {
			return nil, errors.New("outcome.status: missing")
		}
		req.outcome = engine.Outcome{Status: engine.Status(o.Status), ErrorMessage: o.ErrorMessage, Permanent: o.Permanent}
	}
	var err error
	if req.steps, err = compileSteps(r.Steps, false); err != nil {
		return nil, err
	}
	return req, nil
}

func compileTool(r rawTool) (*toolScript, error) {
	t := &toolScript{}
	var err error
	if t.steps, err = compileSteps(r.Steps, true); err != nil {
		return nil, err
	}
	if len(r.End) == 0 {
		return t, nil
	}
	var ret string
	if err := json.Unmarshal(r.End, &ret); err == nil {
		if ret != "return" {
			return nil, fmt.Errorf(`end: want "return" or {"throw": …}, got %q`, ret)
		}
		return t, nil
	}
	var th struct {
		Throw *string `json:"throw"`
	}
	if err := strict(r.End, &th); err != nil || th.Throw == nil {
		return nil, fmt.Errorf(`end: want "return" or {"throw": "message"}, got %s`, compact(r.End))
	}
	t.throw = th.Throw
	return t, nil
}

func compileSteps(raws []rawStep, tool bool) ([]*step, error) {
	var out []*step
	for i, r := range raws {
		s, err := compileStep(r, tool)
		if err != nil {
			return nil, fmt.Errorf("steps[%d].%w", i, err)
		}
		out = append(out, s)
	}
	return out, nil
}

func compileStep(r rawStep, tool bool) (*step, error) {
	n := 0
	s := &step{}
	if len(r.Emit) > 0 {
		n++
		m, err := decodeMessage(r.Emit)
		if err != nil {
			return nil, fmt.Errorf("emit: %w", err)
		}
		s.emit = &m
	}
	if len(r.Wait) > 0 {
		n++
		c, err := parseCondition(r.Wait)
		if err != nil {
			return nil, fmt.Errorf("wait: %w", err)
		}
		s.wait = c
	}
	if r.Subagent != nil {
		n++
		if !tool {
			return nil, errors.New("subagent: only tool scripts run subagents")
		}
		ss, err := compileSession(r.Subagent.Meta, r.Subagent.ToolList, r.Subagent.Config)
		if err != nil {
			return nil, fmt.Errorf("subagent.%w", err)
		}
		if r.Subagent.Prompt == nil {
			return nil, errors.New("subagent.prompt: missing")
		}
		s.subagent = &subagentSpec{session: ss, prompt: *r.Subagent.Prompt}
	}
	if n != 1 {
		return nil, errors.New("step: want exactly one of emit, wait, subagent")
	}
	return s, nil
}

func compileRun(r rawRun) (*runSpec, error) {
	run := &runSpec{preAborted: r.PreAborted}
	switch r.Approver {
	case "", "scripted":
	case "none":
		run.noApprover = true
	default:
		return nil, fmt.Errorf("approver: want scripted or none, got %q", r.Approver)
	}
	var err error
	if run.input, err = decodeMessages(r.Input); err != nil {
		return nil, fmt.Errorf("input%w", err)
	}
	for i, h := range r.Hooks {
		on, err := parseTrigger(h.On)
		if err != nil {
			return nil, fmt.Errorf("hooks[%d].on: %w", i, err)
		}
		hk := &hook{on: on}
		if len(h.Do) == 0 {
			return nil, fmt.Errorf("hooks[%d].do: no actions", i)
		}
		for j, d := range h.Do {
			a, err := parseAction(d)
			if err != nil {
				return nil, fmt.Errorf("hooks[%d].do[%d]: %w", i, j, err)
			}
			hk.do = append(hk.do, a)
		}
		run.hooks = append(run.hooks, hk)
	}
	if r.ExpectStream != nil {
		run.checkStream = true
		if run.expectStream, err = expectedMessages(*r.ExpectStream); err != nil {
			return nil, fmt.Errorf("expect_stream%w", err)
		}
	}
	return run, nil
}

func compileExpect(r rawExpect) (expectSpec, error) {
	e := expectSpec{
		sleepsMs: r.SleepsMs, approverCalls: r.ApproverCalls,
		toolExecutions: r.ToolExecutions, newLLMTokens: r.NewLLMTokens,
	}
	if r.LLMInputs != nil {
		e.llmInputs = map[string][]llmInput{}
		for id, ins := range r.LLMInputs {
			e.llmInputs[id] = []llmInput{}
			for i, in := range ins {
				if in.Context < 1 {
					return e, fmt.Errorf("llm_inputs.%s[%d].context: want ≥ 1", id, i)
				}
				msgs, err := expectedMessages(in.Messages)
				if err != nil {
					return e, fmt.Errorf("llm_inputs.%s[%d].messages%w", id, i, err)
				}
				e.llmInputs[id] = append(e.llmInputs[id], llmInput{context: in.Context, messages: msgs})
			}
		}
	}
	if r.Trace != nil {
		e.trace = map[string][][]any{}
		for id, files := range r.Trace {
			e.trace[id] = [][]any{}
			for i, f := range files {
				recs, err := expectedMessages(f)
				if err != nil {
					return e, fmt.Errorf("trace.%s[%d]%w", id, i, err)
				}
				e.trace[id] = append(e.trace[id], recs)
			}
		}
	}
	return e, nil
}
