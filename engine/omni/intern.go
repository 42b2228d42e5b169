package omni

// intern returns the protocol's fixed string equal to b without
// allocating, or b as a new string.
func intern(b []byte) string {
	if i := internTab.find(b); i >= 0 {
		return internTab.list[i]
	}
	return string(b)
}

// internTab holds the fixed strings intern returns.
var internTab = newStrTab([]string{
	TypeSessionMeta,
	TypeModelMsg,
	TypeEventMsg,
	Text,
	ImageURL,
	InlineData,
	Thinking,
	InlineThinking,
	ToolCall,
	ToolCallOutput,
	PartialText,
	PartialThinking,
	PartialToolCall,
	PartialToolCallOutput,
	RequestBegin,
	RequestEnd,
	ApprovalDecision,
	TokenUsage,
	CompactionBegin,
	CompactionEnd,
	Abort,
	Subagent,
	ToolListReady,
	MCPConnectBegin,
	MCPConnectEnd,
	GoalFinished,
	RoleUser,
	RoleAssistant,
	EventStart,
	EventDelta,
	EventStop,
	StatusCompleted,
	StatusFailed,
	StatusAborted,
	StatusTimeout,
	StatusMalformed,
	StatusAuth,
	DecisionAllow,
	DecisionDeny,
	DecisionForbidden,
	SenderParentAgent,
	SenderHarness,
	SenderServer,
	ReasonContext,
	ReasonTurns,
	ReasonManual,
	ModeSummarize,
	ModeDiscard,
	SourceSchedule,
	"complete",
	"blocked",
	"budget_limited",
})
