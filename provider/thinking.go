package provider

import (
	"errors"

	"github.com/floehq/floe/internal/errf"
)

// Thinking is a run's thinking level as every adapter reads it, so that a
// level one adapter accepts, every adapter accepts.
type Thinking struct {
	// Effort is "" (send no thinking setting) or one of "minimal", "low",
	// "medium", "high", "max": the named level, or for a budget the
	// highest named level whose budget it reaches.
	Effort string
	// Budget is the level in tokens (Anthropic's budget_tokens); 0 with
	// Effort "".
	Budget int
}

// MinThinkingBudget is the smallest budget a numeric level may name.
const MinThinkingBudget = 1024

// thinkingLevels are the named levels and their budgets, in order.
var thinkingLevels = [...]struct {
	name   string
	budget int
}{{"minimal", 1024}, {"low", 2048}, {"medium", 8192}, {"high", 16384}, {"max", 32768}}

// ParseThinking reads a thinking level: "", "none" and "off" ask for no
// thinking setting; "minimal" is 1024 tokens, "low" 2048, "medium" 8192,
// "high" 16384, "max" (or "xhigh") 32768; a decimal number of at least
// MinThinkingBudget is a budget of that many tokens. Any other level is an
// error naming api, the level and the accepted ones.
func ParseThinking(api, level string) (Thinking, error) {
	switch level {
	case "", "none", "off":
		return Thinking{}, nil
	case "xhigh":
		level = "max"
	}
	for _, l := range thinkingLevels {
		if level == l.name {
			return Thinking{Effort: l.name, Budget: l.budget}, nil
		}
	}
	n := 0
	for i := 0; i < len(level); i++ {
		c := level[i]
		if c < '0' || c > '9' {
			n = 0
			break
		}
		n = min(n*10+int(c-'0'), 1<<30) // far above any model's budget
	}
	if n < MinThinkingBudget {
		return Thinking{}, errors.New(api + ": unknown thinking level " + errf.Quote(level) + " (want none, off, minimal, low, medium, high, max or a budget of at least 1024 tokens)")
	}
	t := Thinking{Budget: n}
	for _, l := range thinkingLevels {
		if n >= l.budget {
			t.Effort = l.name
		}
	}
	return t, nil
}

// ReasoningEffort is the OpenAI reasoning effort of t ("" for none): the
// named level, with "max" as OpenAI's "xhigh".
func (t Thinking) ReasoningEffort() string {
	if t.Effort == "max" {
		return "xhigh"
	}
	return t.Effort
}
