package playground

import (
	"context"
	"errors"
	"strings"

	"github.com/floehq/floe/engine"
	"github.com/floehq/floe/engine/omni"
)

// ThinkingLevels are the reasoning efforts the settings offer, in order:
// "" (the default: the request names none) and the named levels every
// provider adapter reads alike (provider.ParseThinking), "max" being
// OpenAI's "xhigh".
var ThinkingLevels = []string{"", "minimal", "low", "medium", "high", "max"}

// CheckThinkingLevel refuses a reasoning effort the settings do not offer
// ([ThinkingLevels]), naming it and the ones they do.
func CheckThinkingLevel(level string) error {
	for _, l := range ThinkingLevels {
		if level == l {
			return nil
		}
	}
	return errors.New("Settings: the reasoning effort " + quote(level) + " is not one the page offers; choose " + thinkingChoices() + ".")
}

// thinkingChoices lists ThinkingLevels as the settings name them.
func thinkingChoices() string {
	names := make([]string, len(ThinkingLevels))
	for i, l := range ThinkingLevels {
		names[i] = l
		if l == "" {
			names[i] = "default"
		}
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// thinkingLLM sends its level with every request that names none: a
// subagent's child runs without run options of its own, so its model
// carries the parent session's level. The child compacts never, so no
// compaction request gets it.
type thinkingLLM struct {
	engine.LLM
	level string
}

func (l thinkingLLM) StreamGenerate(ctx context.Context, p engine.GenerateParams, emit func(omni.Message)) engine.Outcome {
	if p.ThinkingLevel == "" {
		p.ThinkingLevel = l.level
	}
	return l.LLM.StreamGenerate(ctx, p, emit)
}
