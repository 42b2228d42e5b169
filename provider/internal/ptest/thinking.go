package ptest

// ThinkingLevel is a thinking level every adapter accepts, with what it
// sends: Effort as OpenAI's reasoning effort ("" = nothing) and Budget as
// Anthropic's budget_tokens (0 = nothing).
type ThinkingLevel struct {
	Level  string
	Effort string
	Budget int
}

// ThinkingLevels are read alike by every adapter (provider.ParseThinking).
var ThinkingLevels = []ThinkingLevel{
	{"", "", 0}, {"none", "", 0}, {"off", "", 0},
	{"minimal", "minimal", 1024}, {"low", "low", 2048}, {"medium", "medium", 8192},
	{"high", "high", 16384}, {"max", "xhigh", 32768}, {"xhigh", "xhigh", 32768},
	{"1024", "minimal", 1024}, {"5000", "low", 5000}, {"16384", "high", 16384}, {"40000", "xhigh", 40000},
}

// BadThinkingLevels fail the request in every adapter, before it is sent.
var BadThinkingLevels = []string{"ultra", "extreme", "High", " low", "1023", "12", "-5000", "1e4", "99999999abc"}

// ThinkingWant is what the error of a bad level lists.
const ThinkingWant = "(want none, off, minimal, low, medium, high, max or a budget of at least 1024 tokens)"
